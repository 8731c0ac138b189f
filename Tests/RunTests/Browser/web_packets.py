#!/usr/bin/env python3
"""Drives tv web's packet list and packet detail in headless Chromium over real TUN packets.

Usage: web_packets.py URL OUTDIR CASES RECORDING
  URL     the URL `tv web` printed (with its token)
  OUTDIR  where the screenshots go (packets-NAME-WIDTHxHEIGHT.png)
  CASES   NAME=FLOW:N:REASON,… — the flow, the packet number whose detail is opened, and the
          missing-bytes reason its detail must show (`absence`, `snapLengthCut`, `displayCap`,
          or `none` for a packet drawn whole)
  RECORDING  the capture being written now (a `tv exec` still running): Captures marks it
             Recording and offers no download of it; the closed ones have theirs

For each case, at 1280x800 and 390x844: the inspector lists the flow's packets as
`tv packets FLOW --json` does (numbers, meanings), a click on packet N opens its detail, which
shows the header grid (IP and TCP) when bytes were read, the hex and ASCII dump when they were,
and the reason's sentence (`tv packet FLOW N --json`'s). Prints one line per check passed; exits
1 with the reason at the first that fails.
"""
import json
import os
import sys
import time
import urllib.request

sys.dont_write_bytecode = True  # no __pycache__ beside the tests
from browser_common import fail, severe_messages, start_chromium, wait_for
from selenium.webdriver.common.by import By

URL, OUT, CASES, RECORDING = sys.argv[1:5]
BASE = URL.split("/?token=")[0]
TOKEN = URL.split("/?token=")[1]






def api(path):
    request = urllib.request.Request(BASE + path, headers={"Authorization": "Bearer " + TOKEN})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())


cases = []
for item in CASES.split(","):
    name, spec = item.split("=")
    flow, n, reason = spec.split(":")
    cases.append((name, int(flow), int(n), reason))

driver = start_chromium()
errors = []

try:
    driver.set_window_size(1280, 800)
    driver.get(URL)
    wait_for("the token traded for the cookie", lambda: "token=" not in driver.current_url)
    for width, height in [(1280, 800), (390, 844)]:
        driver.set_window_size(width, height)
        for name, flow, n, reason in cases:
            listed = api("/api/flows/%d/packets" % flow)
            driver.get(BASE + "/#/flow/%d" % flow)
            links = wait_for("flow %d's packet list" % flow,
                             lambda: driver.find_elements(By.CSS_SELECTOR, "#packets tbody tr td:first-child a"))
            shown = [int(a.text) for a in links]
            if shown != [p["n"] for p in listed["packets"]]:
                fail("flow %d lists packets %s, tv packets --json %s" % (flow, shown[:10], [p["n"] for p in listed["packets"]][:10]))
            rows = driver.find_elements(By.CSS_SELECTOR, "#packets tbody tr")
            first = rows[0].text
            if "opened" not in first or "+0.000 s" not in first:
                fail("flow %d's first packet row is not its opening at +0.000 s: %r" % (flow, first))
            if listed["capped"] and ("Showing the first %d of %d packets." % (listed["listed"], listed["count"])) not in driver.find_element(By.ID, "packets").text:
                fail("flow %d's list is capped and does not say both numbers" % flow)
            driver.save_screenshot(os.path.join(OUT, "packets-%s-list-%dx%d.png" % (name, width, height)))
            link = [a for a in links if int(a.text) == n]
            if not link:
                fail("flow %d has no packet %d in its list" % (flow, n))
            driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", link[0])
            link[0].click()
            wait_for("packet %d of flow %d" % (n, flow), lambda: driver.find_element(By.ID, "main").get_attribute("data-drawn") == "#/flow/%d/packet/%d" % (flow, n))
            wait_for("packet %d drawn" % n, lambda: "Loading" not in driver.find_element(By.TAG_NAME, "main").text)
            detail = api("/api/flows/%d/packets/%d" % (flow, n))
            text = driver.find_element(By.TAG_NAME, "main").text
            if reason != "none":
                said = driver.find_elements(By.CSS_SELECTOR, "[data-reason=%s]" % reason)
                if not said or said[0].text != detail[reason]:
                    fail("packet %d of flow %d does not say its %s: %r" % (n, flow, reason, text[:600]))
            others = [k for k in ["absence", "snapLengthCut", "displayCap", "notIP"] if k != reason and driver.find_elements(By.CSS_SELECTOR, "[data-reason=%s]" % k)]
            if others:
                fail("packet %d of flow %d says %s as well" % (n, flow, others))
            if detail["hex"]:
                layers = [s.get_attribute("data-layer") for s in driver.find_elements(By.CSS_SELECTOR, "#packet-headers section")]
                if layers[:2] not in (["IPv4", "TCP"], ["IPv6", "TCP"]):
                    fail("packet %d of flow %d's header grid is %s" % (n, flow, layers))
                dump = driver.find_element(By.ID, "packet-hex").text.split("\n")
                kept = min(len(detail["hex"]) // 2, 2048)
                if len(dump) != (kept + 15) // 16 or not dump[0].startswith("000000  "):
                    fail("packet %d of flow %d's dump has %d lines for %d bytes" % (n, flow, len(dump), kept))
            elif driver.find_elements(By.ID, "packet-hex"):
                fail("packet %d of flow %d draws bytes it does not have" % (n, flow))
            if "When\n+" not in text or " s into the connection" not in text:
                fail("packet %d of flow %d's time is not relative to the first packet: %r" % (n, flow, text[:300]))
            driver.save_screenshot(os.path.join(OUT, "packets-%s-detail-%dx%d.png" % (name, width, height)))
            # Nothing wider than the window at 390: the dump scrolls inside its own box.
            overflow = driver.execute_script("return document.documentElement.scrollWidth > window.innerWidth + 1")
            if overflow:
                fail("packet %d of flow %d's page is wider than the %d-pixel window" % (n, flow, width))
            print("ok: %s: flow %d's packets listed, packet %d's detail says %s at %dx%d" % (name, flow, n, reason, width, height), flush=True)
            errors.extend(severe_messages(driver))
    # Captures: the file being written is marked Recording (a word and a symbol, not a colour)
    # and cannot be downloaded; every closed one can.
    driver.set_window_size(1280, 800)
    driver.get(BASE + "/#/captures")
    rows = wait_for("the capture files", lambda: driver.find_elements(By.CSS_SELECTOR, "main table:not(#decrypted-captures) tbody tr"))
    listed = [f for f in api("/api/captures") if f.get("kind") != "decrypted"]
    if len(rows) != len(listed):
        fail("Captures shows %d files, tv captures --json %d" % (len(rows), len(listed)))
    for row, file in zip(rows, listed):
        downloads = row.find_elements(By.CSS_SELECTOR, "a[href*='/file?token=']")
        if file["seq"] == int(RECORDING):
            if "● Recording" not in row.text or "being written" not in row.text or downloads:
                fail("the capture being written is not marked Recording: " + row.text)
        elif "Recording" in row.text or len(downloads) != 1:
            fail("closed capture %d: %r" % (file["seq"], row.text))
    driver.save_screenshot(os.path.join(OUT, "captures-recording-1280x800.png"))
    print("ok: the capture being written is marked Recording", flush=True)
    errors.extend(severe_messages(driver))
    if errors:
        fail("console errors: " + json.dumps(errors))
    print("ok: no console errors", flush=True)
finally:
    driver.quit()
