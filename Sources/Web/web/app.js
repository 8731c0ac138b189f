// tv web: the screens, drawn from /api/ (the commands' --json) and /api/events (Server-Sent
// Events). Plain JavaScript, no framework; every string from the network is set as text, never
// as HTML. Routes are the hash: #/dashboard, #/timeline, #/flow/ID, #/flow/ID/packet/N, …
"use strict";

const main = () => document.getElementById("main");

// ---- small helpers -------------------------------------------------------------------------

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

const SVG = "http://www.w3.org/2000/svg";
function s(tag, attrs) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
  return el;
}

// Bumped at every route: an answer that arrives after its screen was left is dropped (it never
// resolves), so it cannot draw over the screen now shown.
let routeToken = 0;

async function api(path, options) {
  const token = routeToken;
  let answer = null, failure = null;
  try { answer = await fetchJSON(path, options); } catch (e) { failure = e; }
  if (token !== routeToken) return new Promise(() => {});
  if (failure) throw failure;
  return answer;
}

async function fetchJSON(path, options) {
  const response = await fetch(path, Object.assign({ credentials: "same-origin", headers: { Accept: "application/json" } }, options || {}));
  let body = null;
  try { body = await response.json(); } catch (e) { body = null; }
  if (!response.ok) {
    const error = new Error((body && body.error) || ("tv web answered " + response.status + "."));
    error.status = response.status;
    throw error;
  }
  return body;
}

function post(path, object) {
  return api(path, { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json" },
                     body: JSON.stringify(object || {}) });
}

function bytes(n) {
  if (n === null || n === undefined) return "–";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n, i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return (i === 0 ? String(v) : v.toFixed(v < 10 ? 1 : 0)) + " " + units[i];
}

function duration(micros) {
  if (micros === null || micros === undefined) return "open";
  const ms = micros / 1000;
  if (ms < 1000) return Math.round(ms) + " ms";
  const sec = ms / 1000;
  if (sec < 60) return sec.toFixed(1) + " s";
  if (sec < 3600) return Math.floor(sec / 60) + " min " + Math.round(sec % 60) + " s";
  return Math.floor(sec / 3600) + " h " + Math.round((sec % 3600) / 60) + " min";
}

function utc(micros, withDate) {
  const d = new Date(micros / 1000);
  const iso = d.toISOString();
  return (withDate ? iso.slice(0, 10) + " " : "") + iso.slice(11, 19) + (withDate ? " UTC" : "");
}

function relative(micros) {
  const sec = Math.max(0, (Date.now() - micros / 1000) / 1000);
  if (sec < 60) return Math.round(sec) + " s ago";
  if (sec < 3600) return Math.round(sec / 60) + " min ago";
  if (sec < 86400) return Math.round(sec / 3600) + " h ago";
  return utc(micros, true);
}

// The status mark: only departures from "encrypted" are named (the seed's second pass).
const STATUS_WORDS = { not_encrypted: "Not encrypted", inspected: "Inspected", kept_private: "Kept private",
                       failed: "Failed", interrupted: "Interrupted" };
function statusMark(flow) {
  const word = STATUS_WORDS[flow.status];
  if (word) return h("span", { class: "mark " + flow.status }, word);
  if (flow.failureReason) return h("span", { class: "mark" }, "Not inspected");
  return h("span", { class: "mark" }, "");
}

function flowName(flow) { return flow.host || flow.serverAddress; }
function flowWhat(flow) {
  const parts = [flow.transport.toUpperCase()];
  if (flow.alpn) parts.push(flow.alpn); else if (flow.clientTLSVersion) parts.push(flow.clientTLSVersion);
  parts.push("port " + flow.serverPort);
  // A name inferred from DNS is the name of an address: the address goes beside it (the seed's row named from DNS).
  if ((flow.hostOrigin === "dns" || flow.hostOrigin === "dns_question") && flow.serverAddress) parts.push(flow.serverAddress);
  if (flow.program && flow.program.command) parts.push(flow.program.command);
  return parts.join(" · ");
}

// FlowTerms' Direction: client_to_server is what this machine sent.
function sentWord(direction) { return direction === "client_to_server" ? "↑ Sent" : "↓ Received"; }

function errorCard(message) { return h("div", { class: "card error", role: "alert" }, message); }

function dl(pairs) {
  return h("dl", { class: "grid" }, pairs.filter(p => p).map(([k, v]) => h("div", {}, h("dt", {}, k), h("dd", {}, v))));
}

// Any JSON the API answers, as nested definition lists (settings, diagnostics, setup).
function anyValue(v) {
  if (v === null || v === undefined) return "–";
  if (Array.isArray(v)) return v.length === 0 ? "none" : h("ul", {}, v.map(x => h("li", {}, anyValue(x))));
  if (typeof v === "object") return dl(Object.entries(v).map(([k, x]) => [k, anyValue(x)]));
  if (typeof v === "boolean") return v ? "yes" : "no";
  return String(v);
}

function screen(title, ...children) {
  const m = main();
  m.replaceChildren(h("h1", {}, title), ...children.filter(c => c !== null && c !== undefined && c !== false));
  // Which route this drawing is of (tests wait for it; a late answer of a left screen is not it).
  m.dataset.drawn = location.hash || "#/dashboard";
  document.title = title + " · TunnelVision";
}

// ---- live events ---------------------------------------------------------------------------

const live = { listeners: new Set(), top: null, rates: [] };
function connectEvents() {
  const status = document.getElementById("live");
  const source = new EventSource("/api/events");
  source.addEventListener("open", () => { status.textContent = "● Live"; });
  source.addEventListener("error", () => { status.textContent = "○ Reconnecting…"; });
  source.addEventListener("flow", e => {
    const event = JSON.parse(e.data);
    for (const f of live.listeners) f("flow", event);
  });
  source.addEventListener("top", e => {
    live.top = JSON.parse(e.data);
    if (live.top.rates) {
      live.rates.push({ at: Date.now(), received: live.top.rates.received, sent: live.top.rates.sent });
      if (live.rates.length > 60) live.rates.shift();
    }
    for (const f of live.listeners) f("top", live.top);
  });
}
function onLive(f) { live.listeners.clear(); live.listeners.add(f); }

// ---- Dashboard -----------------------------------------------------------------------------

function rateChart() {
  const w = 600, hgt = 160;
  const svg = s("svg", { viewBox: `0 0 ${w} ${hgt}`, role: "img", preserveAspectRatio: "none" });
  const points = live.rates;
  const top = Math.max(1, ...points.map(p => Math.max(p.received, p.sent)));
  const line = key => points.map((p, i) => `${(i / Math.max(1, 59)) * w},${hgt - 4 - (p[key] / top) * (hgt - 8)}`).join(" ");
  svg.append(s("line", { x1: 0, y1: hgt - 1, x2: w, y2: hgt - 1, stroke: "currentColor", "stroke-opacity": 0.3 }));
  if (points.length > 1) {
    svg.append(s("polyline", { class: "received", points: line("received") }));
    svg.append(s("polyline", { class: "sent", points: line("sent") }));
  }
  const last = points[points.length - 1];
  const title = last ? `Received ${bytes(last.received)}/s, sent ${bytes(last.sent)}/s; the last ${points.length} samples, peak ${bytes(top)}/s.`
                     : "No rates yet: they come every few seconds while a session runs.";
  svg.setAttribute("aria-label", title);
  return h("figure", { class: "chart" }, svg,
    h("figcaption", { class: "legend" }, h("span", { class: "received" }, "Received per second"),
      h("span", { class: "sent" }, "Sent per second"), h("span", { class: "muted" }, last ? "peak " + bytes(top) + "/s" : "")));
}

function drawDashboard(top) {
  const parts = [];
  if (!top || top.state !== "live") {
    const word = top ? top.state : "unknown";
    const card = h("div", { class: "card", role: "status" },
      h("h2", {}, word === "failed" ? "Monitoring failed to start" : word === "starting" ? "Monitoring is starting" : "Monitoring is off"),
      top && top.reason ? h("p", {}, top.reason) : null,
      h("p", {}, word === "failed" ? "Fix what it says, then start it again with `tv run`."
                 : "Start a session with `tv run` (or `tv run --web` to serve these screens beside it); the history below stays readable."),
      h("p", {}, h("a", { href: "#/timeline" }, "Open the Timeline")));
    parts.push(card);
  } else {
    const session = top.session || {};
    parts.push(h("div", { class: "card strip", role: "status" }, h("strong", {}, "● Monitoring"),
      h("span", {}, session.modeLabel || session.mode || ""), h("span", { class: "muted" }, session.listen ? "on " + session.listen : ""),
      h("span", {}, "inspection " + (session.inspection || "unknown"))));
    parts.push(h("h2", {}, "Rates"), rateChart());
    const totals = [["Received", bytes(session.bytesFromServers || 0)], ["Sent", bytes(session.bytesFromClients || 0)],
                    ["Connections", String(session.accepted || 0)], ["Open now", String(session.openConnections || 0)]];
    parts.push(h("h2", {}, "This session"),
      h("div", { class: "tiles" }, totals.map(([k, v]) => h("div", { class: "tile" }, h("div", { class: "figure" }, v), h("div", { class: "label" }, k)))));
    parts.push(h("h2", {}, "Top talkers by host"), talkers(top.talkers || [], "host"));
    parts.push(h("h2", {}, "Top talkers by program"), talkers(top.programs || [], "program"));
  }
  screen("Dashboard", ...parts);
}

function talkers(rows, key) {
  if (rows.length === 0) return h("p", { class: "muted" }, "None yet this session.");
  return h("table", {}, h("thead", {}, h("tr", {}, h("th", {}, key === "host" ? "Host" : "Program"), h("th", { class: "num" }, "Flows"),
      h("th", { class: "num" }, "Received"), h("th", { class: "num" }, "Sent"))),
    h("tbody", {}, rows.slice(0, 10).map(r => h("tr", {}, h("td", {}, r[key] || "(unknown)"), h("td", { class: "num" }, r.flows),
      h("td", { class: "num" }, bytes(r.received)), h("td", { class: "num" }, bytes(r.sent))))));
}

async function dashboard() {
  drawDashboard(live.top);
  onLive((kind, top) => { if (kind === "top") drawDashboard(top); });
  try { live.top = await api("/api/top"); drawDashboard(live.top); } catch (e) { main().append(errorCard(e.message)); }
}

// ---- Timeline ------------------------------------------------------------------------------

const timeline = {
  preset: "", status: "", host: "",
  interval: null,    // {from, to} in seconds, absolute: picked off the axis (never re-evaluated)
  zoom: [],          // stack of {from, to} the axis covers
  rows: [], next: null, error: null, loaded: false, activity: null, focus: 0,
};

function flowParams(after) {
  const p = new URLSearchParams();
  if (timeline.interval) { p.set("from", timeline.interval.from); p.set("to", timeline.interval.to); }
  else if (timeline.preset) p.set("since", timeline.preset);
  if (timeline.status) p.set("status", timeline.status);
  if (timeline.host) p.set("host", timeline.host);
  p.set("limit", "50");
  if (after) p.set("after", after);
  return p;
}

function filtersActive() { return !!(timeline.interval || timeline.preset || timeline.status || timeline.host); }

async function loadFlows(more) {
  try {
    const page = await api("/api/flows?" + flowParams(more ? timeline.next : null));
    timeline.rows = more ? timeline.rows.concat(page.flows) : page.flows;
    timeline.next = page.nextCursor;
    timeline.error = null;
  } catch (e) {
    timeline.error = e.message;
  }
  timeline.loaded = true;
  drawRows();
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
  if (a.error) { holder.replaceChildren(errorCard(a.error)); return; }
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
      h("div", { class: "when" }, relative(flow.startTime))),
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
  timelineScreen();
}

function timelineScreen() {
  timeline.loaded = false;
  const presets = [["", "Everything"], ["15m", "Last 15 minutes"], ["1h", "Last hour"], ["1d", "Last day"], ["1w", "Last week"]];
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
  screen("Timeline", h("section", { class: "scrub", "aria-label": "Activity" }), form, h("section", { id: "flow-list", "aria-live": "polite" }));
  drawRows();
  refreshTimeline();
  onLive((kind, event) => {
    if (kind !== "flow" || !timeline.loaded) return;
    const flow = event.flow;
    const i = timeline.rows.findIndex(r => r.id === flow.id);
    if (i >= 0) { timeline.rows[i] = flow; drawRows(); return; }
    // A new flow joins the top of an unfiltered first page without a reload.
    if (event.event === "opened" && !timeline.interval && !timeline.status && !timeline.host) {
      timeline.rows.unshift(flow);
      drawRows();
    }
  });
}

// ---- Flow Inspector ------------------------------------------------------------------------

async function inspector(id) {
  screen("Connection " + id, h("p", { class: "muted" }, "Loading…"));
  onLive((kind, event) => { if (kind === "flow" && event.flow.id === Number(id) && event.event === "finished") inspector(id); });
  let detail;
  try { detail = await api("/api/flows/" + id); } catch (e) { screen("Connection " + id, errorCard(e.message)); return; }
  const f = detail.flow || detail;
  const origin = { sni: "Announced (SNI)", quic: "Announced (QUIC Initial)", connect: "Announced (CONNECT)", socks: "Announced (SOCKS5)",
                   reverse: "The reverse proxy's upstream", dns: "Inferred from DNS", dns_question: "Inferred from a DNS question",
                   none: "None seen" }[f.hostOrigin] || f.hostOrigin;
  const end = f.duration === null ? null : f.startTime + f.duration;
  const parts = [
    h("p", {}, h("a", { href: "#/timeline" }, "← Timeline")),
    dl([["Name", flowName(f) + " — " + origin], ["Address", f.serverAddress + " port " + f.serverPort + " (" + f.transport.toUpperCase() + ")"],
        ["First to last packet", utc(f.startTime, true) + " – " + (end === null ? "still open" : utc(f.lastActivityTime || end, false))],
        ["Duration", duration(f.duration)], ["Bytes", "↓ " + bytes(f.bytesDown) + " received, ↑ " + bytes(f.bytesUp) + " sent"],
        ["Packets", f.packetsDown === null && f.packetsUp === null ? "not counted (not captured)" : "↓ " + (f.packetsDown ?? "–") + " ↑ " + (f.packetsUp ?? "–")],
        ["Status", (STATUS_WORDS[f.status] || "Encrypted") + (f.failureReason ? " — " + f.failureReason : "") + (f.error ? " — " + f.error : "")],
        ["Program", f.program && f.program.command ? f.program.command + (f.program.pid ? " (pid " + f.program.pid + ")" : "") : (f.program && f.program.unknownReason) || "not known"]]),
  ];
  if (f.otherHosts && f.otherHosts.length) parts.push(h("p", { class: "muted" }, "Its address also had the names " + f.otherHosts.join(", ") + "; it could belong to any of them."));
  if (f.clientTLSVersion || f.serverTLSVersion || f.alpn || (f.clientVersions && f.clientVersions.length)) {
    parts.push(h("h2", {}, "How it was encrypted"), dl([
      ["Version chosen", (f.serverTLSVersion || f.clientTLSVersion || "not read") + (f.chosenVersionSource ? " (read from " + f.chosenVersionSource + ")" : "")],
      ["Offered versions", (f.clientVersions || []).join(", ") || "not read"],
      ["Offered protocols", (f.clientALPN || []).join(", ") || "none"],
      ["Chosen protocol", f.alpn || "none"],
      f.certificate ? ["Certificate", (f.certificate.subject || "") + " issued by " + (f.certificate.issuer || "?")] : null]));
  }
  parts.push(h("h2", {}, "Decrypted content"), h("div", { id: "content" }, h("p", { class: "muted" }, "Looking…")));
  if (detail.requests && detail.requests.length) {
    parts.push(h("h2", {}, "Requests"), h("table", {}, h("thead", {}, h("tr", {}, h("th", {}, "Method"), h("th", {}, "Path"), h("th", { class: "num" }, "Status"))),
      h("tbody", {}, detail.requests.map(x => h("tr", {}, h("td", {}, x.method || ""), h("td", {}, x.path || x.url || ""), h("td", { class: "num" }, x.status ?? x.state))))));
  }
  parts.push(h("h2", {}, "Packets"), h("div", { id: "packets" }, h("p", { class: "muted" }, "Looking…")));
  screen(flowName(f), ...parts);
  api("/api/flows/" + id + "/turns").then(t => {
    const turns = t.turns || [];
    const holder = document.getElementById("content");
    if (t.absence) { holder.replaceChildren(h("p", { "data-absence": t.absence.reason }, t.absence.sentence)); return; }
    holder.replaceChildren(h("p", {}, turns.length + (turns.length === 1 ? " turn kept. " : " turns kept. "),
      h("a", { href: "#/flow/" + id + "/content" }, "Read the conversation")));
  }).catch(e => document.getElementById("content").replaceChildren(h("p", { class: "muted" }, e.message)));
  api("/api/flows/" + id + "/packets").then(p => {
    const rows = p.packets || [];
    const holder = document.getElementById("packets");
    if (rows.length === 0) { holder.replaceChildren(h("p", { class: "muted" }, "No packets were captured for this connection (captures are made in the TUN modes).")); return; }
    holder.replaceChildren(
      p.capped ? h("p", {}, `Showing the first ${p.listed} of ${p.count} packets.`) : h("p", { class: "muted" }, `${p.count} packets.`),
      h("table", {}, h("thead", {}, h("tr", {}, h("th", {}, "#"), h("th", {}, "When"), h("th", {}, "Direction"), h("th", {}, "Meaning"), h("th", { class: "num" }, "Size"))),
        h("tbody", {}, rows.map(r => h("tr", {}, h("td", {}, h("a", { href: `#/flow/${id}/packet/${r.n}` }, r.n)),
          h("td", {}, "+" + duration(r.offsetMicros)), h("td", {}, sentWord(r.direction)),
          h("td", {}, r.meaning, r.tcpFlags ? h("span", { class: "muted" }, " " + r.tcpFlags.join(" ")) : ""), h("td", { class: "num" }, bytes(r.size)))))));
  }).catch(e => document.getElementById("packets").replaceChildren(h("p", { class: "muted" }, e.message)));
}

function hexFromPairs(hex) {
  let raw = "";
  for (let i = 0; i + 1 < hex.length; i += 2) raw += String.fromCharCode(parseInt(hex.slice(i, i + 2), 16));
  return raw;
}

// Offset, hex and ASCII, 16 bytes a line (`raw` is a string of byte values).
function hexDump(base64, rawBytes) {
  const raw = rawBytes !== undefined ? rawBytes : atob(base64);
  const lines = [];
  for (let i = 0; i < raw.length; i += 16) {
    const chunk = raw.slice(i, i + 16);
    const hex = chunk.split("").map(c => c.charCodeAt(0).toString(16).padStart(2, "0")).join(" ");
    const ascii = chunk.replace(/[^\x20-\x7e]/g, ".");
    lines.push(i.toString(16).padStart(6, "0") + "  " + hex.padEnd(48, " ") + "  " + ascii);
  }
  return lines.join("\n");
}

async function content(id) {
  const back = h("p", {}, h("a", { href: "#/flow/" + id }, "← Connection " + id));
  screen("Decrypted content of " + id, h("p", { class: "muted" }, "Loading…"));
  try {
    const t = await api("/api/flows/" + id + "/turns");
    const turns = t.turns || [];
    if (t.absence) { screen("Decrypted content of " + id, back, h("div", { class: "card", role: "status" }, t.absence.sentence)); return; }
    const http = h("section", { id: "http-view" }, h("button", { type: "button", onclick: async () => {
      try { const messages = await api("/api/flows/" + id + "/turns?http=1"); http.replaceChildren(h("h2", {}, "As HTTP messages"), anyValue(messages)); }
      catch (e) { http.replaceChildren(errorCard(e.message)); }
    } }, "Read as HTTP messages"));
    screen("Decrypted content of " + id, back, http,
      ...turns.map(turn => h("section", { class: "card" },
        h("h2", {}, sentWord(turn.direction) + " · turn " + turn.number + " · " + bytes(turn.keptBytes)
          + (turn.truncated ? " kept of " + bytes(turn.seenBytes) + " (cut; the rest of this side was not recorded)" : "")),
        h("p", {}, h("a", { href: `/api/flows/${id}/turns/${turn.number}/raw`, download: `flow-${id}-turn-${turn.number}.bin` }, "Download the whole turn")),
        turn.unreadable ? errorCard(turn.unreadable)
          : h("pre", { class: turn.text !== undefined ? "" : "hex" }, turn.text !== undefined ? turn.text : hexDump(turn.base64)))));
  } catch (e) { screen("Decrypted content of " + id, back, errorCard(e.message)); }
}

async function packet(id, n) {
  const back = h("p", {}, h("a", { href: "#/flow/" + id }, "← Connection " + id));
  screen("Packet " + n, h("p", { class: "muted" }, "Loading…"));
  try {
    const p = await api(`/api/flows/${id}/packets/${n}`);
    const said = ["absence", "snapLengthCut", "displayCap", "notIP"].filter(k => p[k]).map(k => h("p", { "data-reason": k }, p[k]));
    screen("Packet " + n + " of connection " + id, back,
      dl([["Meaning", p.meaning + (p.tcpFlags ? " (" + p.tcpFlags + ")" : "")], ["When", "+" + duration(p.offsetMicros) + " into the connection, " + utc(p.timeMicros, true)],
          ["Direction", sentWord(p.direction)], ["Size", bytes(p.size) + (p.bytesKept !== null ? ", " + bytes(p.bytesKept) + " kept" : "")],
          ["Capture", p.capture + " at byte " + p.fileOffset]]),
      h("h2", {}, "Headers"), p.headers ? anyValue(p.headers) : h("p", { class: "muted" }, "None read."),
      h("h2", {}, "Bytes"), ...said, p.hex ? h("pre", { class: "hex" }, hexDump(null, hexFromPairs(p.hex))) : null);
  } catch (e) { screen("Packet " + n, back, errorCard(e.message)); }
}

// ---- the other screens ---------------------------------------------------------------------

async function captures() {
  screen("Captures", h("p", { class: "muted" }, "Loading…"));
  try {
    const list = await api("/api/captures");
    const files = Array.isArray(list) ? list : (list.files || list.captures || []);
    let room = null;
    try { room = (await api("/api/captures/room")).said; } catch (e) { room = e.message; }
    const rows = files.map(f => h("tr", {}, h("td", {}, "capture " + f.seq, f.recording ? h("span", { class: "badge" }, " ● Recording") : ""),
      h("td", { class: "num" }, bytes(f.bytes)), h("td", { class: "hide-narrow" }, utc(f.startedMicros, true)),
      h("td", {}, f.recording ? null : h("a", { href: `/api/captures/${f.seq}/file`, download: "" }, "Download"), " ",
        f.recording ? h("span", { class: "muted" }, "being written") : h("button", { type: "button", onclick: async () => {
        if (!confirm(`Delete capture ${f.seq} (${bytes(f.bytes)}, ${f.packets} packets)? The connections stay in your history; only the raw packet bytes go, and they do not come back.`)) return;
        try { await post(`/api/captures/${f.seq}/delete`); captures(); } catch (e) { main().append(errorCard(e.message)); }
      } }, "Delete"))));
    screen("Captures",
      files.length ? h("table", {}, h("thead", {}, h("tr", {}, h("th", {}, "File"), h("th", { class: "num" }, "Size"), h("th", { class: "hide-narrow" }, "Started"), h("th", {}, ""))), h("tbody", {}, rows))
                   : h("p", {}, "No capture files. Captures are written in the TUN modes (`tv run --mode tun`, `tv exec`)."),
      h("p", {}, h("button", { type: "button", onclick: async () => { try { await post("/api/captures/rotate"); captures(); } catch (e) { main().append(errorCard(e.message)); } } }, "Start a new capture file")),
      h("h2", {}, "Room left"), h("pre", {}, room || ""));
  } catch (e) { screen("Captures", errorCard(e.message)); }
}

async function settings() {
  screen("Settings", h("p", { class: "muted" }, "Loading…"));
  try {
    const values = await api("/api/settings");
    const entries = Array.isArray(values) ? values.map(v => [v.key || v.name, v.value]) : Object.entries(values);
    const key = h("select", { id: "setting-key" }, entries.map(([k]) => h("option", { value: k }, k)));
    const value = h("input", { id: "setting-value", type: "text" });
    const said = h("p", { role: "status", id: "setting-said" });
    const form = h("form", { class: "filters", onsubmit: async e => {
      e.preventDefault();
      try { await post("/api/settings", { key: key.value, value: value.value }); said.textContent = "Saved " + key.value + "."; settings(); }
      catch (err) { said.replaceChildren(errorCard(err.message)); }
    } }, h("label", {}, "Setting", key), h("label", {}, "New value", value), h("button", { type: "submit", class: "primary" }, "Save"));
    screen("Settings", h("p", {}, "Saved first, then a running session is told. Inspection is turned on and off on the ",
      h("a", { href: "#/setup" }, "Setup"), " screen's terms (`tv inspect on|off`)."),
      h("table", {}, h("tbody", {}, entries.map(([k, v]) => h("tr", {}, h("th", {}, k), h("td", {}, anyValue(v)))))),
      h("h2", {}, "Change a setting"), form, said);
  } catch (e) { screen("Settings", errorCard(e.message)); }
}

async function setup() {
  screen("TLS inspection setup", h("p", { class: "muted" }, "Asking the trust store…"));
  try {
    const ca = await api("/api/ca");
    const st = ca.stage || {};
    const state = st.state || {};
    screen("TLS inspection setup",
      h("p", {}, "The stage is read from the trust store on every visit, never remembered. `tv setup` walks the same steps in a terminal."),
      h("div", { class: "card", role: "status", id: "setup-stage" },
        h("h2", {}, (st.number ? "Step " + st.number + ": " : "") + (st.title || "")),
        h("p", {}, h("strong", {}, state.word || "")),
        state.done ? h("p", {}, "Done: " + state.done) : null,
        state.missing ? h("p", {}, "Still missing: " + state.missing) : null,
        state.waitingFor ? h("p", {}, "Waiting for: " + state.waitingFor) : null,
        state.reason ? h("p", {}, state.reason + (state.retry ? " " + state.retry : "")) : null,
        st.meaning ? h("p", {}, st.meaning) : null,
        st.nextStep ? h("p", {}, "Next: " + st.nextStep) : null,
        st.nextCommand ? h("pre", {}, st.nextCommand) : null),
      h("h2", {}, "Inspection"), h("p", {}, "Inspection is " + (ca.inspection || "unknown") + "."),
      (ca.notices || []).length ? h("div", { class: "card" }, ca.notices.map(n => h("p", {}, n))) : null,
      h("h2", {}, "The root and the trust stores"), anyValue(Object.fromEntries(Object.entries(ca).filter(([k]) => !["stage", "notices", "inspection"].includes(k)))));
  } catch (e) { screen("TLS inspection setup", errorCard(e.message)); }
}

async function diagnostics() {
  screen("Session diagnostics", h("p", { class: "muted" }, "Loading…"));
  try {
    const d = await api("/api/diag");
    screen("Session diagnostics",
      d.nameResolution ? h("div", { class: "card error", role: "alert" }, d.nameResolution) : null,
      h("div", { class: "card", role: "status" }, h("strong", {}, d.verdict ? d.verdict.sentence : "")),
      d.running ? h("h2", {}, "Counters") : h("p", { class: "muted" }, "With no session running there is nothing to count: the counters start at zero with every session."),
      d.session ? anyValue(d.session) : null);
  } catch (e) { screen("Session diagnostics", errorCard(e.message)); }
}

async function audit(id) {
  screen("Audit", h("p", { class: "muted" }, "Loading…"));
  const token = routeToken;
  try {
    if (id) {
      const s = await api("/api/audit/sessions/" + encodeURIComponent(id));
      if (token !== routeToken) return;
      screen("Audit session " + id, h("p", {}, h("a", { href: "#/audit" }, "All sessions")), anyValue(s));
      return;
    }
    const [projects, sessions] = await Promise.all([api("/api/audit/projects"), api("/api/audit/sessions")]);
    if (token !== routeToken) return;
    const live = sessions.find(s => s.ended === null || s.ended === undefined);
    screen("Audit",
      live ? h("div", { class: "card", role: "status" }, h("strong", {}, "Recording: "), "session " + live.id + " of " + live.project + " since " + live.started) : null,
      h("h2", {}, "Projects"),
      projects.length === 0 ? h("p", { class: "muted" }, "No projects yet: `tv audit project new NAME` makes one.") : anyValue(projects),
      h("h2", {}, "Sessions"),
      sessions.length === 0 ? h("p", { class: "muted" }, "No sessions yet: `tv audit start PROJECT` or `tv run --audit PROJECT` records one.")
        : h("ul", {}, sessions.map(s => h("li", {}, h("a", { href: "#/audit/" + s.id }, "Session " + s.id), " · " + s.project + " · " + s.started + (s.ended ? " to " + s.ended : " (recording)")))));
  } catch (e) { if (token === routeToken) screen("Audit", errorCard(e.message)); }
}

// ---- routing -------------------------------------------------------------------------------

function route() {
  const parts = location.hash.replace(/^#\/?/, "").split("/").filter(Boolean);
  const name = parts[0] || "dashboard";
  for (const a of document.querySelectorAll("#tabs a")) {
    if (a.dataset.screen === (name === "flow" ? "timeline" : name)) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  }
  live.listeners.clear();
  routeToken++;
  if (name === "timeline") timelineScreen();
  else if (name === "flow" && parts[2] === "packet") packet(parts[1], parts[3]);
  else if (name === "flow" && parts[2] === "content") content(parts[1]);
  else if (name === "flow") inspector(parts[1]);
  else if (name === "captures") captures();
  else if (name === "settings") settings();
  else if (name === "setup") setup();
  else if (name === "diagnostics") diagnostics();
  else if (name === "audit") audit(parts[1]);
  else dashboard();
}

window.addEventListener("hashchange", () => { route(); main().focus({ preventScroll: true }); });
document.addEventListener("DOMContentLoaded", () => { connectEvents(); route(); });
