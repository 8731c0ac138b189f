// tv web: Requests (the HTTP exchanges `tv requests` lists, filtered with mitmproxy's language,
// in keyset pages) and one request (`tv request ID`: its row's facts, then its kept request and
// response). Helpers come from app.js and inspector.js (loaded first).
"use strict";

// ---- Requests ------------------------------------------------------------------------------

const requests = { preset: "", filter: "", rows: [], next: null, stopped: null, notice: null, error: null, loaded: false, asked: 0, pending: null };

// The list's filter as /api/requests takes it, and as its route keeps it (#/requests?…).
function requestsFilter() {
  const p = new URLSearchParams();
  if (requests.preset) p.set("since", requests.preset);
  if (requests.filter) p.set("filter", requests.filter);
  return p;
}

function requestParams(after) {
  const p = requestsFilter();
  p.set("limit", "50");
  if (after) p.set("after", after);
  return p;
}

// The list's filter from a route's query (the list's own, or a request's opened from it).
function requestsFilterOf(query) {
  const p = new URLSearchParams();
  for (const key of ["since", "filter"]) if (query.get(key)) p.set(key, query.get(key));
  return p;
}

// At most `most` characters of `text`, a cut one ending in "…" (a 6,000-character query is not a
// row: the request's own screen has the whole of it).
function cutText(text, most) { return text.length > most ? text.slice(0, most) + "…" : text; }

// A request's URL as `tv requests` writes its path: a query that was not kept ends in ?….
function requestPath(x) { return (x.path || "") + (x.queryRemoved ? "?…" : ""); }
function requestURL(x) { return (x.scheme ? x.scheme + "://" : "") + (x.authority || "") + requestPath(x); }

// Each load is numbered: only the last one asked is drawn (a slow filter's answer arriving after
// a quick one's drew its rows under the quick one's text: a trial). More cancels a first-page
// reload not yet made (it put the list back to one page a moment after More: a trial). A refused
// filter empties the list: rows of the filter before it are not this one's. `catchUp`: the
// first page read again after the live stream was down, merged before the rows shown
// (`caughtUp`), so pages read with More stay.
function loadRequests(more, catchUp) {
  requests.pending = readRequests(more, catchUp);
  return requests.pending;
}

// `loadRequests`' work; a load superseded by a later one answers with the later one's promise
// (a catch-up is over when the rows drawn are at least as new as it).
async function readRequests(more, catchUp) {
  const asked = ++requests.asked;
  if (more && requestsReload) { clearTimeout(requestsReload); requestsReload = null; }
  if (!more && !catchUp) keepInRoute("requests", requestsFilter(), true);
  let page = null, error = null;
  try { page = await api("/api/requests?" + requestParams(more ? requests.next : null)); } catch (e) { error = e.message; }
  if (asked !== requests.asked) return requests.pending;
  if (page && catchUp && requests.loaded) {
    Object.assign(requests, caughtUp(requests.rows, requests.next, page.requests, page.nextCursor, x => x.id));
    requests.stopped = page.stopped || null;
    requests.notice = page.notice || null;
    requests.error = null;
  } else if (page) {
    requests.rows = more ? requests.rows.concat(page.requests) : page.requests;
    requests.next = page.nextCursor;
    // A filter that ran past tv web's time limit answers with what it found so far and where it
    // stopped (`stopped`: its sentence, the request its search cut); More goes on from there.
    requests.stopped = page.stopped || null;
    // What the filter could not look at (`notice`: operators over content that was not kept),
    // so an empty or short list is not read as "nothing like that happened".
    requests.notice = page.notice || null;
    requests.error = null;
  } else {
    if (!more && !catchUp) { requests.rows = []; requests.next = null; requests.stopped = null; requests.notice = null; }
    requests.error = error;
  }
  requests.loaded = true;
  drawRequestRows();
  if (error && catchUp) throw new Error(error);
}

// A request opened from the list carries the list's filter, for its way back.
function requestRow(x) {
  const route = routeTo("request/" + x.id, requestsFilter());
  return h("tr", { "data-request": x.id, onclick: () => { location.hash = route; } },
    h("td", { class: "num id" }, String(x.id)),
    h("td", { class: "hide-narrow when" }, utc(x.requestTime, true).slice(5, 19)),
    h("td", {}, x.method || ""),
    h("td", { class: "hide-narrow scheme" }, x.scheme || "–"),
    h("td", { class: "url" }, h("a", { href: route }, cutText((x.authority || "") + requestPath(x), 120))),
    h("td", { class: "num" }, requestStatus(x)),
    h("td", { class: "num hide-narrow" }, bytes(x.requestBodyBytes) + " → " + bytes(x.responseBodyBytes)),
    h("td", { class: "num hide-narrow" }, x.duration === null || x.duration === undefined ? "open" : duration(x.duration)),
    h("td", { class: "hide-narrow type" }, x.contentType || ""));
}

function drawRequestRows() {
  const holder = document.getElementById("request-list");
  if (!holder) return;
  const parts = [];
  if (!requests.loaded) parts.push(h("p", { class: "muted" }, "Loading requests…"));
  else if (requests.rows.length === 0 && requests.error) parts.push(errorCard(requests.error));
  else if (requests.rows.length === 0 && !requests.preset && !requests.filter) parts.push(h("div", { class: "card" }, h("strong", {}, "No requests yet."),
      h("p", {}, "Requests are read from plain HTTP and from inspected TLS connections (`tv inspect on`); they appear here as they are made.")));
  else if (requests.rows.length === 0 && requests.stopped) parts.push(h("div", { class: "card", id: "requests-stopped" }, h("strong", {}, "No matches so far."),
      h("p", {}, requests.stopped.sentence), h("button", { type: "button", id: "more-requests", onclick: () => loadRequests(true) }, "Look further")));
  else if (requests.rows.length === 0) parts.push(h("div", { class: "card" }, h("strong", {}, "No matches."),
      h("p", {}, "No recorded request matches these filters. "), h("button", { type: "button", onclick: clearRequestFilters }, "Clear filters")));
  else {
    parts.push(h("table", { id: "requests" }, h("thead", {}, h("tr", {}, h("th", { class: "num id" }, "ID"), h("th", { class: "hide-narrow" }, "Time (UTC)"), h("th", {}, "Method"),
      h("th", { class: "hide-narrow scheme" }, "Scheme"), h("th", { class: "url" }, "Host and path"), h("th", { class: "num" }, "Status"), h("th", { class: "num hide-narrow" }, "Sizes (req → resp)"),
      h("th", { class: "num hide-narrow" }, "Duration"), h("th", { class: "hide-narrow" }, "Type"))),
      h("tbody", {}, requests.rows.map(requestRow))));
    const foot = h("div", { class: "footer" });
    // An error while paginating goes to the footer: a list already drawn is never covered.
    if (requests.error) foot.append(errorCard(requests.error));
    if (requests.stopped) foot.append(h("p", { class: "muted", id: "requests-stopped" }, requests.stopped.sentence));
    if (requests.next) foot.append(h("button", { type: "button", id: "more-requests", onclick: () => loadRequests(true) }, requests.stopped ? "Look further" : "More"));
    else foot.append(h("p", { class: "muted" }, "That is every request these filters select."));
    parts.push(foot);
  }
  if (requests.notice && requests.loaded && !requests.error) parts.unshift(h("p", { class: "muted", id: "filter-notice" }, requests.notice));
  holder.replaceChildren(...parts);
}

function clearRequestFilters() {
  Object.assign(requests, { preset: "", filter: "" });
  keepInRoute("requests", requestsFilter(), true);
  requestsScreen();
}

// New requests are written as their exchanges end, on connections that may stay open: the first
// page is read again when a flow opens or finishes, at most every 2 s, while no later page is shown.
let requestsReload = null;
// A filter that stopped at the time limit is not run again by itself: each run would take the
// whole limit again.
function reloadRequestsSoon() {
  if (requestsReload || requests.rows.length > 50 || requests.stopped) return;
  requestsReload = setTimeout(() => {
    requestsReload = null;
    if (document.getElementById("request-list") && requests.rows.length <= 50) loadRequests(false);
  }, 2000);
}

function requestsScreen() {
  requests.loaded = false;
  // The filter the route holds (a reload, Back or Forward, a shared link).
  const kept = routeQuery();
  requests.preset = kept.get("since") || "";
  requests.filter = kept.get("filter") || "";
  keepInRoute("requests", requestsFilter(), false);
  const presets = presetChoices(requests.preset);
  const preset = h("select", { id: "request-preset", onchange: e => { requests.preset = e.target.value; loadRequests(false); } },
    presets.map(([v, t]) => h("option", { value: v, selected: v === requests.preset }, t)));
  const filter = h("input", { id: "request-filter", type: "search", value: requests.filter, placeholder: "~m POST & ~c 200", spellcheck: "false",
                              "aria-describedby": "filter-help" });
  const form = h("form", { class: "filters", role: "search", onsubmit: e => { e.preventDefault(); requests.filter = filter.value.trim(); loadRequests(false); } },
    h("label", {}, "When", preset), h("label", {}, "Filter", filter), h("button", { type: "submit" }, "Filter"));
  filter.addEventListener("search", () => { if (filter.value === "") { requests.filter = ""; loadRequests(false); } });
  screen("Requests", form,
    h("p", { class: "muted", id: "filter-help" }, "mitmproxy's filter language, as `tv requests --filter` takes it: ~d domain, ~m method, ~u URL, ~c status, ~t type, ~h header, ~b body, joined by !, & and |. Headers and bodies are searched only where content was kept."),
    h("section", { id: "request-list", "aria-live": "polite" }));
  drawRequestRows();
  loadRequests(false);
  onLive(kind => {
    if (kind === "flow" && requests.loaded) reloadRequestsSoon();
    // What came while the stream was down (a filter stopped at the time limit is not run again
    // by itself: each run would take the whole limit).
    else if (kind === "open" && !requests.stopped) return loadRequests(false, true);
  });
}

// ---- One request ---------------------------------------------------------------------------

// The way back from a request, to where it was opened, as its route says it (so a reload keeps
// it): `?flow=N` from flow N's inspector, else the Requests list with the filter it had (a
// request opened from a flow went back to the whole list: a trial).
function requestBack(query) {
  const flow = query.get("flow");
  if (/^[1-9][0-9]*$/.test(flow || "")) return { href: "#/flow/" + flow, text: "← Connection " + flow };
  return { href: routeTo("requests", requestsFilterOf(query)), text: "← Requests" };
}

// The WebSocket messages read after a 101 (`content.webSocket`), one row each as `tv request`
// lists them: text as text, binary as a hex dump (the first 1 KiB of each), a close's code.
function webSocketView(ws) {
  const rows = ws.messages.map(m => h("tr", {},
    h("td", {}, sentWord(m.direction)),
    h("td", {}, "turn " + m.turn),
    h("td", {}, m.type + (m.type === "close" ? (m.closeCode !== null ? " " + m.closeCode : "") : ", " + bytes(m.size))),
    h("td", {},
      m.base64 !== undefined ? h("pre", { class: "hex body" }, hexDump(null, atob(m.base64).slice(0, 1024)))
        : (m.text ? h("pre", { class: "body" }, m.text.slice(0, 4096)) : null),
      m.cut ? h("p", { class: "muted" }, m.cut) : null)));
  return h("div", { class: "websocket", id: "websocket-messages" },
    h("h3", {}, "WebSocket: " + ws.messages.length + " message" + (ws.messages.length === 1 ? "" : "s") + (ws.extensions ? ", " + ws.extensions : "")),
    h("table", {}, h("tbody", {}, ...rows)),
    ...ws.notes.map(n => h("p", { class: "muted" }, n)),
    ...ws.problems.map(p => h("p", { class: "card notice" }, sentWord(p.direction) + ", turn " + p.turn + ": " + p.reason)));
}

async function requestDetail(id) {
  const way = requestBack(routeQuery());
  const back = h("p", {}, h("a", { href: way.href, id: "request-back" }, way.text));
  // The id as `tv request` takes it (the API's "no such route" read oddly for #/request/abc: a trial).
  if (!/^[0-9]+$/.test(id || "") || Number(id) === 0) {
    screen("Request", back, errorCard("'" + (id || "") + "' is not a request id: the Requests list links each one."));
    return;
  }
  screen("Request " + id, back, h("p", { class: "muted" }, "Loading…"));
  let x;
  try { x = await api("/api/requests/" + id); } catch (e) { screen("Request " + id, back, errorCard(e.message)); return; }
  // As `tv request` says it: the code and reason, then the state (it read "200 incomplete OK").
  const status = (x.status === null || x.status === undefined ? "none" : x.status + (x.reason ? " " + x.reason : ""));
  const state = { open: "still open", complete: "complete", incomplete: "incomplete: the response never reached its end",
                  answered: x.status === null || x.status === undefined
                    ? "refused by tv and never sent to the server; the connection ended before tv's answer (the connection's error says why)"
                    : "answered by tv, not the server (the connection's error says why)",
                  cancelled: "cancelled: the client reset the stream after its request, before the response ended (HTTP/2 RST_STREAM)" }[x.state] || x.state;
  const timing = ["started " + utcMillis(x.requestTime)];
  if (x.requestEndTime && x.requestEndTime > x.requestTime) timing.push("request sent in " + duration(x.requestEndTime - x.requestTime));
  if (x.responseTime) timing.push("first response byte after " + duration(Math.max(0, x.responseTime - x.requestTime)));
  if (x.duration !== null && x.duration !== undefined) timing.push("ended after " + duration(x.duration));
  const where = "exchange " + x.sequence + " of it" + (x.stream !== null && x.stream !== undefined ? ", stream " + x.stream : "") + ", " + x.httpVersion;
  const parts = [back,
    dl([["Connection", h("span", {}, h("a", { href: "#/flow/" + x.flow }, "connection " + x.flow), ", " + where)],
        x.sentTo ? ["Sent to", x.sentTo + ", not the server its URL names (the URL's host is the request's own Host or :authority)"] : null,
        ["Status", status + " — " + state],
        ["Request body", bytes(x.requestBodyBytes) + (x.requestWireBytes !== x.requestBodyBytes ? " (" + bytes(x.requestWireBytes) + " as sent)" : "")],
        x.responseBodyBytes === null || x.responseBodyBytes === undefined ? null
          : ["Response body", bytes(x.responseBodyBytes) + (x.responseWireBytes !== null && x.responseWireBytes !== x.responseBodyBytes ? " (" + bytes(x.responseWireBytes) + " as sent)" : "")
             + (x.contentType ? ", " + x.contentType : "") + (x.contentEncoding ? ", " + x.contentEncoding : "")],
        ["Timing", timing.join("; ")]]),
    x.upgrade ? h("p", { class: "muted" }, x.content && x.content.webSocket ? "Switched protocols to WebSocket: its messages follow the response."
                                              : "Switched protocols (upgrade): what followed is not read as HTTP.") : null,
    x.connect ? h("p", { class: "muted" }, "CONNECT: a tunnel was asked for.") : null,
    x.queryRemoved ? h("p", { class: "muted" }, "The query string was not kept (content keeping was off, or the content has expired or was deleted).") : null];
  if (x.content) {
    const c = x.content;
    parts.push(h("section", { class: "card exchange", id: "request-content" },
      c.request ? messageView("Request", c.request, x.flow) : h("p", { class: "muted" }, "No request was recorded."),
      ...(c.interim || []).map(m => messageView("Interim response", m, x.flow)),
      c.response ? messageView("Response", c.response, x.flow) : h("p", { class: "muted", id: "response-absence" }, x.responseAbsence || "No response was recorded."),
      c.webSocket ? webSocketView(c.webSocket) : null));
  } else if (x.absence) {
    parts.push(h("div", { class: "card", role: "status", id: "request-absence" }, x.absence));
  }
  // Where reading the connection's kept turns stopped: said for a request it left without its
  // messages, not under every request of the connection (a trial's complete ones said it too).
  if (x.readingStopped && (!x.content || !x.content.response)) {
    parts.push(h("p", { class: "card notice" }, sentWord(x.readingStopped.direction) + ", turn " + x.readingStopped.turn + ": " + x.readingStopped.reason));
  }
  // A URL past 160 characters is cut in the heading (a query of 6,000 is not a title); the whole
  // of it is the first row.
  const url = requestURL(x);
  parts.splice(1, 0, dl([["URL", url]]));
  screen((x.method || "") + " " + cutText(url, 160), ...parts);
}
