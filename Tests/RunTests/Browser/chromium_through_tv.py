#!/usr/bin/env python3
"""Headless Chromium loading a page through tv's explicit proxy, trusting tv's root (an NSS
database in a HOME of its own, as Chromium reads it on Linux).

Usage: chromium_through_tv.py PROXY ROOT URL COUNT HOME
  PROXY  tv's proxy URL (http://127.0.0.1:PORT)
  ROOT   tv's root certificate (PEM)
  URL    the page to load
  COUNT  how many times, each in a fresh profile (Chromium opens a spare connection beside the
         one it uses; it closes it at once when the other won the race, or leaves it idle)
  HOME   an empty folder: the NSS database and the profiles go there

Prints "loaded N: TEXT" per load; exits 1 with the reason at the first that fails.
"""
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the tests
from browser_common import fail
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

PROXY, ROOT, URL, COUNT, HOME = sys.argv[1:6]
nss = os.path.join(HOME, ".pki", "nssdb")
os.makedirs(nss, mode=0o700, exist_ok=True)
for command in [["certutil", "-d", "sql:" + nss, "-N", "--empty-password"],
                ["certutil", "-d", "sql:" + nss, "-A", "-t", "C,,", "-n", "tv root", "-i", ROOT]]:
    done = subprocess.run(command, capture_output=True)
    if done.returncode != 0:
        fail("%s: %s" % (" ".join(command), done.stderr.decode()))
os.environ["HOME"] = HOME
for n in range(1, int(COUNT) + 1):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--user-data-dir=" + os.path.join(HOME, "profile-%d" % n), "--proxy-server=" + PROXY,
                 "--proxy-bypass-list=<-loopback>", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-default-browser-check"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        driver.get(URL)
        text = driver.find_element(By.TAG_NAME, "body").text
        if not text:
            fail("load %d drew nothing" % n)
        print("loaded %d: %s" % (n, text), flush=True)
    finally:
        driver.quit()
