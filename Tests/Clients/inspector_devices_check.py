#!/usr/bin/env python3
"""Drives the inspector's device view in headless Chromium (selenium + Debian's chromium-driver): picks the device
the caller registered, takes it offline with the page's state menu, sends it a push with httpx, sees it stored,
brings the device back online, and sees what it received; prints the findings as JSON.

  inspector_devices_check.py --admin-port A --provider-port P --ca Certs/ca.pem --token HEX
"""
import argparse
import json

import httpx
import chromium
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--admin-port", type=int, required=True)
    parser.add_argument("--provider-port", type=int, required=True)
    parser.add_argument("--ca", required=True)
    parser.add_argument("--token", required=True)
    args = parser.parse_args()

    driver = chromium.start()
    wait = WebDriverWait(driver, 15)
    found = {}
    row = f'#devices tbody tr[data-token="{args.token}"]'

    # Read in one script call: the page redraws its preview and logs as pushes come, and an element found in one
    # call may be gone by the next.
    def read(selector, what="textContent"):
        return driver.execute_script(
            "return [...document.querySelectorAll(arguments[0])].map(e => arguments[1] === 'state' ? e.dataset.state : e.textContent)",
            selector, what)

    def states():
        return read("#device-log .delivery", "state")

    def choose(state):
        # The table is redrawn when a device changes: a menu found just before may be gone; find it again.
        def pick(d):
            try:
                Select(d.find_element(By.CSS_SELECTOR, row + " select")).select_by_visible_text(state)
                return True
            except StaleElementReferenceException:
                return False
        wait.until(pick)
        wait.until(lambda d: d.find_element(By.ID, "devices-note").text.endswith(f"is {state}."))

    try:
        driver.get(f"http://127.0.0.1:{args.admin_port}/")
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, row))
        wait.until(lambda d: d.find_element(By.ID, "feed").get_attribute("data-live") == "true")
        found["pageText"] = driver.find_element(By.ID, "preview-page").text
        wait.until(lambda d: d.find_element(By.ID, "stats").text != "…")
        found["banner"] = driver.find_element(By.ID, "access-warning").text
        def open_device(d):
            try:
                d.find_element(By.CSS_SELECTOR, row + " td:nth-child(2)").click()
                return True
            except StaleElementReferenceException:
                return False
        wait.until(open_device)
        wait.until(lambda d: "what it received" in d.find_element(By.ID, "preview-title").text)
        choose("offline")
        with httpx.Client(http2=True, http1=False, verify=args.ca, timeout=15) as client:
            answer = client.post(f"https://localhost:{args.provider_port}/3/device/{args.token}", headers={"apns-topic": "com.example.app"},
                                 content=b'{"aps":{"alert":{"title":"Mum","body":"Call me"},"thread-id":"family"}}')
        found["pushStatus"] = answer.status_code
        apns_id = answer.headers.get("apns-id")
        wait.until(lambda d: "storedOffline" in states())
        found["cardsWhileOffline"] = len(read("#preview .card"))
        choose("online")
        wait.until(lambda d: "deliveredFromStorage" in states())
        found["logs"] = read("#device-log .delivery")
        found["threads"] = read("#preview .thread")
        found["bodies"] = read("#preview .card .body")
        rows = driver.find_elements(By.CSS_SELECTOR, "#feed tbody tr")
        rows[0].click()
        wait.until(lambda d: "Delivery:" in d.find_element(By.ID, "detail").text)
        found["detailDelivery"] = next(line for line in driver.find_element(By.ID, "detail").text.split("\n") if line.startswith("Delivery:"))
        found["apnsId"] = apns_id
    finally:
        driver.quit()
    print(json.dumps(found))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
