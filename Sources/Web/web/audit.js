// tv web: Audit — projects, each with its sessions; a session's span, flows and markers in one
// list by time, and its evidence bundle (`tv audit bundle`) as a download. Helpers come from
// app.js, the flow rows from timeline.js (both loaded first).
"use strict";

function span(session) {
  return utc(session.started, true) + " – " + (session.ended === null || session.ended === undefined ? "still recording" : utc(session.ended, true));
}

async function audit(id) {
  screen("Audit", h("p", { class: "muted" }, "Loading…"));
  try {
    if (id) { await auditSession(id); return; }
    const [projects, sessions] = await Promise.all([api("/api/audit/projects"), api("/api/audit/sessions")]);
    const recording = sessions.find(s => s.ended === null || s.ended === undefined);
    const cards = projects.map(p => {
      const own = sessions.filter(s => s.project === p.name);
      return h("section", { class: "card", "data-project": p.name },
        h("h2", {}, p.name), p.note ? h("p", {}, p.note) : null,
        h("p", { class: "muted" }, "Made " + utc(p.created, true) + " · " + p.sessions + (p.sessions === 1 ? " session" : " sessions")),
        own.length === 0 ? h("p", { class: "muted" }, "No sessions yet: `tv audit start " + p.name + "` or `tv run --audit " + p.name + "` records one.")
          : h("ul", { class: "sessions" }, own.map(s => h("li", { "data-session": s.id },
              h("a", { href: "#/audit/" + s.id }, "Session " + s.id), " · " + span(s), s.note ? " · " + s.note : "",
              s.ended === null || s.ended === undefined ? h("span", { class: "badge" }, " ● Recording") : null))));
    });
    screen("Audit",
      recording ? h("div", { class: "card", role: "status" }, h("strong", {}, "● Recording: "), "session " + recording.id + " of " + recording.project + " since " + utc(recording.started, true)) : null,
      projects.length === 0 ? h("div", { class: "card" }, h("strong", {}, "No projects yet."),
        h("p", {}, "`tv audit project new NAME` makes one; `tv run --audit NAME` records a session in it.")) : null,
      ...cards);
  } catch (e) { screen("Audit", errorCard(e.message)); }
}

async function auditSession(id) {
  const back = h("p", {}, h("a", { href: "#/audit" }, "← Audit"));
  const shown = await api("/api/audit/sessions/" + encodeURIComponent(id));
  const s = shown.session;
  const flows = await api("/api/flows?limit=200&audit=" + encodeURIComponent(id));
  // Flows and markers in one list by time, newest first (as the Timeline).
  const items = flows.flows.map(f => ({ at: f.startTime, node: flowRow(f) }))
    .concat(shown.markers.map(m => ({ at: m.time, node: h("li", { class: "marker", "data-marker": m.id },
      h("span", { class: "marker-mark" }, "⚑ Marker"), h("span", {}, utc(m.time, true)), h("strong", {}, m.text)) })))
    .sort((a, b) => b.at - a.at);
  const content = h("input", { type: "checkbox", id: "bundle-content", checked: true });
  const keys = h("input", { type: "checkbox", id: "bundle-keys", checked: true });
  const link = h("a", { id: "bundle-download", class: "button primary", download: "audit-session-" + id + ".tar.gz" }, "Download the evidence bundle");
  const aim = () => {
    const q = new URLSearchParams();
    if (!content.checked) q.set("content", "no");
    if (!keys.checked) q.set("keys", "no");
    link.setAttribute("href", withToken("/api/audit/sessions/" + id + "/bundle" + (q.toString() ? "?" + q : "")));
  };
  content.addEventListener("change", aim);
  keys.addEventListener("change", aim);
  aim();
  screen("Audit session " + id, back,
    dl([["Project", s.project], ["Note", s.note || "none"], ["Span", span(s)],
        ["Connections", String(shown.flows)], ["Bytes", "↓ " + bytes(shown.bytesDown) + " received, ↑ " + bytes(shown.bytesUp) + " sent"],
        ["Packets", String(shown.packets) + (shown.captures.length ? " in captures " + shown.captures.join(", ") : "")],
        ["Decrypted content", shown.contentTurns + (shown.contentTurns === 1 ? " turn kept" : " turns kept")],
        ["Ran with", auditSettingsWords(s.settings) || "no session was live"]]),
    h("section", { class: "card", "aria-label": "Evidence bundle" }, h("h2", {}, "Evidence bundle"),
      h("p", {}, "One .tar.gz anyone can check with `tv audit verify`: the flows, the captured packets, and unless left out the decrypted content and the TLS secrets. It is written as `tv audit bundle` writes it and removed from this machine's temporary folder once sent."),
      h("p", {}, h("label", { class: "check" }, content, "Include decrypted content (turns, HAR, decrypted capture)"),
        h("label", { class: "check" }, keys, "Include TLS secrets (keys.log)")),
      h("p", {}, link)),
    h("h2", {}, "Hosts"), shown.hosts.length ? talkersOf(shown.hosts, "Host") : h("p", { class: "muted" }, "None."),
    h("h2", {}, "Flows and markers"),
    items.length ? h("ul", { class: "rows", id: "rows" }, items.map(i => i.node)) : h("p", { class: "muted" }, "No connections and no markers in this session."),
    flows.nextCursor ? h("p", { class: "muted" }, "The first 200 connections are shown; `tv flows --audit " + id + "` lists them all.") : null);
}

function talkersOf(rows, word) {
  return h("table", {}, h("thead", {}, h("tr", {}, h("th", {}, word), h("th", { class: "num" }, "Flows"))),
    h("tbody", {}, rows.map(r => h("tr", {}, h("td", {}, r.name), h("td", { class: "num" }, r.flows)))));
}

// An audit session's settings in words: the mode's label (not also its key), the address,
// inspection; other keys as they are (a trial read "modeLabel explicit proxy").
function auditSettingsWords(settings) {
  const v = settings || {};
  const words = [];
  if (v.modeLabel || v.mode) words.push(v.modeLabel || v.mode);
  if (v.listen) words.push("on " + v.listen);
  if (v.inspection) words.push("inspection " + v.inspection);
  for (const [k, val] of Object.entries(v)) if (!["mode", "modeLabel", "listen", "inspection", "pid"].includes(k)) words.push(k + " " + val);
  if (v.pid) words.push("pid " + v.pid);
  return words.join(", ");
}
