#!/usr/bin/env python3
"""tv web's live screens caught up after their tab was hidden, in headless Chromium, and two
screens drawn as the CLI says them.

Usage: web_catchup.py URL PROXY ROOT TARGET ACTIVE
  URL     the URL `tv run --web` printed (with its token)
  PROXY   tv's proxy URL (http://127.0.0.1:PORT)
  ROOT    tv's root certificate (curl's --cacert)
  TARGET  an https URL behind the proxy, fetched with HTTP/1.1 (its head's lines end in CRLF)
  FLOW    a flow of such a fetch, made before, with `tv flow`'s active line's value after it
          (`FLOW=ID:TEXT`, TEXT as `tv flow ID` prints it after "active")

A trial's Requests and Timeline tabs, hidden (another tab in front) while traffic ran, came back
saying "● Live" above rows 18 requests old, and stayed so until a reload: the stream reconnects,
and what came while it was down was never read. Here, for each screen: the tab goes behind
another, requests are made through tv, and the tab comes back; the top row must become the
newest one tv holds, and "● Live" must never be said above an older one (a MutationObserver
notes the top row each time the words change to "● Live").

Then flow FLOW's conversation shows its HTTP/1.1 head without `\\x0d` at line ends (as `tv turns`
prints it), and its inspector says "Active" with `tv flow`'s times, never "packet".

Prints one line per check passed; exits 1 with the reason at the first that fails.
"""
import json
import subprocess
import sys
import urllib.request

sys.dont_write_bytecode = True  # no __pycache__ beside the tests
from browser_common import fail, severe_messages, start_chromium, wait_for
from selenium.webdriver.common.by import By

URL, PROXY, ROOT, TARGET, FLOW = sys.argv[1:6]
BASE, TOKEN = URL.split("/?token=")
FLOW_ID, ACTIVE = FLOW.split(":", 1)


def api(path):
    """tv web's answer to GET `path`, as the page asks it (the token as a bearer)."""
    request = urllib.request.Request(BASE + path, headers={"Authorization": "Bearer " + TOKEN, "Accept": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.load(answer)


def traffic(count):
    """`count` HTTP/1.1 requests through tv, one connection each."""
    for _ in range(count):
        done = subprocess.run(["curl", "-s", "-o", "/dev/null", "--http1.1", "-x", PROXY, "--cacert", ROOT, TARGET],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=30)
        if done.returncode != 0:
            fail("curl through tv failed (%d): %s" % (done.returncode, done.stderr.decode()))


# The top row's id each time the live words become "● Live", from now on.
WATCH_LIVE = """
if (window.LIVE_WATCH) window.LIVE_WATCH.disconnect();
window.LIVE_TOPS = [];
const top = () => { const row = document.querySelector(arguments[0]); return row ? row.getAttribute(arguments[1]) : null; };
window.LIVE_WATCH = new MutationObserver(() => {
  if (document.getElementById("live").textContent === "● Live") window.LIVE_TOPS.push(top());
});
window.LIVE_WATCH.observe(document.getElementById("live"), { childList: true, characterData: true, subtree: true });
"""


def caught_up(screen, row_selector, id_attribute, newest_path, newest_key):
    """The screen at `screen` comes back from behind another tab showing what came meanwhile."""
    driver.get(BASE + "/#/" + screen)
    wait_for(screen + " live", lambda: driver.find_element(By.ID, "live").text == "● Live", 20)
    before = wait_for(screen + "'s rows", lambda: driver.find_element(By.CSS_SELECTOR, row_selector).get_attribute(id_attribute))
    driver.execute_script(WATCH_LIVE, row_selector, id_attribute)
    driver.execute_script("""window.SEEN_HIDDEN = false;
      document.addEventListener("visibilitychange", () => { if (document.hidden) window.SEEN_HIDDEN = true; });""")
    first = driver.current_window_handle
    # Behind another tab: hidden, its stream let go ("Paused while this tab is hidden").
    driver.switch_to.new_window("tab")
    driver.get("about:blank")
    traffic(3)
    # What tv holds now (the rows are written as the exchanges end, in the writer's batches).
    newest = wait_for("tv to hold the new " + screen, lambda: str(api(newest_path)[newest_key][0]["id"]) != before
                      and str(api(newest_path)[newest_key][0]["id"]), 20)
    # Shown again (the tab in front closed): the stream reconnects.
    driver.close()
    driver.switch_to.window(first)
    if not driver.execute_script("return window.SEEN_HIDDEN"):
        fail(screen + " was never hidden")
    shown = wait_for(screen + "'s top row to be the newest, " + newest,
                     lambda: driver.find_element(By.CSS_SELECTOR, row_selector).get_attribute(id_attribute) == newest and newest, 15)
    wait_for(screen + " live again", lambda: driver.find_element(By.ID, "live").text == "● Live")
    tops = driver.execute_script("return window.LIVE_TOPS")
    if not tops or any(t != newest for t in tops):
        fail("%s said ● Live above top rows %r; the newest is %s" % (screen, tops, newest))
    print("ok: %s caught up after its tab was hidden (top row %s -> %s), live only once it had" % (screen, before, shown), flush=True)


driver = start_chromium()
try:
    driver.get(URL)
    wait_for("the token taken", lambda: "token=" not in driver.current_url)
    caught_up("requests", "#requests tbody tr[data-request]", "data-request", "/api/requests?limit=1", "requests")
    caught_up("timeline", "#rows li[data-flow]", "data-flow", "/api/flows?limit=1", "flows")

    # The conversation: an HTTP/1.1 head's lines end as text, as `tv turns` prints them.
    driver.get(BASE + "/#/flow/%s/content" % FLOW_ID)
    texts = wait_for("the turns", lambda: [p.text for p in driver.find_elements(By.CSS_SELECTOR, "main section.card pre")] or None)
    head = next((t for t in texts if t.startswith("HTTP/1.1 200")), None)
    if head is None or "\\x0d" in "".join(texts) or "content-type: text/html\n" not in head.lower():
        fail("the conversation reads %r" % texts[:2])
    print("ok: the conversation shows CRLF line ends as tv turns does", flush=True)

    # The inspector: "Active", with `tv flow`'s figures; no packets for a proxied flow.
    driver.get(BASE + "/#/flow/" + FLOW_ID)
    grid = wait_for("the inspector", lambda: driver.find_element(By.CSS_SELECTOR, "main dl.grid").text)
    active = wait_for("the Active row", lambda: next(d.find_element(By.TAG_NAME, "dd").text for d in driver.find_elements(By.CSS_SELECTOR, "main dl.grid > div")
                                                      if d.find_element(By.TAG_NAME, "dt").text == "Active"))
    if active != ACTIVE or "packet" in grid.split("Bytes")[0].lower():
        fail("the inspector reads %r where tv flow says %r" % (grid, ACTIVE))
    print("ok: the inspector says Active with tv flow's times", flush=True)
    errors = severe_messages(driver)
    if errors:
        fail("console errors: %r" % errors)
    print("ok: no console errors", flush=True)
finally:
    driver.quit()
