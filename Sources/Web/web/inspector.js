// tv web: the Flow Inspector, the decrypted content (turns, the HTTP view, HAR) and one packet
// down to its bytes. Helpers come from app.js (loaded first).
"use strict";
// ---- Flow Inspector ------------------------------------------------------------------------

async function inspector(id) {
  screen("Connection " + id, h("p", { class: "muted" }, "Loading…"));
  // Drawn closed, the flow changes no more; drawn open (or not yet drawn), it may have ended while
  // the stream was down, which no event will tell: read again when the stream (re)opens.
  let shownClosed = false;
  onLive((kind, event) => {
    if (kind === "flow" && event.flow.id === Number(id) && event.event === "finished") inspector(id);
    else if (kind === "open" && !shownClosed) return inspector(id);
  });
  let detail;
  try { detail = await api("/api/flows/" + id); } catch (e) { screen("Connection " + id, errorCard(e.message)); return; }
  const f = detail.flow || detail;
  shownClosed = f.duration !== null && f.duration !== undefined;
  const origin = { sni: "Announced (SNI)", quic: "Announced (QUIC Initial)", connect: "Announced (CONNECT)", socks: "Announced (SOCKS5)", http_host: "Announced (the request's Host header)",
                   reverse: "The reverse proxy's upstream", dns: "Inferred from DNS", dns_question: "Inferred from a DNS question",
                   none: "None seen" }[f.hostOrigin] || f.hostOrigin;
  // As `tv flow` says it (FlowDetailPresentation): active from its start to its end (start plus
  // duration), or to its last recorded activity while open, to the millisecond; a trial's page
  // read "First to last packet 17:20:30 – 17:20:33" (the last byte moved, not the close) beside
  // "Duration 4.4 s", where `tv flow` said "active 17:20:30.704 to 17:20:35.095", and a proxied
  // flow has no packets.
  const open = f.duration === null || f.duration === undefined;
  const last = open ? f.lastActivityTime : f.startTime + f.duration;
  const parts = [
    h("p", {}, h("a", { href: keptRoute("timeline") }, "← Timeline")),
    dl([["Name", flowName(f) + " — " + origin], ["Address", f.serverAddress ? f.serverAddress + " port " + f.serverPort + " (" + f.transport.toUpperCase() + ")" : "none: no server was reached or named"],
        ["Active", utcMillis(f.startTime) + " to " + utcMillis(last) + (open ? " (still open)" : "")],
        ["Duration", open ? "open, " + duration(Math.max(0, Date.now() * 1000 - f.startTime)) + " so far" : duration(f.duration)], ["Bytes", "↓ " + bytes(f.bytesDown) + " received, ↑ " + bytes(f.bytesUp) + " sent"],
        // TCP through the TUN is counted by its capture (below), not on the flow (a trial read
        // "not counted" above "12 packets"): filled in once the packet list is read.
        ["Packets", h("span", { id: "packet-count" }, f.packetsDown === null && f.packetsUp === null ? "not counted (not captured)" : "↓ " + (f.packetsDown ?? "–") + " ↑ " + (f.packetsUp ?? "–"))],
        ["Status", (STATUS_WORDS[f.status] || "Encrypted") + (f.failureReason ? " — " + f.failureReason : "") + (f.error && f.error !== f.failureReason ? " — " + f.error : "")
          // As `tv flow` says it (FlowDetailPresentation.unused): not an error.
          + (f.status === "inspected" && !open && f.bytesUp === 0 && !f.error ? " — the client sent nothing over it and closed it: a connection it did not use (a browser opens spare connections and closes those it does not need)" : "")],
        ["Program", f.program && f.program.command ? programName(f.program) + (f.program.pid ? " (pid " + f.program.pid + (f.program.executable ? ", " + f.program.executable : "") + ")" : "") : (f.program && f.program.said) || "not known"]]),
  ];
  // Other names, as the row says where they came from (otherHostsOrigin; a row written before
  // it was kept, by the name's origin): a name from the TLS beside another the proxy request
  // named (domain fronting's shape), an inferred name's address with other live names, or the
  // names lookups gave the address of a connection that announced its own (`tv flow` says the same).
  if (f.otherHosts && f.otherHosts.length) {
    const names = f.otherHosts.join(", ");
    const origin = f.otherHostsOrigin || (f.hostOrigin === "sni" || f.hostOrigin === "quic" ? "proxy_request" : "lookups");
    parts.push(h("p", { class: "muted" }, origin === "proxy_request"
      ? "The proxy request named " + names + "; the ClientHello named this one."
      : origin === "lookups_not_announced"
        ? "This address was looked up as " + names + "; the connection announced " + (f.host || "another name") + " (an address many names share, as a CDN's is, does this too)."
        : f.hostOrigin === "dns"
          ? "Its address also had the names " + names + "; it could belong to any of them."
          : "Its address was also looked up as " + names + "."));
  }
  if (f.clientTLSVersion || f.serverTLSVersion || f.alpn || (f.clientVersions && f.clientVersions.length)) {
    parts.push(h("h2", {}, "How it was encrypted"), dl([
      // Two legs when tv terminated TLS (as `tv flow` says them); else one handshake, and where
      // its version was read, in words (a trial read "upstream_leg").
      ...(f.chosenVersionSource === "upstream_leg"
        ? [["Client leg", (f.clientTLSVersion || "none") + " (client to tv)"], ["Server leg", (f.serverTLSVersion || "unknown") + " (tv to server)"]]
        : [["Version chosen", (f.serverTLSVersion || f.clientTLSVersion || "not read") + (f.chosenVersionSource ? " (read from the " + f.chosenVersionSource.replace(/_/g, " ") + ")" : "")]]),
      ["Offered versions", (f.clientVersions || []).join(", ") || "not read"],
      ["Offered protocols", (f.clientALPN || []).join(", ") || "none"],
      // "none" only where tv would have seen one; TLS 1.3 and QUIC send it encrypted (as `tv flow` says).
      ["Chosen protocol", f.alpn || (!(f.clientALPN || []).length || f.chosenVersionSource === "upstream_leg"
        || (f.chosenVersionSource === "server_hello" && f.clientTLSVersion && f.clientTLSVersion !== "TLSv1.3")
        ? "none" : "not seen (TLS 1.3 sends the server's choice encrypted)")],
      f.certificate ? ["Certificate", (f.certificate.subject || "") + " issued by " + (f.certificate.issuer || "?")] : null]));
  }
  parts.push(h("h2", {}, "Decrypted content"), h("div", { id: "content" }, h("p", { class: "muted" }, "Looking…")));
  if (detail.requests && detail.requests.length) {
    parts.push(h("h2", {}, "Requests"), h("table", {}, h("thead", {}, h("tr", {}, h("th", {}, "Method"), h("th", {}, "Path"), h("th", { class: "num" }, "Status"))),
      h("tbody", {}, detail.requests.map(x => h("tr", {}, h("td", {}, x.method || ""),
        // Opened from here, a request's way back is to this flow (`?flow=`), not the Requests list.
        h("td", {}, x.id ? h("a", { href: routeTo("request/" + x.id, new URLSearchParams({ flow: id })) }, requestPath(x)) : requestPath(x)),
        h("td", { class: "num" }, requestStatus(x)))))));
    // `tv flow --json` lists a connection's first requests and counts them all (a trial's had 200,000).
    if (detail.requestCount > detail.requests.length) parts.push(h("p", { class: "muted", "data-shown": "requests" },
      "The first " + detail.requests.length.toLocaleString("en-US") + " of " + detail.requestCount.toLocaleString("en-US")
      + " requests; tv requests --flow " + id + " lists them all."));
  }
  if (detail.requestsLeftOutSentence) parts.push(h("p", { class: "muted", "data-left-out": "requests" }, detail.requestsLeftOutSentence));
  parts.push(h("h2", {}, "Packets"), h("div", { id: "packets" }, h("p", { class: "muted" }, "Looking…")));
  screen(flowName(f), ...parts);
  api("/api/flows/" + id + "/turns").then(t => {
    const turns = t.turns || [];
    const holder = document.getElementById("content");
    if (t.absence) {
      // Without kept content the HAR is made from the request rows (`tv export har ID`).
      const rows = detail.requests && detail.requests.length ? h("p", {}, harLink(id), " (from the request rows: method, path, status, sizes and times)") : "";
      // A failed flow's reason is on the Status row above: not said twice (a trial read it twice).
      const sentence = t.absence.reason === "failed" ? "Nothing was kept: the connection failed before content was recorded (the status above says why)." : t.absence.sentence;
      holder.replaceChildren(h("p", { "data-absence": t.absence.reason }, sentence), rows);
      return;
    }
    const kept = turns.reduce((sum, t) => sum + (t.keptBytes || 0), 0);
    // How much was saved, not how many turns: the amount tells whether it is worth opening.
    holder.replaceChildren(h("p", {}, bytes(kept) + " kept. ",
      h("a", { href: "#/flow/" + id + "/content" }, "Read the conversation"), " · ", harLink(id)));
  }).catch(e => document.getElementById("content").replaceChildren(h("p", { class: "muted" }, e.message)));
  api("/api/flows/" + id + "/packets").then(p => {
    const rows = p.packets || [];
    const holder = document.getElementById("packets");
    if (f.packetsDown === null && f.packetsUp === null && p.count > 0) {
      document.getElementById("packet-count").textContent = p.count + " captured (the list below)";
    }
    if (rows.length === 0) { holder.replaceChildren(h("p", { class: "muted" }, "No packets were captured for this connection (captures are made in the TUN modes).")); return; }
    holder.replaceChildren(
      p.capped ? h("p", { id: "packets-capped" }, `Showing the first ${p.listed} of ${p.count} packets.`) : h("p", { class: "muted" }, `${p.count} packets.`),
      h("table", {}, h("thead", {}, h("tr", {}, h("th", {}, "#"), h("th", {}, "When"), h("th", {}, "Direction"), h("th", {}, "Meaning"), h("th", { class: "num" }, "Size"))),
        h("tbody", {}, rows.map(r => h("tr", {}, h("td", {}, h("a", { href: `#/flow/${id}/packet/${r.n}` }, r.n)),
          h("td", {}, packetOffset(r.offsetMicros)), h("td", {}, sentWord(r.direction)),
          h("td", {}, meaningWords(r.meaning), r.tcpFlags ? h("span", { class: "muted flags" }, " " + r.tcpFlags.join(" ")) : ""), h("td", { class: "num" }, bytes(r.size)))))));
  }).catch(e => document.getElementById("packets").replaceChildren(h("p", { class: "muted" }, e.message)));
}

// A packet's time relative to the connection's first, to the millisecond ("+0.004 s").
function packetOffset(micros) { return "+" + (micros / 1e6).toFixed(3) + " s"; }
// `packets.meaning` as people read it ("delivery_confirmed": "delivery confirmed").
function meaningWords(meaning) { return String(meaning).replace(/_/g, " "); }

// One flow's conversation as HAR, as `tv export har ID` writes it.
function harLink(id) {
  return checkedDownload(h("a", { href: withToken("/api/flows/" + id + "/har"), download: "flow-" + id + ".har", class: "har-link" }, "Download as HAR"));
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
      try { const messages = await api("/api/flows/" + id + "/turns?http=1"); http.replaceChildren(h("h2", {}, "As HTTP messages"), ...httpView(messages)); }
      catch (e) { http.replaceChildren(errorCard(e.message)); }
    } }, "Read as HTTP messages"));
    screen("Decrypted content of " + id, back, h("p", {}, harLink(id)), http,
      ...turns.map(turn => h("section", { class: "card" },
        h("h2", {}, sentWord(turn.direction) + " · turn " + turn.number + " · " + bytes(turn.keptBytes)
          + (turn.truncated ? " kept of " + bytes(turn.seenBytes) + (turn.cutBy === "flow_budget"
              ? " (cut; the rest of this side was not recorded)" : " (cut at 64 KiB; this side's next turn is kept again)")
            : turn.bodiesShortened ? " kept of " + bytes(turn.seenBytes) + " (HTTP/2 bodies past 64 KiB were left out)" : "")),
        h("p", {}, h("a", { href: withToken(`/api/flows/${id}/turns/${turn.number}/raw`), download: `flow-${id}-turn-${turn.number}.bin` }, "Download the whole turn")),
        turn.unreadable ? errorCard(turn.unreadable)
          : h("pre", { class: turn.text !== undefined ? "" : "hex" }, turn.text !== undefined ? textLines(turn.text) : hexDump(turn.base64)))));
  } catch (e) { screen("Decrypted content of " + id, back, errorCard(e.message)); }
}

// `tv turns ID --http --json` drawn as messages, as `tv turns --http` prints them: each
// exchange a card, each message its start line and headers, then its body (text, or hex) and
// what is known of it (a trial saw the JSON's field names as labels in a narrow column).
function httpView(doc) {
  if (!doc || doc.http === null) return [h("p", { class: "card" }, "Not read as HTTP: " + ((doc && doc.reason) || "no reason given"))];
  const parts = (doc.exchanges || []).map((x, i) => h("section", { class: "card exchange" },
    h("h3", {}, "#" + (i + 1) + (x.stream !== null && x.stream !== undefined ? " · stream " + x.stream : "")
      + (x.pushed ? " (server push)" : "") + (x.resetBy ? " · reset by " + x.resetBy : "")),
    x.request ? messageView("Request", x.request) : h("p", { class: "muted" }, "No request was recorded."),
    ...(x.interim || []).map(m => messageView("Interim response", m)),
    x.response ? messageView("Response", x.response) : h("p", { class: "muted" }, "No response was recorded.")));
  if (parts.length === 0) parts.push(h("p", { class: "muted" }, "No exchange was read."));
  for (const p of doc.problems || []) parts.push(h("p", { class: "card notice" }, sentWord(p.direction) + ", turn " + p.turn + ": " + p.reason));
  for (const n of doc.notes || []) parts.push(h("p", { class: "muted" }, n));
  return parts;
}

// The most of one body drawn (characters of text, bytes of a hex dump): a 900 KB gzip body that
// decodes to 16 MiB made a 78-million-character <pre> that took 15.6 s to draw (a trial).
const BODY_SHOWN = 65536;

// `flow`: the message's connection, for a link to its whole turn (the request screen has no
// list of turns to point to).
function messageView(title, m, flow) {
  const head = [m.startLine].concat((m.headers || []).map(([k, v]) => k + ": " + v)).join("\n");
  const b = m.body || {};
  let body = null, shownNote = null;
  if (b.text !== undefined && b.text !== null) {
    // Line ends as text, not as escaped carriage returns (a CRLF page read "<html>\x0d" on
    // every line: a trial).
    const text = textLines(b.text);
    body = text === "" ? null : h("pre", { class: "body" }, text.length > BODY_SHOWN ? text.slice(0, BODY_SHOWN) : text);
    if (text.length > BODY_SHOWN) shownNote = "Showing the first " + BODY_SHOWN.toLocaleString("en-US") + " of " + text.length.toLocaleString("en-US") + " characters.";
  } else if (b.base64) {
    // Whole base64 quads only (4 characters are 3 bytes): the first 65,538 bytes, cut to 65,536.
    const total = b.base64.length / 4 * 3 - (b.base64.endsWith("==") ? 2 : b.base64.endsWith("=") ? 1 : 0);
    const quads = Math.ceil(BODY_SHOWN / 3) * 4;
    body = h("pre", { class: "hex body" }, total > BODY_SHOWN ? hexDump(null, atob(b.base64.slice(0, quads)).slice(0, BODY_SHOWN)) : hexDump(b.base64));
    if (total > BODY_SHOWN) shownNote = "Showing the first " + BODY_SHOWN.toLocaleString("en-US") + " of " + total.toLocaleString("en-US") + " bytes.";
  }
  if (shownNote) shownNote += flow
    ? " The whole turn as it was sent downloads below; tv turns with --http --full prints every byte."
    : " Each turn as it was sent is under Download the whole turn; tv turns with --http --full prints every byte.";
  const turnLink = flow && shownNote && m.turn
    ? h("p", {}, h("a", { href: withToken(`/api/flows/${flow}/turns/${m.turn}/raw`), download: `flow-${flow}-turn-${m.turn}.bin` }, "Download the whole turn"))
    : null;
  const encodings = (b.encodings || []).length ? (b.decoded ? "decoded from " : "coded ") + b.encodings.join(", ") : null;
  // Sentences joined as clauses: each one's full stop dropped first (it read ".;": a trial).
  const facts = [b.transferredBytes ? bytes(b.transferredBytes) + " as sent" : null, encodings, b.completeness, b.note]
    .filter(Boolean).map((t, i) => (i === 0 ? t : t.charAt(0).toLowerCase() + t.slice(1)).replace(/\.$/, "")).join("; ");
  const trailers = (m.trailers || []).length ? h("pre", { class: "head" }, m.trailers.map(([k, v]) => k + ": " + v).join("\n")) : null;
  // HTTP/2 fields tv left out past its header limits: the reading's own sentence.
  const leftOut = text => text ? h("p", { class: "muted", "data-left-out": "headers" }, text) : null;
  return h("div", { class: "message" }, h("h4", {}, title), h("pre", { class: "head" }, head), leftOut(m.headersLeftOut), body,
    shownNote ? h("p", { class: "muted", "data-shown": "cut" }, shownNote) : null, turnLink, trailers, leftOut(m.trailersLeftOut),
    facts ? h("p", { class: "muted" }, facts) : null);
}

async function packet(id, n) {
  const back = h("p", {}, h("a", { href: "#/flow/" + id }, "← Connection " + id));
  screen("Packet " + n, h("p", { class: "muted" }, "Loading…"));
  try {
    const p = await api(`/api/flows/${id}/packets/${n}`);
    // The four reasons bytes are missing, each its own sentence (`tv packet`'s).
    const said = ["absence", "snapLengthCut", "displayCap", "notIP"].filter(k => p[k]).map(k => h("p", { class: "card", "data-reason": k }, p[k]));
    const sections = Object.entries(p.headers || {});
    screen("Packet " + n + " of connection " + id, back,
      dl([["Meaning", meaningWords(p.meaning) + (p.tcpFlags ? " (" + p.tcpFlags.join(", ") + ")" : "")], ["When", packetOffset(p.offsetMicros) + " into the connection, " + utc(p.timeMicros, true)],
          ["Direction", sentWord(p.direction)], ["Size", bytes(p.size) + (p.bytesKept !== null ? ", " + bytes(p.bytesKept) + " kept" : "")],
          ["Capture", p.captureFile + " at byte " + p.fileOffset]]),
      h("h2", {}, "Headers"),
      sections.length ? h("div", { id: "packet-headers" }, sections.map(([title, fields]) => h("section", { class: "card", "data-layer": title },
        h("h3", {}, title), dl(Object.entries(fields))))) : h("p", { class: "muted" }, "None read."),
      h("h2", {}, "Bytes"), ...said, p.hex ? h("pre", { class: "hex", id: "packet-hex" }, hexDump(null, hexFromPairs(p.hex))) : null);
  } catch (e) { screen("Packet " + n, back, errorCard(e.message)); }
}
