#!/usr/bin/env python3
"""Drives tv web's screens in headless Chromium (Debian's chromium + chromium-driver, Selenium).

Usage: web_browser.py URL OUTDIR EXPECTED_IDS PROXY TARGET CACERT
  URL           the URL `tv run --web` printed (with its token)
  OUTDIR        where the screenshots go (screen-WIDTHxHEIGHT.png)
  EXPECTED_IDS  the flow ids `tv flows --json` lists, comma-separated
  PROXY, TARGET, CACERT  a curl through the session (PROXY) to TARGET, trusting CACERT: the
                         new flow that must appear on the Timeline without a reload (any answer
                         will do: a plain http:// TARGET needs no certificate)

Prints one line per check passed; exits 1 with the reason at the first that fails.
"""
import json
import os
import subprocess
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.action_chains import ActionChains

URL, OUT, EXPECTED, PROXY, TARGET, CACERT = sys.argv[1:7]
EXPECTED_IDS = sorted(int(x) for x in EXPECTED.split(",") if x)
BASE = URL.split("/?token=")[0]
SCREENS = ["dashboard", "timeline", "flow/%d" % EXPECTED_IDS[-1], "flow/%d/content" % EXPECTED_IDS[-1],
           "captures", "settings", "setup", "diagnostics", "audit"]


def fail(message):
    print("FAIL: " + message, flush=True)
    sys.exit(1)


def wait_for(what, predicate, seconds=10):
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


def scrubbar():
    """The scrub bar's SVG and its rectangle, taken again if a redraw made the element stale."""
    for _ in range(50):
        try:
            svg = driver.find_element(By.ID, "scrubbar")
            return svg, svg.rect
        except StaleElementReferenceException:
            time.sleep(0.1)
    fail("the scrub bar kept being redrawn")


options = webdriver.ChromeOptions()
options.binary_location = "/usr/bin/chromium"
for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync"]:
    options.add_argument(flag)
options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
errors = []


def console_errors():
    for entry in driver.get_log("browser"):
        if entry["level"] == "SEVERE":
            errors.append(entry["message"])


try:
    driver.set_window_size(1280, 800)
    driver.get(URL)
    wait_for("the token traded for the cookie", lambda: "token=" not in driver.current_url)
    if driver.current_url.rstrip("/") + "/" != BASE + "/":
        fail("the address kept more than the path: " + driver.current_url)
    print("ok: the token was traded and dropped from the address", flush=True)

    # Every screen loads, at both sizes, with a heading and no error card of the page's own.
    for width, height in [(1280, 800), (390, 844)]:
        driver.set_window_size(width, height)
        for name in SCREENS:
            driver.get(BASE + "/#/" + name)
            wait_for(name + " drawn", lambda: driver.find_element(By.ID, "main").get_attribute("data-drawn") == "#/" + name)
            wait_for(name + "'s heading", lambda: driver.find_element(By.CSS_SELECTOR, "main h1").text.strip())
            wait_for(name + " loaded", lambda: "Loading" not in driver.find_element(By.TAG_NAME, "main").text, 15)
            time.sleep(0.3)
            driver.save_screenshot(os.path.join(OUT, "%s-%dx%d.png" % (name.replace("/", "-"), width, height)))
            console_errors()
        print("ok: every screen loaded at %dx%d" % (width, height), flush=True)
    driver.set_window_size(1280, 800)

    # The conversation of an inspected flow: its turns, each with its direction and a download.
    driver.get(BASE + "/#/flow/%d/content" % EXPECTED_IDS[-1])
    wait_for("the turns", lambda: len(driver.find_elements(By.CSS_SELECTOR, "main section.card")) >= 2)
    text = driver.find_element(By.TAG_NAME, "main").text
    if "↑ Sent · turn " not in text or "↓ Received · turn " not in text or "Download the whole turn" not in text:
        fail("the conversation does not show its turns: " + text[:400])
    print("ok: the conversation shows its turns", flush=True)

    # The Timeline shows the flows `tv flows --json` shows.
    driver.get(BASE + "/#/timeline")
    rows = wait_for("the rows", lambda: driver.find_elements(By.CSS_SELECTOR, "#rows li[data-flow]"))
    shown = sorted(int(r.get_attribute("data-flow")) for r in rows)
    if shown != EXPECTED_IDS:
        fail("the Timeline shows %s, tv flows --json %s" % (shown, EXPECTED_IDS))
    print("ok: the Timeline shows the flows tv flows --json shows", flush=True)

    # The scrub bar: a bar with flows filters the list to its count; an empty one to none; All undoes it.
    activity = json.loads(driver.execute_script("return JSON.stringify(timeline.activity)"))
    counts = [b["count"] or 0 for b in activity["buckets"]]
    if sum(counts) != len(EXPECTED_IDS):
        fail("the axis counts %d flows, expected %d" % (sum(counts), len(EXPECTED_IDS)))
    bars = driver.find_elements(By.CSS_SELECTOR, "#scrubbar rect.bar")
    svg = driver.find_element(By.ID, "scrubbar")
    empty = counts.index(0) if 0 in counts else None
    if empty is not None:
        svg, box = scrubbar()
        x = (empty + 0.5) / len(counts) * box["width"] - box["width"] / 2
        ActionChains(driver).move_to_element_with_offset(svg, int(x), 0).click().perform()
        wait_for("no matches after an empty bar", lambda: "No matches" in driver.find_element(By.ID, "flow-list").text)
        print("ok: an empty bar filters the list to nothing", flush=True)
        driver.find_element(By.ID, "scrub-all").click()
        wait_for("the rows back after All", lambda: len(driver.find_elements(By.CSS_SELECTOR, "#rows li[data-flow]")) == len(EXPECTED_IDS))
        print("ok: All brings every row back", flush=True)
    # A sweep across every bar bounds the list to the whole axis, snapped to whole bars; dragging
    # past the right edge is clamped to the last bar.
    svg, box = scrubbar()
    ActionChains(driver).move_to_element_with_offset(svg, int(-box["width"] / 2 + 2), 0).click_and_hold() \
        .move_by_offset(int(box["width"] / 2), 0).move_by_offset(int(box["width"] / 2 + 40), 0).release().perform()
    a = activity
    first, last = a["buckets"][0]["start"] // 1000000, (a["buckets"][-1]["start"] // 1000000) + a["widthSeconds"]
    swept = driver.execute_script("return timeline.interval")
    if swept != {"from": first, "to": last}:
        fail("the sweep bounded %s, expected %s" % (swept, {"from": first, "to": last}))
    wait_for("every row after the sweep", lambda: len(driver.find_elements(By.CSS_SELECTOR, "#rows li[data-flow]")) == len(EXPECTED_IDS))
    print("ok: a sweep across the bars bounds the list, snapped and clamped", flush=True)
    driver.find_element(By.ID, "scrub-all").click()
    # All redraws the axis: wait for the whole list, then take the new drawing (the old one is stale).
    wait_for("the whole list after All", lambda: len(driver.find_elements(By.CSS_SELECTOR, "#rows li[data-flow]")) == len(EXPECTED_IDS))
    busy = max(range(len(counts)), key=lambda i: counts[i])
    svg, box = scrubbar()
    x = (busy + 0.5) / len(counts) * box["width"] - box["width"] / 2
    ActionChains(driver).move_to_element_with_offset(svg, int(x), 0).click().perform()
    wait_for("the picked interval said", lambda: driver.find_element(By.ID, "scrub-picked").text.startswith("Showing 20"))
    wait_for("the list filtered to the bar", lambda: len(driver.find_elements(By.CSS_SELECTOR, "#rows li[data-flow]")) == counts[busy])
    # Said under the axis: the command's own notice (`tv activity --json`'s noFilter).
    if "Counts cover every connection recorded" not in driver.find_element(By.CSS_SELECTOR, ".scrub [data-notice=noFilter]").text:
        fail("the axis does not say its counts cover everything recorded")
    driver.save_screenshot(os.path.join(OUT, "timeline-picked-1280x800.png"))
    print("ok: tapping a bar filters the list to its %d flows" % counts[busy], flush=True)
    driver.find_element(By.ID, "scrub-all").click()
    wait_for("the whole list after All", lambda: len(driver.find_elements(By.CSS_SELECTOR, "#rows li[data-flow]")) == len(EXPECTED_IDS))

    # A click on a row opens its inspector.
    first = driver.find_elements(By.CSS_SELECTOR, "#rows li[data-flow]")[0]
    flow_id = first.get_attribute("data-flow")
    first.click()
    wait_for("the inspector", lambda: driver.execute_script("return location.hash") == "#/flow/" + flow_id)
    wait_for("the header grid", lambda: "First to last packet" in driver.find_element(By.TAG_NAME, "main").text)
    print("ok: a click on a row opens flow %s's inspector" % flow_id, flush=True)

    # A new flow appears live, without a reload.
    driver.get(BASE + "/#/timeline")
    wait_for("the rows", lambda: len(driver.find_elements(By.CSS_SELECTOR, "#rows li[data-flow]")) == len(EXPECTED_IDS))
    wait_for("the event stream", lambda: "Live" in driver.find_element(By.ID, "live").text)
    driver.execute_script("window.notReloaded = true")
    subprocess.run(["curl", "-sS", "-o", "/dev/null", "-x", PROXY, "--cacert", CACERT, TARGET], check=True, timeout=30)
    wait_for("the new flow on the Timeline",
             lambda: len(driver.find_elements(By.CSS_SELECTOR, "#rows li[data-flow]")) == len(EXPECTED_IDS) + 1, 15)
    if driver.execute_script("return window.notReloaded") is not True:
        fail("the page was reloaded")
    print("ok: a new flow appeared without a reload", flush=True)

    console_errors()
    if errors:
        fail("console errors: " + json.dumps(errors))
    print("ok: no console errors", flush=True)
finally:
    driver.quit()
