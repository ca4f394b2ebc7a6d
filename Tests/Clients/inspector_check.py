#!/usr/bin/env python3
"""Opens apns-mock's inspector in headless Chromium (selenium + Debian's chromium-driver), checks what it shows
for the pushes the caller already sent, sends one more push with httpx and waits for the live feed to show it,
saves a screenshot, and prints the findings as JSON.

  inspector_check.py --admin-port A --provider-port P --ca Certs/ca.pem --token HEX --screenshot out.png
"""
import argparse
import json
import time

import httpx
import chromium
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--admin-port", type=int, required=True)
    parser.add_argument("--provider-port", type=int, required=True)
    parser.add_argument("--ca", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--screenshot", required=True)
    args = parser.parse_args()

    driver = chromium.start()
    wait = WebDriverWait(driver, 15)
    found = {}
    try:
        driver.get(f"http://127.0.0.1:{args.admin_port}/")
        wait.until(lambda d: d.find_element(By.ID, "preview").get_attribute("data-rendered"))
        wait.until(lambda d: d.find_element(By.ID, "feed").get_attribute("data-live") == "true")
        preview = driver.find_element(By.ID, "preview")
        found["apps"] = [a.get_attribute("data-bundle") for a in preview.find_elements(By.CSS_SELECTOR, ".app")]
        found["threads"] = [s.get_attribute("data-thread") for s in preview.find_elements(By.CSS_SELECTOR, ".stack")]
        found["summaries"] = [s.text for s in preview.find_elements(By.CSS_SELECTOR, ".summary")]
        found["critical"] = [c.text for c in preview.find_elements(By.CSS_SELECTOR, ".card.critical")]
        found["silent"] = len(preview.find_elements(By.CSS_SELECTOR, ".other.silent"))
        found["notDelivered"] = [o.text for o in preview.find_elements(By.CSS_SELECTOR, ".other.not-delivered")]
        found["activities"] = [a.text for a in preview.find_elements(By.CSS_SELECTOR, ".activity")]
        found["feedRowsAtLoad"] = len(driver.find_elements(By.CSS_SELECTOR, "#feed tbody tr"))
        wait.until(lambda d: d.find_element(By.ID, "stats").text != "…")
        found["banner"] = driver.find_element(By.ID, "access-warning").text
        # A recording's whole story: the critical alert (the 4th push) and the rejected one (the 8th).
        for sequence, key in (("4", "storyCritical"), ("8", "storyRejected")):
            driver.find_element(By.CSS_SELECTOR, f'#feed tbody tr[data-sequence="{sequence}"]').click()
            wait.until(lambda d: d.find_element(By.ID, "detail").get_attribute("data-sequence") == sequence
                       and d.find_element(By.ID, "detail").text.startswith("Device:"))
            found[key] = driver.find_element(By.ID, "detail").text.split("\n")[0]
        found["scenarioState"] = driver.find_element(By.ID, "scenario-state").text
        found["scenarioText"] = driver.find_element(By.ID, "scenario-text").get_attribute("value")

        before = preview.get_attribute("data-rendered")
        driver.find_element(By.ID, "p-hide").click()
        wait.until(lambda d: d.find_element(By.ID, "preview").get_attribute("data-rendered") != before)
        found["hiddenTexts"] = [h.text for h in driver.find_elements(By.CSS_SELECTOR, "#preview .hidden-text")]
        found["hiddenBodies"] = sorted({b.text for b in driver.find_elements(By.CSS_SELECTOR, "#preview .card .body")})
        driver.find_element(By.ID, "p-hide").click()

        late_token = "fe" * 32
        with httpx.Client(http2=True, http1=False, verify=args.ca, timeout=15) as client:
            answer = client.post(f"https://localhost:{args.provider_port}/3/device/{late_token}",
                                 headers={"apns-topic": "com.example.app"}, content=b'{"aps":{"alert":"after load"}}')
        found["latePushStatus"] = answer.status_code
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            rows = driver.find_elements(By.CSS_SELECTOR, "#feed tbody tr td:nth-child(3)")
            if any(cell.get_attribute("title") == late_token for cell in rows):
                found["latePushInFeed"] = True
                break
            time.sleep(0.05)
        else:
            found["latePushInFeed"] = False
        wait.until(lambda d: "after load" in d.find_element(By.ID, "preview").text)
        found["latePushInPreview"] = True
        driver.save_screenshot(args.screenshot)
    finally:
        driver.quit()
    print(json.dumps(found))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
