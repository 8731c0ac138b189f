"""What tv web's browser tests share: headless Chromium (Debian's chromium and chromium-driver,
driven by Selenium), the way a check fails, and waiting for a page being redrawn."""
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service


def fail(message):
    """Prints the failed check and ends the script with exit status 1."""
    print("FAIL: " + message, flush=True)
    sys.exit(1)


def wait_for(what, predicate, seconds=10):
    """predicate's first truthy value within `seconds` (an exception counts as not yet: the page
    is being redrawn); fails naming `what` otherwise."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            value = predicate()
            if value:
                return value
        except Exception:  # the page is being redrawn
            pass
        time.sleep(0.1)
    fail("timed out waiting for " + what)


def start_chromium():
    """Headless Chromium that keeps the page's console log (read with severe_messages)."""
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def severe_messages(driver):
    """The console's errors since the last call."""
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
