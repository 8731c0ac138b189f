// tv web: the screens, drawn from /api/ (the commands' --json) and /api/events (Server-Sent
// Events). Plain JavaScript, no framework; every string from the network is set as text, never
// as HTML. Routes are the hash: #/dashboard, #/timeline, #/flow/ID, #/flow/ID/packet/N,
// #/requests, #/request/ID, #/storage, …, a filtered screen's filter after `?` (routing, below).
"use strict";

const main = () => document.getElementById("main");

// ---- small helpers -------------------------------------------------------------------------

// Text from the network drawn as the terminal draws it (TVHome's TerminalText.text): a C0
// control but LF and TAB, and DEL, as \xHH; a C1 control, a bidirectional control (U+061C,
// U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) or a line or paragraph separator as \u{202E}.
// A right-to-left override in a certificate's subject or a header reordered the rest of its
// line on the page, as a browser draws it (a trial); the terminal already escaped it.
const INVISIBLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;
function visible(text) {
  return text.replace(INVISIBLE, (c) => {
    const code = c.codePointAt(0);
    return code < 0x20 || code === 0x7f ? "\\x" + code.toString(16).padStart(2, "0") : "\\u{" + code.toString(16).toUpperCase() + "}";
  });
}

// Text's line ends as `tv turns` and `tv request` draw them (BytePreview.textLines): CRLF ends
// a line as LF does, and a lone CR is `␍` (a trial's conversation view read `\x0d` at the end
// of every line of an HTTP/1.1 head, where `tv turns` showed none).
function textLines(text) { return text.replace(/\r\n/g, "\n").replace(/\r/g, "\u240d"); }

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else el.setAttribute(k, v === true ? "" : k === "title" ? visible(String(v)) : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(visible(String(c))));
  }
  return el;
}

const SVG = "http://www.w3.org/2000/svg";
function s(tag, attrs) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
  return el;
}

// ---- the token ------------------------------------------------------------------------------
// The printed URL's `?token=` is taken once, kept in this origin's localStorage (scheme, host and
// port: no other local server can read it) and dropped from the address bar; every API request
// sends it as `Authorization: Bearer`, and the event stream and download links, which cannot
// send a header, as `?token=`. Never a cookie: a browser sends 127.0.0.1's cookies to every port
// of 127.0.0.1, so any other local server the user opened would receive it (a trial).
const TOKEN_KEY = "tv-web-token";
let tokenInMemory = "";
function takeToken() {
  const params = new URLSearchParams(location.search);
  const given = params.get("token");
  if (!given) return;
  tokenInMemory = given;
  try { localStorage.setItem(TOKEN_KEY, given); } catch (e) { /* storage off: this tab keeps it */ }
  params.delete("token");
  const rest = params.toString();
  history.replaceState(null, "", location.pathname + (rest ? "?" + rest : "") + location.hash);
}
function webToken() {
  try { return localStorage.getItem(TOKEN_KEY) || tokenInMemory; } catch (e) { return tokenInMemory; }
}
// `path` with the token in its query, for what cannot send a header.
function withToken(path) {
  return path + (path.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(webToken());
}
function authorized(headers) {
  return Object.assign({ Authorization: "Bearer " + webToken() }, headers || {});
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

// Said when tv web itself does not answer: `tv run --web` stopped with its session, or `tv web` was stopped.
const NOT_ANSWERING = "tv web is not answering: it stopped (with its session, for `tv run --web`). Start it again and open the URL it prints.";

async function fetchJSON(path, options) {
  let response;
  try {
    const given = options || {};
    response = await fetch(path, Object.assign({}, given, { credentials: "omit", headers: authorized(Object.assign({ Accept: "application/json" }, given.headers || {})) }));
  } catch (e) {
    const error = new Error(NOT_ANSWERING);
    error.status = 0;
    throw error;
  }
  let body = null;
  try { body = await response.json(); } catch (e) { body = null; }
  if (!response.ok) {
    const error = new Error((body && body.error) || ("tv web answered " + response.status + "."));
    error.status = response.status;
    // A change tv would make only when agreed to (409): the question to ask, with its count.
    error.consent = (body && typeof body.consent === "string") ? body.consent : null;
    error.deletes = (body && typeof body.deletes === "number") ? body.deletes : null;
    throw error;
  }
  return body;
}

function post(path, object) {
  return api(path, { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json" },
                     body: JSON.stringify(object || {}) });
}

// As `tv flows` writes it (ByteWords.binary): one decimal below 100 of a unit, whole above
// (10 to 100 KiB read "59 KiB" here and "59.2 KiB" there: a trial).
function bytes(n) {
  if (n === null || n === undefined) return "–";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n, i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  // A value that rounds to 1024 is the next unit's 1.0 (1,048,524 B read "1024 KiB").
  if (i > 0 && Math.round(v) >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  if (i === 0) return String(v) + " B";
  if (v >= 100) return Math.round(v) + " " + units[i];
  const tenths = Math.round(v * 10);
  return Math.floor(tenths / 10) + "." + (tenths % 10) + " " + units[i];
}

// As `tv flows` writes it (Units.duration): µs below a millisecond, whole ms (truncated) below
// a second, then one decimal of seconds, then min/s and h/min (3,886 µs read "4 ms" here and
// "3 ms" there, and 132 µs "0 ms": a trial).
function duration(micros) {
  if (micros === null || micros === undefined) return "open";
  if (micros < 1000) return micros + " µs";
  if (micros < 1000000) return Math.floor(micros / 1000) + " ms";
  if (micros < 60000000) return (Math.round(micros / 100000) / 10).toFixed(1) + " s";
  const s = Math.floor(micros / 1000000), two = n => String(n).padStart(2, "0");
  if (s < 3600) return Math.floor(s / 60) + " min " + two(s % 60) + " s";
  return Math.floor(s / 3600) + " h " + two(Math.floor((s % 3600) / 60)) + " min";
}

function utc(micros, withDate) {
  const d = new Date(micros / 1000);
  const iso = d.toISOString();
  return (withDate ? iso.slice(0, 10) + " " : "") + iso.slice(11, 19) + (withDate ? " UTC" : "");
}

// As `tv flow` writes a time (Units.utcMillis): `2026-11-30 03:05:00.123 UTC`.
function utcMillis(micros) {
  const iso = new Date(Math.floor(micros / 1000)).toISOString();
  return iso.slice(0, 10) + " " + iso.slice(11, 23) + " UTC";
}

function relative(micros) {
  const sec = Math.max(0, (Date.now() - micros / 1000) / 1000);
  if (sec < 60) return Math.round(sec) + " s ago";
  if (sec < 3600) return Math.round(sec / 60) + " min ago";
  if (sec < 86400) return Math.round(sec / 3600) + " h ago";
  return utc(micros, true);
}

// "N s ago" ages while the page stays open (a trial's row said "2 s ago" 20 s later): every
// element drawn with `data-since` (µs) is told again every 5 s.
setInterval(() => {
  for (const el of document.querySelectorAll("[data-since]")) el.textContent = relative(Number(el.dataset.since));
}, 5000);

// The status mark: only departures from "encrypted" are named (the seed's second pass).
const STATUS_WORDS = { not_encrypted: "Not encrypted", inspected: "Inspected", kept_private: "Kept private",
                       failed: "Failed", interrupted: "Interrupted" };
// An open flow on which nothing was sent yet: its status ("not encrypted" until its first bytes
// tell TLS from plain) says nothing yet (tv's `FlowListPresentation.awaitsFirstBytes`).
function awaitsFirstBytes(flow) {
  return flow.duration == null && flow.status === "not_encrypted" && !flow.bytesUp && !flow.bytesDown;
}
function statusMark(flow) {
  if (awaitsFirstBytes(flow)) return h("span", { class: "mark" }, "Nothing sent yet");
  const word = STATUS_WORDS[flow.status];
  if (word) return h("span", { class: "mark " + flow.status }, word);
  if (flow.failureReason) return h("span", { class: "mark" }, "Not inspected");
  return h("span", { class: "mark" }, "");
}

// A flow's name, else its server's address, else which connection it is (one that never named
// a server drew a blank title and an empty link: a trial).
function flowName(flow) { return flow.host || flow.serverAddress || "connection " + flow.id + " (no server named)"; }
function flowWhat(flow) {
  const parts = [flow.transport.toUpperCase()];
  if (flow.alpn) parts.push(flow.alpn); else if (flow.clientTLSVersion) parts.push(flow.clientTLSVersion);
  parts.push("port " + flow.serverPort);
  // A name inferred from DNS is the name of an address: the address goes beside it (the seed's row named from DNS).
  if ((flow.hostOrigin === "dns" || flow.hostOrigin === "dns_question") && flow.serverAddress) parts.push(flow.serverAddress);
  if (flow.program && flow.program.command) parts.push(programName(flow.program));
  return parts.join(" · ");
}

// The command, and the executable's name after it when the two name different programs (a
// process may name itself: `curl [python3.11]`, as `tv flows` says it).
function programName(program) {
  const exe = program.executable ? program.executable.split("/").pop() : null;
  return program.command + (program.commandDisagrees && exe ? " [" + exe + "]" : "");
}

// FlowTerms' Direction: client_to_server is what this machine sent.
function sentWord(direction) { return direction === "client_to_server" ? "↑ Sent" : "↓ Received"; }

function errorCard(message) { return h("div", { class: "card error", role: "alert" }, message); }

// An action's refusal said beside the control that asked, once (each click added another copy
// at the foot of the page: a trial).
function sayBeside(control, sentence) {
  const holder = control && control.parentNode ? control.parentNode : main();
  const said = holder.querySelector(".download-error");
  if (said) said.remove();
  const line = h("span", { class: "download-error error", role: "alert" }, " " + sentence);
  if (control && control.parentNode) control.after(line); else holder.append(line);
}

// A download link whose refusal is said beside it: fetched first, saved from memory when it came
// (a link straight to a 404 left the browser's "Failed - No file" and tv's sentence unread: a
// trial). For HAR files; a capture, which may be gigabytes, stays a plain link.
function checkedDownload(link) {
  link.addEventListener("click", async event => {
    event.preventDefault();
    const said = link.parentNode.querySelector(".download-error");
    if (said) said.remove();
    try {
      const answer = await fetch(link.getAttribute("href"), { credentials: "omit" });
      if (!answer.ok) {
        let sentence = "The download failed (HTTP " + answer.status + ").";
        try { sentence = (await answer.json()).error || sentence; } catch (e) {}
        sayBeside(link, sentence);
        return;
      }
      const url = URL.createObjectURL(await answer.blob());
      const save = h("a", { href: url, download: link.getAttribute("download") || "download" });
      document.body.append(save);
      save.click();
      save.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60000);
    } catch (e) {
      sayBeside(link, "tv web is not answering: " + e.message);
    }
  });
  return link;
}

// A request row's status as `tv requests` says it: `502 by tv` when tv answered in the server's
// place, `200 incomplete` when the response never reached its end, `200 cancelled` when the
// client reset its HTTP/2 stream, `—` while open, `refused by tv` for a request tv never sent
// whose answer never came, `incomplete` (or `cancelled`) without one.
function requestStatus(x) {
  if (x.status !== null && x.status !== undefined) {
    return x.status + (x.state === "answered" ? " by tv" : x.state === "incomplete" ? " incomplete" : x.state === "cancelled" ? " cancelled" : "");
  }
  return x.state === "open" ? "—" : x.state === "answered" ? "refused by tv" : x.state === "cancelled" ? "cancelled" : "incomplete";
}

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

const live = { listeners: new Set(), top: null, rates: [], connected: false, catchUps: 0, catchingUp: false, opens: 0 };
// A hidden tab lets go of its stream, and takes it again when shown: a browser opens at most six
// HTTP/1.1 connections to one host, so six open tabs' streams left a seventh tab no connection
// to load with (a trial).
let eventSource = null;
document.addEventListener("visibilitychange", () => {
  if (document.hidden && eventSource) {
    eventSource.close();
    eventSource = null;
    live.connected = false;
    live.catchUps++;
    live.catchingUp = false;
    document.getElementById("live").textContent = "○ Paused while this tab is hidden";
  } else if (!document.hidden && !eventSource) {
    connectEvents();
  }
});

// The words while a stream that (re)opened is being caught up with.
const CATCHING_UP = "○ Catching up on what came while not connected…";

// The stream (re)opened: what came while it was down (hidden, or the connection lost) was never
// told, so each screen reads again what it shows (its listener's answer to "open": a promise,
// or nothing when it has nothing to read), and "● Live" is said once it has. A trial's Requests
// tab, hidden while traffic ran, said "● Live" above a top row 18 requests old until a reload.
async function catchUp(source) {
  const status = document.getElementById("live");
  const asked = ++live.catchUps;
  live.catchingUp = true;
  status.textContent = CATCHING_UP;
  let failure = null;
  try { await Promise.all([...live.listeners].map(f => f("open", null))); } catch (e) { failure = e; }
  if (asked !== live.catchUps || source !== eventSource || !live.connected) return;
  live.catchingUp = false;
  status.textContent = failure ? "○ Connected, but this screen could not be read again: " + failure.message : "● Live";
}

// A screen drawn anew while a catch-up is under way reads everything after the stream opened:
// it is not behind, and the catch-up of the screen left (whose answers are dropped) is over.
function screenCaughtUp() {
  if (!live.catchingUp || !live.connected) return;
  live.catchUps++;
  live.catchingUp = false;
  document.getElementById("live").textContent = "● Live";
}

function connectEvents() {
  const status = document.getElementById("live");
  if (eventSource) eventSource.close();
  const source = new EventSource(withToken("/api/events"));
  eventSource = source;
  source.addEventListener("open", () => { live.connected = true; live.opens++; catchUp(source); });
  source.addEventListener("error", async () => {
    live.connected = false;
    live.catchUps++;
    live.catchingUp = false;
    status.textContent = "○ Not connected: reconnecting…";
    for (const f of live.listeners) f("gone", null);
    // Why: a tv web started again has a new token, and this page's is refused for good (a
    // trial's page said "reconnecting" forever); else nothing answers yet.
    try {
      const answer = await fetch("/api/status", { credentials: "omit", headers: authorized() });
      if (answer.status === 403) {
        source.close();
        status.textContent = webToken()
          ? "○ This page's token is not the running tv web's (it changes at every start): open the URL tv web printed."
          : "○ This page has no token: open the URL tv web printed (it carries one).";
      }
    } catch (e) {
      status.textContent = "○ Not connected: tv web is not answering; reconnecting…";
    }
  });
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

// A list's first page read again after the stream was down, put before the rows shown: the
// page's rows replace theirs; where the page reaches a row shown, the rows after it stay (and
// `next`, the cursor after the last of them), else more came than a page holds and the list is
// the page alone (with its own cursor). Rows are the same when `key` gives the same value.
function caughtUp(shown, next, page, pageNext, key) {
  const last = page.length ? key(page[page.length - 1]) : null;
  const at = last === null ? -1 : shown.findIndex(r => key(r) === last);
  if (at < 0) return { rows: page, next: pageNext };
  const fresh = new Set(page.map(key));
  return { rows: page.concat(shown.slice(at + 1).filter(r => !fresh.has(key(r)))), next: next };
}

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
      h("span", { class: "sent" }, "Sent per second"), h("span", { class: "muted" }, last && points.some(p => p.received > 0 || p.sent > 0) ? "peak " + bytes(top) + "/s" : "")));
}

function drawDashboard(top) {
  const parts = [];
  // Figures kept from before a lost connection are said to be so (a trial's page went on
  // showing "● Monitoring" after the session had stopped).
  if (!live.connected && top && top.state === "live") {
    parts.push(h("div", { class: "card", role: "status" }, h("strong", {}, "○ Not connected"),
      h("p", {}, "The figures below are from before the connection to tv web was lost; they come back when it does.")));
  }
  if (!top || top.state !== "live") {
    const word = top ? top.state : "unknown";
    const card = h("div", { class: "card", role: "status" },
      h("h2", {}, word === "failed" ? "Monitoring failed to start" : word === "starting" ? "Monitoring is starting" : "Monitoring is off"),
      top && top.reason ? h("p", {}, top.reason) : null,
      h("p", {}, word === "failed" ? "Fix what it says, then start it again with `tv run`."
                 : "Start a session with `tv run` (or `tv run --web` to serve these screens beside it), or run one command through tv with `tv exec -- CMD`; the history stays readable on the Timeline."),
      h("p", {}, h("a", { href: "#/timeline" }, "Open the Timeline")));
    parts.push(card);
  } else {
    const session = top.session || {};
    // Two or more sessions on this data folder (a `tv run` and `tv exec`s): a strip each, and
    // the tiles their sum (only the first was shown, and nothing said a second ran: a trial).
    const sessions = top.sessions && top.sessions.length > 1 ? top.sessions : [session];
    if (sessions.length > 1) {
      parts.push(h("p", { role: "status" }, `${sessions.length} sessions are running on this data folder; the figures below are their sum.`));
    }
    for (const one of sessions) {
      parts.push(h("div", { class: "card strip", role: "status" }, h("strong", {}, "● Monitoring"),
        h("span", {}, one.modeLabel || one.mode || ""), h("span", { class: "muted" }, one.listen ? "on " + one.listen : ""),
        h("span", {}, "inspection " + (one.inspection || "unknown")),
        // Kept content is what was said: the strip says whether it is being kept, as `tv top` does.
        one.contentKeeping ? h("span", {}, "content keeping " + one.contentKeeping) : null,
        sessions.length > 1 && one.pid ? h("span", { class: "muted" }, "pid " + one.pid) : null));
    }
    parts.push(h("h2", {}, "Rates"), rateChart());
    const sum = sessions.length > 1 ? (top.totals || {}) : session;
    const totals = [["Received", bytes(sum.bytesFromServers || 0)], ["Sent", bytes(sum.bytesFromClients || 0)],
                    ["Connections", String(sum.accepted || 0)], ["Open now", String(sum.openConnections || 0)]];
    parts.push(h("h2", {}, sessions.length > 1 ? `All ${sessions.length} sessions` : "This session"),
      h("div", { class: "tiles" }, totals.map(([k, v]) => h("div", { class: "tile" }, h("div", { class: "figure" }, v), h("div", { class: "label" }, k)))));
    parts.push(h("h2", {}, "Top talkers by host (closed connections)"), talkers(top.talkers || [], "host"));
    parts.push(h("h2", {}, "Top talkers by program (all flows since this session began, tv exec's too; open ones too)"), talkers(top.programs || [], "program"));
  }
  screen("Dashboard", ...parts);
}

function talkers(rows, key) {
  if (rows.length === 0) return h("p", { class: "muted" }, "None yet this session.");
  return h("table", {}, h("thead", {}, h("tr", {}, h("th", {}, key === "host" ? "Host" : "Program"), h("th", { class: "num" }, "Flows"),
      h("th", { class: "num" }, "Received"), h("th", { class: "num" }, "Sent"))),
    h("tbody", {}, rows.slice(0, 10).map(r => h("tr", {}, h("td", {}, r[key] || (key === "host" ? "(no name)" : "not known")), h("td", { class: "num" }, r.flows),
      h("td", { class: "num" }, bytes(r.received)), h("td", { class: "num" }, bytes(r.sent))))));
}

async function dashboard() {
  // Nothing read yet is not "Monitoring is off" (a refused token drew that beside a running
  // session: a trial); a refusal is the whole screen.
  if (live.top) drawDashboard(live.top); else screen("Dashboard", h("p", { class: "muted" }, "Loading…"));
  onLive((kind, top) => {
    if (kind === "top") drawDashboard(top);
    else if (kind === "gone" && live.top) drawDashboard(live.top);
    // Figures from before the stream went down are read again (else they stay until the next
    // `top` event, a few seconds on).
    else if (kind === "open") return api("/api/top").then(t => { live.top = t; drawDashboard(t); });
  });
  try { live.top = await api("/api/top"); drawDashboard(live.top); } catch (e) { screen("Dashboard", errorCard(e.message)); }
}

// ---- routing -------------------------------------------------------------------------------

// A route is the hash: a path (#/requests, #/request/ID) and, after `?`, a query holding what
// the screen was filtered by, named as the API names it (#/requests?since=1h&filter=~m%20POST),
// so a reload, Back and Forward and a shared link open the screen as it was filtered (a trial's
// filter was lost on each). The hash never reaches tv web: the token and the server's checks
// are untouched by it.
function routePath() { return location.hash.replace(/^#\/?/, "").split("?")[0]; }
function routeQuery() {
  const at = location.hash.indexOf("?");
  return new URLSearchParams(at < 0 ? "" : location.hash.slice(at + 1));
}
// `path` (a route without its `#/`) with `query` (URLSearchParams) when it holds anything.
function routeTo(path, query) {
  const text = query ? query.toString() : "";
  return "#/" + path + (text ? "?" + text : "");
}

// Writes a screen's filter into the address, a new history entry when the user changed it
// (`push`, so Back goes to the filter before) and in place otherwise; the screen is not drawn
// again (no hashchange). The screen's tab keeps it too, so going back to the screen by its tab
// finds it filtered as it was left. Nothing is written once another screen is shown.
function keepInRoute(screenName, query, push) {
  if (routePath().split("/")[0] !== screenName) return;
  const target = routeTo(screenName, query);
  const tab = document.querySelector('#tabs a[data-screen="' + screenName + '"]');
  if (tab) tab.setAttribute("href", target);
  if (target === location.hash) return;
  if (push) history.pushState(null, "", target); else history.replaceState(null, "", target);
}

// The route a screen's tab holds: the screen as it was last filtered.
function keptRoute(screenName) {
  const tab = document.querySelector('#tabs a[data-screen="' + screenName + '"]');
  return tab ? tab.getAttribute("href") : "#/" + screenName;
}

function route() {
  const parts = routePath().split("/").filter(Boolean);
  const name = parts[0] || "dashboard";
  for (const a of document.querySelectorAll("#tabs a")) {
    const tab = name === "flow" ? "timeline" : name === "request" ? "requests" : name === "storage" ? "settings" : name;
    if (a.dataset.screen === tab) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  }
  live.listeners.clear();
  routeToken++;
  screenCaughtUp();
  // Without the token every screen would draw its empty state ("Monitoring is off" beside a
  // running session: a re-check); say what is missing instead.
  if (!webToken()) {
    screen("TunnelVision", errorCard("This page has no token, so it can show nothing recorded: open the URL `tv web` printed (it carries the token; the page keeps it for this address and port)."));
    return;
  }
  if (name === "timeline") timelineScreen();
  else if (name === "flow" && parts[2] === "packet") packet(parts[1], parts[3]);
  else if (name === "flow" && parts[2] === "content") content(parts[1]);
  else if (name === "flow") inspector(parts[1]);
  else if (name === "requests") requestsScreen();
  else if (name === "request") requestDetail(parts[1]);
  else if (name === "captures") captures();
  else if (name === "storage") storage();
  else if (name === "settings") settings();
  else if (name === "setup") setup();
  else if (name === "diagnostics") diagnostics();
  else if (name === "audit") audit(parts[1]);
  else dashboard();
}

window.addEventListener("hashchange", () => { route(); main().focus({ preventScroll: true }); });
document.addEventListener("DOMContentLoaded", () => {
  takeToken();
  if (document.hidden) document.getElementById("live").textContent = "○ Paused while this tab is hidden";
  else connectEvents();
  // "Skip to the screen" moves the focus only: as a plain link its `#main` was read as a route
  // and drew the Dashboard in place of the screen it skips to.
  document.querySelector("a.skip").addEventListener("click", (event) => {
    event.preventDefault();
    main().focus();
  });
  route();
});
