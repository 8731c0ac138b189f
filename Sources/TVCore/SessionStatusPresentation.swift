import FlowTerms
import TVHome

/// How `tv status` shows a live session's values (the control socket's `status` answer: a flat
/// map of names to decimal or word text).
///
/// The JSON is for programs: every key is camelCase with no spaces. A dotted name groups: the
/// closed flows by status (`closed.keptPrivate`), the recording's losses (`recording.flowsWaiting`)
/// and the TUN's counters (`tunnel.dropped.icmp`) become nested objects (`"closed": {"keptPrivate": 2}`),
/// so `jq .closed.keptPrivate` reads one; numbered names (`errors.1.reason`) become a list in
/// number order. Decimal text becomes a number, anything else a string.
public enum SessionStatusPresentation {
    /// What starts a session, said where none runs (`tv status`, `tv diag`, `tv top`): both
    /// kinds (they named only `tv run`, and a trial's `tv exec` user was left to guess).
    public static let startOne = "start one with `tv run`, or run one command through tv with `tv exec -- CMD`"

    /// `tv status` with no session live on `folder`.
    public static func noSession(folder: String) -> String {
        "No tv session is running for \(folder); \(startOne)."
    }

    /// The control-socket name of the count of flows closed with `status` (`closed.keptPrivate`).
    public static func closedKey(_ status: FlowStatus) -> String { "closed." + status.key }

    /// `tv status --json` for a running session: `"running": true`, then the values by name
    /// (sorted), dotted names nested.
    public static func json(_ values: [String: String]) -> JSONValue {
        let leaves = values.keys.sorted().map { key -> ([String], JSONValue) in
            let text = values[key]!
            return (key.split(separator: ".", omittingEmptySubsequences: false).map(String.init), Int64(text).map { .int($0) } ?? .string(text))
        }
        var fields = nest(leaves)
        // A list with no member yet is an empty list, not a missing key (a re-check's script
        // failed on `errors` before the first failure).
        for name in listNames where !fields.contains(where: { $0.0 == name }) { fields.append((name, .array([]))) }
        return .object([("running", .bool(true))] + fields.sorted { $0.0 < $1.0 })
    }

    /// The numbered names that are lists (`errors.1.reason`, `talkers.1.host`).
    static let listNames = ["errors", "talkers"]

    /// Leaves sorted by path; a path's first name shared by several leaves becomes one object.
    private static func nest(_ leaves: [([String], JSONValue)]) -> [(String, JSONValue)] {
        var out: [(String, JSONValue)] = []
        var i = 0
        while i < leaves.count {
            let (path, value) = leaves[i]
            guard path.count > 1 else {
                out.append((path[0], value))
                i += 1
                continue
            }
            var group: [([String], JSONValue)] = []
            while i < leaves.count, leaves[i].0.count > 1, leaves[i].0[0] == path[0] {
                group.append((Array(leaves[i].0.dropFirst()), leaves[i].1))
                i += 1
            }
            let members = nest(group)
            // Numbered members (`errors.1.reason`, `talkers.2.host`) are a list, in number order
            // (they came out as objects keyed "1", "2": a trial).
            let numbers = members.compactMap { name, _ in name.utf8.allSatisfy { (0x30...0x39).contains($0) } ? Int(name) : nil }
            if numbers.count == members.count {
                out.append((path[0], .array(zip(numbers, members).sorted { $0.0 < $1.0 }.map { $0.1.1 })))
            } else {
                out.append((path[0], .object(members)))
            }
        }
        return out
    }

    /// The `clients` line: how many client legs ended as each of the three kinds
    /// (`ClientLegOutcome`), "2 lacked tv's root, 1 left without a handshake"; nil when all are 0.
    public static func clientOutcomes(_ values: [String: String]) -> String? {
        let counts = [("clientLacksRoot", "lacked tv's root"), ("possiblePinning", "possible pinning"), ("clientLeft", "left without a handshake")]
            .compactMap { key, words in values[key].flatMap { $0 == "0" ? nil : "\(TerminalText.line($0)) \(words)" } }
        return counts.isEmpty ? nil : counts.joined(separator: ", ")
    }

    /// The `closed` line's counts, "0 encrypted, 0 failed, 1 inspected, 0 kept private, 0 not
    /// encrypted" (by the status's words, alphabetically); nil when the values carry none.
    public static func closedCounts(_ values: [String: String]) -> String? {
        let counts = FlowStatus.allCases.compactMap { status in values[closedKey(status)].map { (status.words, $0) } }
        guard !counts.isEmpty else { return nil }
        return counts.sorted { $0.0 < $1.0 }.map { "\(TerminalText.line($0.1)) \($0.0)" }.joined(separator: ", ")
    }
}
