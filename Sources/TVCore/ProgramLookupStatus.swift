import ProgramLookup

/// The program lookup's counters as `tv status` keys (`programs.lookedUp`, …).
public enum ProgramLookupStatus {
    public static func values(_ c: ProgramLookup.Counters) -> [String: String] {
        ["programs.lookedUp": String(c.lookedUp), "programs.found": String(c.found), "programs.notKnown": String(c.notKnown),
         "programs.dropped": String(c.dropped), "programs.scans": String(c.scans)]
    }
}
