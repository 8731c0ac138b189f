import ProgramLookup

/// The program lookup's counters in `tv status`: the keys (`programs.lookedUp`, …; nested in
/// `--json` as `"programs": {"lookedUp": …}`) and the human line.
public enum ProgramLookupStatus {
    /// The counters as status keys.
    public static func values(_ c: ProgramLookup.Counters) -> [String: String] {
        ["programs.lookedUp": String(c.lookedUp), "programs.found": String(c.found), "programs.otherMachine": String(c.otherMachine),
         "programs.notKnown": String(c.notKnown),
         "programs.dropped": String(c.dropped), "programs.scans": String(c.scans),
         "programs.exact": String(c.exact), "programs.dumps": String(c.dumps)]
    }

    /// `3 looked up: 2 named, 1 not known`, with `, 1 from another machine` when clients on other
    /// machines were looked up (no local program to name: not "not known", a trial) and `, 4 not
    /// looked up (too many waiting)` when requests were dropped; nil when the status has no
    /// program counters (an older session).
    public static func line(_ values: [String: String]) -> String? {
        guard let looked = values["programs.lookedUp"].flatMap(UInt64.init) else { return nil }
        let found = values["programs.found"].flatMap(UInt64.init) ?? 0
        let remote = values["programs.otherMachine"].flatMap(UInt64.init) ?? 0
        let notKnown = values["programs.notKnown"].flatMap(UInt64.init) ?? 0
        let dropped = values["programs.dropped"].flatMap(UInt64.init) ?? 0
        var text = "\(looked) looked up: \(found) named"
        if remote > 0 { text += ", \(remote) from \(remote == 1 ? "another machine" : "other machines")" }
        text += ", \(notKnown) not known"
        if dropped > 0 { text += ", \(dropped) not looked up (too many waiting)" }
        return text
    }
}
