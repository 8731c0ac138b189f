// tv web: Captures (the files, the Recording mark, room left, rotate, delete, download). Helpers
// come from app.js (loaded first).
"use strict";

async function captures() {
  screen("Captures", h("p", { class: "muted" }, "Loading…"));
  try {
    const list = await api("/api/captures");
    const all = Array.isArray(list) ? list : (list.files || list.captures || []);
    const files = all.filter(f => f.kind !== "decrypted");
    const decrypted = all.filter(f => f.kind === "decrypted");
    let room = null;
    try { room = (await api("/api/captures/room")).said; } catch (e) { room = e.message; }
    const rows = files.map(f => h("tr", {}, h("td", {}, "capture " + f.seq, f.recording ? h("span", { class: "badge" }, " ● Recording") : ""),
      h("td", { class: "num" }, bytes(f.bytes)), h("td", { class: "hide-narrow" }, utc(f.startedMicros, true)),
      h("td", {}, f.recording ? null : h("a", { href: withToken(`/api/captures/${f.seq}/file`), download: "" }, "Download"), " ",
        f.recording ? h("span", { class: "muted" }, "being written") : h("button", { type: "button", onclick: async event => {
        const button = event.currentTarget;
        if (!confirm(`Delete capture ${f.seq} (${bytes(f.bytes)}, ${f.packets} packets)? The connections stay in your history; only the raw packet bytes go, and they do not come back.`)) return;
        try { await post(`/api/captures/${f.seq}/delete`); captures(); } catch (e) { sayBeside(button, e.message); }
      } }, "Delete"))));
    screen("Captures",
      files.length ? h("table", {}, h("thead", {}, h("tr", {}, h("th", {}, "File"), h("th", { class: "num" }, "Size"), h("th", { class: "hide-narrow" }, "Started"), h("th", {}, ""))), h("tbody", {}, rows))
                   : h("p", {}, "No capture files. Captures are written in the TUN modes (`tv run --mode tun`, `tv exec`)."),
      h("p", {}, h("button", { type: "button", onclick: async event => { const button = event.currentTarget; try { await post("/api/captures/rotate"); captures(); } catch (e) { sayBeside(button, e.message); } } }, "Start a new capture file")),
      decrypted.length ? h("h2", {}, "Decrypted captures") : null,
      decrypted.length ? h("p", { class: "muted" }, "Inspected connections' plaintext as TCP, one file per session, for Wireshark without keys. Content delete and retention remove them.") : null,
      decrypted.length ? h("table", { id: "decrypted-captures" }, h("thead", {}, h("tr", {}, h("th", {}, "File"), h("th", { class: "num" }, "Size"), h("th", { class: "hide-narrow" }, "Started"), h("th", {}, ""))),
        h("tbody", {}, decrypted.map(f => h("tr", {}, h("td", {}, f.name, f.recording ? h("span", { class: "badge" }, " ● Recording") : ""),
          h("td", { class: "num" }, bytes(f.bytes)), h("td", { class: "hide-narrow" }, utc(f.startedMicros, true)),
          h("td", {}, f.recording ? h("span", { class: "muted" }, "being written") : h("a", { href: withToken(`/api/captures/decrypted/${encodeURIComponent(f.name)}/file`), download: "" }, "Download")))))) : null,
      h("h2", {}, "Room left"), h("pre", {}, room || ""));
  } catch (e) { screen("Captures", errorCard(e.message)); }
}
