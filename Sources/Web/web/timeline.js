// tv web: the Timeline (filters, keyset pages, the scrub bar) and its rows. Helpers come from
// app.js (loaded first).
"use strict";

// ---- Timeline ------------------------------------------------------------------------------

const timeline = {
  preset: "", status: "", host: "",
  interval: null,    // {from, to} in seconds, absolute: picked off the axis (never re-evaluated)
  zoom: [],          // stack of {from, to} the axis covers
  rows: [], next: null, error: null, loaded: false, activity: null, focus: 0,
  asked: 0, pending: null,   // loads are numbered: only the last one asked is drawn
};

// The Timeline's filter as /api/flows takes it, and as its route keeps it (#/timeline?…).
function timelineFilter() {
  const p = new URLSearchParams();
  if (timeline.interval) { p.set("from", timeline.interval.from); p.set("to", timeline.interval.to); }
  else if (timeline.preset) p.set("since", timeline.preset);
  if (timeline.status) p.set("status", timeline.status);
  if (timeline.host) p.set("host", timeline.host);
  return p;
}

function flowParams(after) {
  const p = timelineFilter();
  p.set("limit", "50");
  if (after) p.set("after", after);
  return p;
}

// The filter the route holds (a reload, Back or Forward, a shared link), as `timelineFilter`
// writes it. A picked interval keeps the zoomed axes that hold it; one from elsewhere zooms out.
function timelineFromRoute() {
  const q = routeQuery();
  const whole = /^[0-9]+$/;
  const interval = whole.test(q.get("from") || "") && whole.test(q.get("to") || "") ? { from: Number(q.get("from")), to: Number(q.get("to")) } : null;
  timeline.preset = interval ? "" : q.get("since") || "";
  timeline.status = q.get("status") || "";
  timeline.host = q.get("host") || "";
  timeline.interval = interval;
  while (timeline.zoom.length) {
    const axis = timeline.zoom[timeline.zoom.length - 1];
    if (interval && axis.from <= interval.from && interval.to <= axis.to) break;
    timeline.zoom.pop();
  }
}

function filtersActive() { return !!(timeline.interval || timeline.preset || timeline.status || timeline.host); }

// The Timeline's current filter as a HAR download (`tv export har` of the flows it selects).
function aimHAR() {
  const link = document.getElementById("har-download");
  if (!link) return;
  link.setAttribute("href", withToken("/api/har?" + timelineFilter()));
}

// `catchUp`: the first page read again after the live stream was down (flows that opened or
// ended meanwhile were never told: a trial's Timeline, hidden while traffic ran, kept its old
// rows under "● Live"), merged before the rows shown (`caughtUp`), so pages read with More stay.
// A load superseded by a later one answers with the later one's promise.
function loadFlows(more, catchUp) {
  timeline.pending = readFlows(more, catchUp);
  return timeline.pending;
}

async function readFlows(more, catchUp) {
  const asked = ++timeline.asked;
  aimHAR();
  if (!more && !catchUp) keepInRoute("timeline", timelineFilter(), true);
  let page = null, error = null;
  try { page = await api("/api/flows?" + flowParams(more ? timeline.next : null)); } catch (e) { error = e.message; }
  if (asked !== timeline.asked) return timeline.pending;
  if (page && catchUp && timeline.loaded) {
    Object.assign(timeline, caughtUp(timeline.rows, timeline.next, page.flows, page.nextCursor, f => f.id));
    timeline.error = null;
  } else if (page) {
    timeline.rows = more ? timeline.rows.concat(page.flows) : page.flows;
    timeline.next = page.nextCursor;
    timeline.error = null;
  } else {
    timeline.error = error;
  }
  timeline.loaded = true;
  drawRows();
  if (timeline.activity && timeline.activity.error) drawScrub();
  if (error && catchUp) throw new Error(error);
}

async function loadActivity() {
  const p = new URLSearchParams();
  const width = (document.querySelector(".scrub") || main()).clientWidth || 600;
  p.set("bars", String(Math.max(6, Math.min(120, Math.floor(width / 14)))));
  const range = timeline.zoom[timeline.zoom.length - 1];
  if (range) { p.set("from", range.from); p.set("to", range.to); }
  else if (timeline.preset) p.set("since", timeline.preset);
  try { timeline.activity = await api("/api/activity?" + p); } catch (e) { timeline.activity = { error: e.message }; }
  drawScrub();
}

// New flows redraw the activity bars, at most every 2 s (they said "Nothing is recorded yet"
// above rows that came in live, until a reload: a trial). A zoomed past stretch is left alone.
let activityReload = null;
function reloadActivitySoon() {
  if (activityReload || timeline.zoom.length) return;
  activityReload = setTimeout(() => {
    activityReload = null;
    if (document.querySelector(".scrub")) loadActivity();
  }, 2000);
}

function barRange(i) {
  const a = timeline.activity;
  const start = a.buckets[i].start / 1e6;
  return { from: Math.floor(start), to: Math.floor(start + a.widthSeconds) };
}

function pickBar(i) {
  const range = barRange(i);
  const same = timeline.interval && timeline.interval.from === range.from && timeline.interval.to === range.to;
  if (same) { timeline.interval = null; }
  else {
    timeline.interval = range;
    // Zoom in only when there is something inside to look at.
    if ((timeline.activity.buckets[i].count || 0) > 0 && timeline.activity.widthSeconds > 1) timeline.zoom.push(range);
  }
  refreshTimeline();
}

function sweep(i, j) {
  const lo = Math.min(i, j), hi = Math.max(i, j);
  timeline.interval = { from: barRange(lo).from, to: barRange(hi).to };
  refreshTimeline(false);
}

function refreshTimeline(axisToo) {
  loadFlows(false);
  if (axisToo !== false) loadActivity(); else drawScrub();
}

function drawScrub() {
  const holder = document.querySelector(".scrub");
  if (!holder) return;
  const a = timeline.activity;
  if (!a) { holder.replaceChildren(h("p", { class: "muted" }, "Loading the activity…")); return; }
  // The same sentence as the list's (an unreadable store) is said once, by the list.
  if (a.error) { holder.replaceChildren(...(a.error === timeline.error ? [] : [errorCard(a.error)])); return; }
  const notices = (a.notices || []).map(n => h("p", { class: "muted", "data-notice": n.name }, n.sentence));
  if (!a.buckets || a.buckets.length === 0) {
    // Hidden with no history: only what the command says.
    holder.replaceChildren(...notices);
    return;
  }
  const n = a.buckets.length, w = 1000, hgt = 100;
  timeline.focus = Math.min(timeline.focus, n - 1);
  const top = Math.max(1, ...a.buckets.map(b => b.count || 0));
  const svg = s("svg", { viewBox: `0 0 ${w} ${hgt}`, preserveAspectRatio: "none", tabindex: 0, role: "slider",
                         "aria-valuemin": 1, "aria-valuemax": n, "aria-valuenow": timeline.focus + 1, id: "scrubbar" });
  const bw = w / n;
  a.buckets.forEach((b, i) => {
    const c = b.count || 0;
    const bh = c === 0 ? 0 : Math.max(3, (c / top) * (hgt - 4));
    const r = barRange(i);
    const picked = timeline.interval && r.from >= timeline.interval.from && r.to <= timeline.interval.to;
    svg.append(s("rect", { class: "bar" + (picked ? " picked" : ""), x: i * bw + 1, y: hgt - bh, width: Math.max(1, bw - 2), height: bh }));
    // A bar before the oldest connection kept is not a quiet one: a dot, as `tv activity` draws `·`.
    if (b.count === null) svg.append(s("circle", { class: "removed", cx: i * bw + bw / 2, cy: hgt - 3, r: 2 }));
  });
  svg.append(s("rect", { class: "cursor", x: timeline.focus * bw + 0.5, y: 0.5, width: Math.max(1, bw - 1), height: hgt - 1, id: "scrubcursor" }));
  const indexAt = ev => {
    const box = svg.getBoundingClientRect();
    return Math.min(n - 1, Math.max(0, Math.floor(((ev.clientX - box.left) / box.width) * n)));
  };
  let down = null;
  svg.addEventListener("pointerdown", ev => { down = indexAt(ev); svg.setPointerCapture(ev.pointerId); });
  svg.addEventListener("pointerup", ev => {
    if (down === null) return;
    const up = indexAt(ev);
    const from = down;
    down = null;
    if (up === from) pickBar(from); else sweep(from, up);
  });
  svg.addEventListener("keydown", ev => {
    if (ev.key === "ArrowRight" || ev.key === "ArrowLeft") {
      timeline.focus = Math.min(n - 1, Math.max(0, timeline.focus + (ev.key === "ArrowRight" ? 1 : -1)));
      ev.preventDefault();
      drawScrub();
      document.getElementById("scrubbar").focus();
    } else if (ev.key === "Enter" || ev.key === " ") {
      ev.preventDefault();
      pickBar(timeline.focus);
    }
  });
  const f = a.buckets[Math.min(timeline.focus, n - 1)];
  const reading = `Interval ${timeline.focus + 1} of ${n}: ${f.count === null ? "not kept" : f.count + (f.count === 1 ? " connection" : " connections")} from ${utc(f.start, true)}`;
  svg.setAttribute("aria-valuetext", reading);
  svg.setAttribute("aria-label", "Connections started per " + a.widthSeconds + " s; arrows move, Enter picks");
  const picked = timeline.interval ? `Showing ${utc(timeline.interval.from * 1e6, true)} to ${utc(timeline.interval.to * 1e6, true)}` : "Showing every interval";
  holder.replaceChildren(svg,
    h("div", { class: "axis" }, h("span", {}, utc(a.from, true)), h("span", {}, reading), h("span", {}, utc(a.to, true))),
    h("div", { class: "controls" },
      h("button", { type: "button", id: "scrub-back", disabled: timeline.zoom.length === 0 && !timeline.interval, onclick: () => {
        if (timeline.zoom.length > 0) timeline.zoom.pop();
        const range = timeline.zoom[timeline.zoom.length - 1];
        timeline.interval = range ? { from: range.from, to: range.to } : null;
        refreshTimeline();
      } }, "Back"),
      h("button", { type: "button", id: "scrub-all", disabled: timeline.zoom.length === 0 && !timeline.interval, onclick: () => {
        timeline.zoom = []; timeline.interval = null; refreshTimeline();
      } }, "All"),
      h("span", { role: "status", id: "scrub-picked" }, picked)),
    ...notices);
}

function flowRow(flow) {
  const open = () => { location.hash = "#/flow/" + flow.id; };
  return h("li", { class: "row", "data-flow": flow.id, onclick: open },
    h("div", {}, statusMark(flow)),
    h("div", {},
      h("a", { class: "host", href: "#/flow/" + flow.id }, flowName(flow)),
      h("div", { class: "what" }, flowWhat(flow)),
      h("div", { class: "when", "data-since": flow.startTime }, relative(flow.startTime))),
    h("div", { class: "moved" }, "↓ " + bytes(flow.bytesDown), h("br"), "↑ " + bytes(flow.bytesUp), h("br"), duration(flow.duration)));
}

function drawRows() {
  const holder = document.getElementById("flow-list");
  if (!holder) return;
  const parts = [];
  if (!timeline.loaded) parts.push(h("p", { class: "muted" }, "Loading connections…"));
  else if (timeline.rows.length === 0 && timeline.error) parts.push(errorCard(timeline.error));
  else if (timeline.rows.length === 0 && !filtersActive()) parts.push(h("div", { class: "card" }, h("strong", {}, "No connections yet."),
      h("p", {}, "Start a session with `tv run`; connections appear here as they open.")));
  else if (timeline.rows.length === 0) parts.push(h("div", { class: "card" }, h("strong", {}, "No matches."),
      h("p", {}, "Nothing recorded matches these filters. "), h("button", { type: "button", onclick: clearFilters }, "Clear filters")));
  else {
    parts.push(h("ul", { class: "rows", id: "rows" }, timeline.rows.map(flowRow)));
    const foot = h("div", { class: "footer" });
    // An error while paginating goes to the footer: a list already drawn is never covered.
    if (timeline.error) foot.append(errorCard(timeline.error));
    if (timeline.next) foot.append(h("button", { type: "button", id: "more", onclick: () => loadFlows(true) }, "More"));
    else foot.append(h("p", { class: "muted" }, "That is every connection these filters select."));
    parts.push(foot);
  }
  holder.replaceChildren(...parts);
}

function clearFilters() {
  Object.assign(timeline, { preset: "", status: "", host: "", interval: null, zoom: [] });
  keepInRoute("timeline", timelineFilter(), true);
  timelineScreen();
}

// The "When" choices; a span the route names that is not one of them (`since=2h` in a link) is
// added, so the list is never filtered by a span the page does not show.
function presetChoices(preset) {
  const presets = [["", "Everything"], ["15m", "Last 15 minutes"], ["1h", "Last hour"], ["1d", "Last day"], ["1w", "Last week"]];
  if (!presets.some(([v]) => v === preset)) presets.push([preset, "Last " + preset]);
  return presets;
}

function timelineScreen() {
  timeline.loaded = false;
  timelineFromRoute();
  keepInRoute("timeline", timelineFilter(), false);
  const presets = presetChoices(timeline.preset);
  const statuses = [["", "Any"], ["encrypted", "Encrypted"], ["inspected", "Inspected"], ["not_encrypted", "Not encrypted"],
                    ["kept_private", "Kept private"], ["failed", "Failed"], ["interrupted", "Interrupted"]];
  const preset = h("select", { id: "preset", onchange: e => { timeline.preset = e.target.value; timeline.interval = null; timeline.zoom = []; refreshTimeline(); } },
    presets.map(([v, t]) => h("option", { value: v, selected: v === timeline.preset }, t)));
  const status = h("select", { id: "status", onchange: e => { timeline.status = e.target.value; loadFlows(false); } },
    statuses.map(([v, t]) => h("option", { value: v, selected: v === timeline.status }, t)));
  const search = h("input", { id: "search", type: "search", value: timeline.host, placeholder: "host, name or address" });
  const form = h("form", { class: "filters", role: "search", onsubmit: e => { e.preventDefault(); timeline.host = search.value.trim(); loadFlows(false); } },
    h("label", {}, "When", preset), h("label", {}, "Status", status), h("label", {}, "Search", search),
    h("button", { type: "submit" }, "Search"));
  search.addEventListener("search", () => { if (search.value === "") { timeline.host = ""; loadFlows(false); } });
  const har = h("p", { class: "har" }, checkedDownload(h("a", { id: "har-download", download: "timeline.har" }, "Download these connections' HTTP as HAR")),
    h("span", { class: "muted" }, " (what was kept of inspected connections, as `tv export har` writes it)"));
  screen("Timeline", h("section", { class: "scrub", "aria-label": "Activity" }), form, har, h("section", { id: "flow-list", "aria-live": "polite" }));
  drawRows();
  refreshTimeline();
  onLive((kind, event) => {
    if (kind === "open") {
      // The axis is read again only after a stream that was down: on the page's first open it
      // was just read, and redrawing it 2 s later cut a sweep being dragged (the browser test).
      if (live.opens > 1) reloadActivitySoon();
      return loadFlows(false, true);
    }
    if (kind !== "flow" || !timeline.loaded) return;
    const flow = event.flow;
    const i = timeline.rows.findIndex(r => r.id === flow.id);
    if (i >= 0) {
      // A shown flow whose status changed out of the Status filter leaves the list (a waiting
      // tunnel shown under "Not encrypted" stayed there once inspected: a trial).
      if (matchesStatus(flow)) timeline.rows[i] = flow; else timeline.rows.splice(i, 1);
      drawRows();
      return;
    }
    reloadActivitySoon();
    // A flow not shown joins the list, in start-time order, once it matches the filters (its
    // status is known only as it goes on: a failed flow fails after it opened). A trial's new
    // flows never appeared under a Status or Search filter.
    if (!matchesFilters(flow)) return;
    let at = timeline.rows.findIndex(r => r.startTime < flow.startTime || (r.startTime === flow.startTime && r.id < flow.id));
    if (at < 0) {
      if (timeline.next) return;  // older than the rows loaded so far: the next page has it
      at = timeline.rows.length;
    }
    timeline.rows.splice(at, 0, flow);
    drawRows();
  });
}

// Whether `flow` belongs on the Timeline as filtered now, as /api/flows would select it: the
// status, and the search text in its name, other names or addresses (case aside). A picked
// interval is in the past (picked off the axis): a live flow is never in it. "When" presets
// reach up to now, so every live flow is within them.
// The Status filter alone (an open flow that sent nothing yet matches none: its status is not
// known yet).
function matchesStatus(flow) {
  return !timeline.status || (flow.status === timeline.status && !awaitsFirstBytes(flow));
}

function matchesFilters(flow) {
  if (timeline.interval) return false;
  if (!matchesStatus(flow)) return false;
  if (timeline.host) {
    const q = timeline.host.toLowerCase();
    const texts = [flow.host, flow.serverAddress, flow.clientAddress].concat(flow.otherHosts || []);
    if (!texts.some(t => t && String(t).toLowerCase().includes(q))) return false;
  }
  return true;
}
