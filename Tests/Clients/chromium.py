"""Headless Chromium for the inspector checks: Debian's chromium and chromium-driver through selenium."""
import json

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service


def start(window="1400,1100", performance_log=False):
    """A driver for a headless Chromium; `performance_log` records every request the page makes."""
    options = Options()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", f"--window-size={window}"):
        options.add_argument(flag)
    options.binary_location = "/usr/bin/chromium"
    if performance_log:
        options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def requested_urls(driver):
    """Every URL the page asked for so far, as the browser sent it (needs `performance_log`)."""
    urls = set()
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            urls.add(message["params"]["request"]["url"])
    return sorted(urls)
