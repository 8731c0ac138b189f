// tv web: Settings, and the screens it leads to: Storage, TLS inspection setup and Session
// diagnostics (the seed's layouts). Helpers come from app.js (loaded first).
"use strict";

// ---- Settings ------------------------------------------------------------------------------

// The seed's groups, in its order: secure traffic first, the decrypted content directly under it
// (what makes the second switch comprehensible is the first one right above), then what is kept.
const SETTING_GROUPS = [
  ["Secure traffic", ["inspection.enabled", "trust.store", "tls.clientCerts"],
   "Looking inside your own TLS connections needs a certificate authority made here and trusted by this machine."],
  ["Decrypted content", ["content.keep", "content.expiry", "content.flowBudget"],
   "Inspecting looks inside traffic while it happens; keeping content writes a copy of what was decoded to disk. It can only be turned on with inspection on, and always off. There is no “forever”."],
  ["Requests", ["requests.record", "log.requests"], null],
  ["Packet capture", ["capture.enabled", "capture.snaplen", "capture.rotateBytes", "capture.rotateAge", "capture.decrypted"],
   "Captures are written in the TUN modes (tv exec, --mode tun). The snap length belongs to the file: a change applies when the next session starts."],
  ["Storage limits", ["captures.maxBytes", "captures.maxAge", "history.maxAge"],
   "Limits are applied when they change and while a session runs. The file being recorded is never deleted; the way out is a new capture file."],
  ["Shared store", ["store.url"], null],
  ["Introduction", ["intro.seen"], "Skipping the introduction counts as seen; `tv intro` shows it again."],
];
// The choices a setting takes when they are few (the rest are typed, in the units the meaning names).
const SETTING_CHOICES = { "content.expiry": ["1h", "1d", "1w"] };

function settingText(value) {
  if (typeof value === "boolean") return value ? "on" : "off";
  if (Array.isArray(value)) return value.length ? JSON.stringify(value) : "";
  if (value === null || value === undefined) return "";
  return String(value);
}

// One setting: its name and meaning, its value (with the default said), and the control that
// changes it (`tv settings set`), or where it is changed instead.
function settingRow(s, said) {
  const id = "setting-" + s.name.replace(/\W/g, "-");
  const current = settingText(s.value);
  let control;
  if (s.name === "inspection.enabled") {
    control = h("p", {}, "Turned on and off with `tv inspect on|off`, which checks trust first. ",
      h("a", { href: "#/setup" }, s.value ? "Manage your certificate" : "Set up secure traffic inspection"));
  } else {
    let input;
    const choices = typeof s.default === "boolean" ? ["on", "off"] : SETTING_CHOICES[s.name];
    if (choices) input = h("select", { id, name: s.name }, choices.map(c => h("option", { value: c, selected: c === current }, c)));
    else input = h("input", { id, name: s.name, type: "text", value: current, spellcheck: "false", autocomplete: "off" });
    control = h("form", { class: "inline", "data-setting": s.name, onsubmit: async e => {
      e.preventDefault();
      const out = e.target.querySelector("[role=status]");
      out.replaceChildren(h("span", { class: "muted" }, "Saving…"));
      try {
        // A limit that deletes what is kept at once is saved only when agreed to, as `--yes`
        // is on the command line: tv says how much it deletes, and the page asks that. The yes
        // names the count asked about: tv asks again if saving would now delete more.
        let answer = null;
        let sent = { key: s.name, value: input.value, yes: false };
        while (answer === null) {
          try {
            answer = await post("/api/settings", sent);
          } catch (err) {
            if (err.status !== 409 || !err.consent || err.deletes === null) throw err;
            if (!confirm(err.consent)) {
              // The field shows the value in force again, not the one declined (a re-check).
              input.value = current;
              out.replaceChildren(h("p", { class: "said" }, "Not saved: " + s.name + " stays " + (current || "none") + "."));
              return;
            }
            sent = { key: s.name, value: input.value, agreed: err.deletes };
          }
        }
        // Everything is read again: a change may have changed others (limits applied, a session told).
        settings({ name: s.name, said: answer.said });
      } catch (err) { out.replaceChildren(errorCard(err.message)); }
    } }, h("label", { for: id, class: "visually-hidden" }, "New value of " + s.name), input,
      h("button", { type: "submit" }, "Save"), h("div", { role: "status" }, said ? h("p", { class: "said" }, said) : null));
  }
  const byDefault = s.saved ? null : h("span", { class: "badge" }, "default");
  // A snap length of 0 keeps whole packets (it read "0 (0 B)": a trial).
  const size = s.name === "capture.snaplen" && Number(s.value) === 0 ? " (whole packets)"
    : s.name === "content.flowBudget" || s.name === "capture.snaplen" ? " (" + bytes(s.value) + ")" : "";
  // The running session's own switches (`tv run --keep-content`, `--inspect`) hold against the
  // saved value: said beside it (Settings read "content.keep off" beside a session keeping
  // content, and a Save of off changed nothing: a trial).
  const session = live.top && live.top.state === "live" ? live.top.session : null;
  const held = !session ? null
    : s.name === "content.keep" && !s.value && session.contentKeeping === "on" ? "The running session keeps content anyway: it was started with --keep-content; this value applies from its next start."
    : s.name === "inspection.enabled" && !s.value && session.inspection === "on" ? "The running session inspects anyway: it was started with --inspect; `tv inspect off` stops it."
    : null;
  return h("div", { class: "setting", id: "row-" + id },
    h("div", { class: "setting-head" }, h("strong", {}, s.name), " ", h("span", { class: "value" }, (current || "none") + size), " ", byDefault),
    h("p", { class: "muted meaning" }, s.meaning), held ? h("p", { class: "notice", "data-held": s.name }, held) : null, control);
}

async function settings(justSaved) {
  screen("Settings", h("p", { class: "muted" }, "Loading…"));
  try {
    const list = await api("/api/settings/meanings");
    // The session's own switches are said beside the values (`settingRow`): known before drawing.
    if (!live.top) { try { live.top = await api("/api/top"); } catch (e) { /* no session: nothing held */ } }
    const known = new Set(SETTING_GROUPS.flatMap(g => g[1]));
    const groups = SETTING_GROUPS.concat([["Other", list.filter(s => !known.has(s.name)).map(s => s.name), null]]);
    const said = name => justSaved && justSaved.name === name ? justSaved.said : null;
    screen("Settings",
      h("p", {}, "Saved first, then a running session is told; a change that could not be saved is not shown as saved."),
      ...groups.filter(g => g[1].length).map(([title, names, footer]) => h("section", { class: "card settings-group", "aria-label": title },
        h("h2", {}, title),
        ...names.map(n => list.find(s => s.name === n)).filter(Boolean).map(s => settingRow(s, said(s.name))),
        footer ? h("p", { class: "muted footer-note" }, footer) : null)),
      h("section", { class: "card" }, h("h2", {}, "More"),
        h("ul", {}, h("li", {}, h("a", { href: "#/storage" }, "Storage: what each store holds beside its limit")),
          h("li", {}, h("a", { href: "#/setup" }, "TLS inspection setup")),
          h("li", {}, h("a", { href: "#/diagnostics" }, "Session diagnostics")))));
  } catch (e) { screen("Settings", errorCard(e.message)); }
}

// ---- Storage -------------------------------------------------------------------------------

// A limit in µs as `tv storage` says it ("30 days", "12 hours", "90 minutes").
function ageWords(micros) {
  const s = Math.round(micros / 1e6);
  const unit = (n, word) => n + " " + word + (n === 1 ? "" : "s");
  if (s % 86400 === 0) return unit(s / 86400, "day");
  if (s % 3600 === 0) return unit(s / 3600, "hour");
  if (s % 60 === 0) return unit(s / 60, "minute");
  return unit(s, "second");
}

// `tv storage --json` drawn as `tv storage` says it: each store's size beside its limit, then the total.
async function storage() {
  const back = h("p", {}, h("a", { href: "#/settings" }, "← Settings"));
  screen("Storage", back, h("p", { class: "muted" }, "Loading…"));
  try {
    const st = await api("/api/storage");
    const hist = st.history || {}, cap = st.captures || {}, dec = st.decryptedCaptures || {}, con = st.content || {};
    const count = (n, one, many) => n.toLocaleString("en-US") + " " + (n === 1 ? one : many);
    const rows = [
      ["History", bytes(hist.bytes) + ", " + count(hist.flows || 0, "connection", "connections")
        + (hist.oldestStart ? " since " + utc(hist.oldestStart, true) : "") + "; kept " + (hist.maxAgeMicros ? ageWords(hist.maxAgeMicros) : "without an age limit")
        + (hist.freeBytes ? " (" + bytes(hist.freeBytes) + " free inside the file, for reuse; `tv storage compact` gives it back)" : "")],
      ["Captures", bytes(cap.bytes) + " in " + count(cap.files || 0, "file", "files") + (cap.maxBytes ? " of " + bytes(cap.maxBytes) : ", no size limit")
        + (cap.maxAgeMicros ? "; each kept " + ageWords(cap.maxAgeMicros) + " after it closes" : "")
        + (cap.recording ? "; capture " + cap.recording + " is being recorded (never deleted)" : "")
        + (cap.notInHistory && cap.notInHistory.files ? "; " + count(cap.notInHistory.files, "file", "files") + " (" + bytes(cap.notInHistory.bytes) + ") the history does not describe, left alone" : "")],
      dec.files ? ["Decrypted captures", bytes(dec.bytes) + " in " + count(dec.files, "file", "files")] : null,
      ["Decrypted content", bytes(con.bytes) + " of a fixed " + bytes(con.ceilingBytes) + (con.expiry ? "; kept " + ({ "1h": "1 hour", "1d": "1 day", "1w": "1 week" }[con.expiry] || con.expiry) : "")],
      ["Total", bytes(st.totalBytes)],
    ];
    screen("Storage", back, h("section", { class: "card", id: "storage" }, dl(rows)),
      h("p", { class: "muted" }, "Limits are applied when a session starts, every 10 minutes while it runs, whenever one is changed (Settings, Storage limits), and on `tv storage apply`."));
  } catch (e) { screen("Storage", back, errorCard(e.message)); }
}

// ---- TLS inspection setup ------------------------------------------------------------------

// The seed's steps (002): what inspection means, create, install and trust (2+3 together), ready.
const SETUP_STEPS = [["explain", "0", "What inspection means"], ["create", "1", "Create the certificate"],
                     ["installAndTrust", "2+3", "Install and trust the root"], ["ready", "4", "Ready to inspect"]];

async function setup() {
  screen("TLS inspection setup", h("p", { class: "muted" }, "Asking the trust store…"));
  try {
    const ca = await api("/api/ca");
    const st = ca.stage || {};
    const state = st.state || {};
    const current = st.step === "inspecting" ? "ready" : st.step;
    const at = SETUP_STEPS.findIndex(([step]) => step === current);
    const steps = h("ol", { class: "steps", id: "setup-steps" }, SETUP_STEPS.map(([step, number, title], i) => {
      const mark = st.step === "closedDoor" ? "" : i < at || st.step === "inspecting" ? "✓ done" : i === at ? "● now: " + (state.word || "") : "○ to do";
      return h("li", { class: i === at ? "now" : "", "aria-current": i === at ? "step" : null },
        h("span", { class: "step-number" }, "Step " + number), " ", h("strong", {}, title), " ", h("span", { class: "step-mark" }, mark));
    }));
    const partial = state.done || state.missing
      ? h("div", { class: "card partial", id: "setup-partial" }, h("h3", {}, "Partly done"),
          state.done ? h("p", {}, "✓ " + state.done) : null, state.missing ? h("p", {}, "✗ Still missing: " + state.missing) : null)
      : null;
    const stores = (ca.stores || []).length
      ? h("table", {}, h("thead", {}, h("tr", {}, h("th", {}, "Trust store"), h("th", {}, "Installed"), h("th", {}, "Trusted for TLS"), h("th", { class: "hide-narrow" }, "Finding"))),
          h("tbody", {}, ca.stores.map(t => h("tr", {}, h("td", {}, t.store),
            h("td", {}, t.installed + (t.installedBecause ? " — " + t.installedBecause : "")),
            h("td", {}, t.usable + (t.usableBecause ? " — " + t.usableBecause : "")),
            h("td", { class: "hide-narrow" }, t.findingText || "")))))
      : h("p", { class: "muted" }, "No trust store was asked: there is no certificate to look for yet.");
    screen("TLS inspection setup",
      h("p", {}, "The stage is read from the trust store on every visit, never remembered. `tv setup` walks the same steps in a terminal."),
      steps,
      h("div", { class: "card", role: "status", id: "setup-stage" },
        h("h2", {}, (st.number ? "Step " + st.number + ": " : "") + (st.title || "")),
        h("p", {}, h("strong", {}, state.word || "")),
        state.waitingFor ? h("p", {}, "Waiting for: " + state.waitingFor) : null,
        state.reason ? h("p", {}, state.reason + (state.retry ? " " + state.retry : "")) : null,
        st.meaning ? h("p", {}, st.meaning) : null,
        st.notice ? h("p", { class: "notice" }, st.notice) : null,
        st.nextStep ? h("p", {}, h("strong", {}, "Next: "), st.nextStep) : null,
        st.nextCommand ? h("pre", {}, st.nextCommand) : null),
      partial,
      h("h2", {}, "Inspection"), h("p", {}, "Inspection is " + (ca.inspection || "unknown") + " in the settings."
        + (st.canTurnInspectionOn && ca.inspection !== "on" ? " It can be turned on now: `tv inspect on`." : "")
        // The running session's own switch (`tv run --inspect` inspects whatever the setting).
        + (live.top && live.top.state === "live" && live.top.session && live.top.session.inspection === "on" && ca.inspection !== "on"
          ? " The running session inspects anyway: it was started with --inspect." : "")),
      (ca.notices || []).length ? h("div", { class: "card" }, ca.notices.map(n => h("p", {}, n))) : null,
      h("h2", {}, "The trust stores asked"), stores,
      h("p", { class: "muted" }, "The certificate: " + (ca.state || "unknown") + (ca.directory ? ", in " + ca.directory : "") + "."));
  } catch (e) { screen("TLS inspection setup", errorCard(e.message)); }
}

// ---- Session diagnostics -------------------------------------------------------------------

async function diagnostics() {
  screen("Session diagnostics", h("p", { class: "muted" }, "Loading…"));
  try {
    const d = await api("/api/diag");
    const sections = (d.sections || []).map(sec => h("section", { class: "card diag-section", "aria-label": sec.title },
      h("h2", {}, sec.title),
      h("table", {}, h("tbody", {}, sec.rows.map(r => r.label === null
        ? h("tr", {}, h("td", { colspan: 2 }, r.value))
        : h("tr", {}, h("th", { scope: "row" }, r.label), h("td", {}, r.value)))))));
    screen("Session diagnostics",
      // Flows not being saved lead, as in `tv diag` (a full disk read "Inspection is working").
      ...(d.unsavedFlows || []).map(u => h("div", { class: "card error", role: "alert", id: "diag-unsaved" }, u.sentence)),
      // Name resolution goes next, and only when something is wrong.
      d.nameResolution ? h("div", { class: "card error", role: "alert", id: "diag-names" }, d.nameResolution) : null,
      // The sentence is the screen.
      h("div", { class: "card verdict", role: "status", id: "diag-verdict", "data-case": d.verdict ? d.verdict.case : "" },
        h("strong", {}, d.verdict ? d.verdict.sentence : "")),
      d.running ? null : h("p", { class: "muted" }, "With no session running there is nothing to count: the counters start at zero with every session."),
      ...sections);
  } catch (e) { screen("Session diagnostics", errorCard(e.message)); }
}
