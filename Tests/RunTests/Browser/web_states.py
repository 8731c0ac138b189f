#!/usr/bin/env python3
"""tv web's error states in headless Chromium: `tv web` alone over a data folder whose flow
database is unreadable and where no session runs.

Usage: web_states.py URL OUTDIR SENTENCE
  URL       the URL `tv web` printed (with its token)
  OUTDIR    where the screenshots go (states-NAME-WIDTHxHEIGHT.png)
  SENTENCE  what `tv flows` says on standard error about the database (without "tv: ")

At 1280x800 and 390x844: the Timeline says the command's sentence in an alert, and draws no
rows and no axis; the Dashboard shows the monitoring card (off), not a strip. Prints one line per
check passed; exits 1 with the reason at the first that fails.
"""
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the tests
from browser_common import fail, start_chromium, wait_for
from selenium.webdriver.common.by import By

URL, OUT, SENTENCE = sys.argv[1:4]
BASE = URL.split("/?token=")[0]
driver = start_chromium()
try:
    # Without the token (a fresh profile on the bare address) every screen says it is missing,
    # not its empty state ("Monitoring is off" beside a running session: a re-check).
    driver.get(BASE + "/#/dashboard")
    said = wait_for("the missing token said", lambda: driver.find_element(By.CSS_SELECTOR, "main .card.error[role=alert]").text)
    if "This page has no token" not in said or driver.find_elements(By.CSS_SELECTOR, "main .card[role=status]"):
        fail("without the token the Dashboard shows %r" % driver.find_element(By.TAG_NAME, "main").text)
    print("ok: without the token the page says so", flush=True)
    # A token of an earlier tv web (it changes at every start): the refusal, not "Monitoring is
    # off" above it (a trial).
    driver.get(BASE + "/?token=0123456789abcdef")
    wait_for("the stale token taken", lambda: "token=" not in driver.current_url)
    driver.get(BASE + "/#/dashboard")
    said = wait_for("the stale token said", lambda: driver.find_element(By.CSS_SELECTOR, "main .card.error[role=alert]").text)
    if "not this tv web's" not in said or driver.find_elements(By.CSS_SELECTOR, "main .card[role=status]"):
        fail("with a stale token the Dashboard shows %r" % driver.find_element(By.TAG_NAME, "main").text)
    print("ok: with a stale token the page says so, and nothing else", flush=True)
    driver.get(URL)
    wait_for("the token traded for the cookie", lambda: "token=" not in driver.current_url)
    for width, height in [(1280, 800), (390, 844)]:
        driver.set_window_size(width, height)
        driver.get(BASE + "/#/timeline")
        said = wait_for("the Timeline's error", lambda: driver.find_element(By.CSS_SELECTOR, "#flow-list .card.error[role=alert]").text)
        if SENTENCE not in said:
            fail("the Timeline says %r, tv flows %r" % (said, SENTENCE))
        if len(driver.find_elements(By.CSS_SELECTOR, "main .card.error")) != 1:
            fail("the sentence is said %d times" % len(driver.find_elements(By.CSS_SELECTOR, "main .card.error")))
        if driver.find_elements(By.CSS_SELECTOR, "#rows li[data-flow]") or driver.find_elements(By.ID, "scrubbar"):
            fail("the Timeline draws rows or an axis from an unreadable store")
        driver.save_screenshot(os.path.join(OUT, "states-store-unreadable-%dx%d.png" % (width, height)))
        print("ok: the Timeline says the store is unreadable at %dx%d" % (width, height), flush=True)
        driver.get(BASE + "/#/dashboard")
        card = wait_for("the monitoring card", lambda: driver.find_element(By.CSS_SELECTOR, "main .card[role=status] h2").text)
        if card != "Monitoring is off" or driver.find_elements(By.CSS_SELECTOR, ".strip"):
            fail("with no session the Dashboard shows %r" % card)
        driver.save_screenshot(os.path.join(OUT, "states-no-session-%dx%d.png" % (width, height)))
        print("ok: the Dashboard says monitoring is off at %dx%d" % (width, height), flush=True)
finally:
    driver.quit()
