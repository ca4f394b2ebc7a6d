#!/usr/bin/env python3
"""Logs in to the inspector of a mock run with --admin-token in headless Chromium (selenium + Debian's
chromium-driver): the login form, then the page with its live feed, and every URL the page requested (resources,
the live feed) as the browser saw them; prints the findings as JSON.

  inspector_login_check.py --admin-port A --admin-token T [--rows N]

With --rows, waits for N rows in the feed and reports each row's tenant and the tenant the header names.
"""
import argparse
import json

import chromium
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--admin-port", type=int, required=True)
    parser.add_argument("--admin-token", required=True)
    parser.add_argument("--rows", type=int)
    args = parser.parse_args()
    driver = chromium.start(performance_log=True)
    wait = WebDriverWait(driver, 15)
    found = {}
    try:
        driver.get(f"http://127.0.0.1:{args.admin_port}/")
        wait.until(lambda d: d.find_element(By.ID, "login").is_displayed())
        found["loginShown"] = True
        found["mainHidden"] = not driver.find_element(By.TAG_NAME, "main").is_displayed()
        driver.find_element(By.ID, "login-token").send_keys("wrong")
        driver.find_element(By.CSS_SELECTOR, "#login button").click()
        wait.until(lambda d: "wrong admin token" in d.page_source)
        found["wrongTokenRefused"] = True
        driver.get(f"http://127.0.0.1:{args.admin_port}/")
        wait.until(lambda d: d.find_element(By.ID, "login").is_displayed())
        driver.find_element(By.ID, "login-token").send_keys(args.admin_token)
        driver.find_element(By.CSS_SELECTOR, "#login button").click()
        wait.until(lambda d: d.find_element(By.ID, "feed").get_attribute("data-live") == "true")
        wait.until(lambda d: d.find_element(By.ID, "stats").text != "…")
        found["stats"] = driver.find_element(By.ID, "stats").text
        if args.rows is not None:
            wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#feed tbody tr")) >= args.rows)
            wait.until(lambda d: d.find_element(By.ID, "tenant-name").text != "")
            page = driver.execute_script(
                "return { rows: [...document.querySelectorAll('#feed tbody tr')].map(r => r.dataset.tenant),"
                " tenant: document.getElementById('tenant-name').textContent,"
                " picker: !document.getElementById('tenant').hidden }")
            found.update({"rowTenants": page["rows"], "tenantName": page["tenant"], "pickerShown": page["picker"]})
        found["cookieVisibleToScripts"] = driver.execute_script("return document.cookie")
        found["urls"] = chromium.requested_urls(driver)
        cookies = driver.get_cookies()
        found["cookie"] = [{"name": c["name"], "httpOnly": c.get("httpOnly"), "sameSite": c.get("sameSite")} for c in cookies]
    finally:
        driver.quit()
    print(json.dumps(found))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
