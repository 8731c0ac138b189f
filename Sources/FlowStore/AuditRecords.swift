import TVHome

/// An audit project: a name the auditor chose, a note, and its sessions (`audit_projects`).
public struct AuditProject: Sendable, Equatable {
    public var id: Int64
    /// Unique among projects, as typed.
    public var name: String
    public var note: String
    /// When it was made (µs since the epoch).
    public var created: Int64
    /// How many sessions it holds (filled by the listing; 0 elsewhere).
    public var sessions: Int

    public init(id: Int64, name: String, note: String, created: Int64, sessions: Int = 0) {
        self.id = id
        self.name = name
        self.note = note
        self.created = created
        self.sessions = sessions
    }
}

/// The audit session recording while a batch of flows is written (`audit_sessions` with no end):
/// its id and start. A flow is its when the flow started at or after that start ("its new flows
/// belong to it from now"): the writer writes in batches, so a flow that began, and even ended,
/// just before `tv audit start` could be first written after it, and was put in the session
/// (its start before the bundle's span, its TLS secrets not in the bundle: a trial).
public struct LiveAuditSession: Sendable, Equatable {
    public let id: Int64
    /// µs since the epoch.
    public let startedMicros: Int64

    public init(id: Int64, startedMicros: Int64) {
        self.id = id
        self.startedMicros = startedMicros
    }

    /// The session `flow` belongs to: this one's id, or nil for a flow that started before it.
    public func id(for flow: FlowRecord) -> Int64? { flow.startTime >= startedMicros ? id : nil }

    /// Reads the live session (none: nil): the first row in id order when several are open.
    static let selectSQL = "SELECT id, started FROM audit_sessions WHERE ended IS NULL ORDER BY id LIMIT 1"
}

/// One audit session (`audit_sessions`): a stretch of recording inside a project. It holds the
/// flows first written while it was open that started after it began (`flows.audit_session_id`,
/// `LiveAuditSession`) and what hangs off them.
public struct AuditSession: Sendable, Equatable {
    public var id: Int64
    public var projectID: Int64
    public var projectName: String
    public var note: String
    /// µs since the epoch.
    public var started: Int64
    /// µs since the epoch; nil while it records.
    public var ended: Int64?
    /// The mode and settings it ran with: a JSON object as text (`{}` when no session was live).
    public var settings: String

    public init(id: Int64, projectID: Int64, projectName: String, note: String, started: Int64, ended: Int64?, settings: String) {
        self.id = id
        self.projectID = projectID
        self.projectName = projectName
        self.note = note
        self.started = started
        self.ended = ended
        self.settings = settings
    }

    /// True while it records.
    public var isLive: Bool { ended == nil }
}

/// A timestamped note inside a session (`audit_markers`).
public struct AuditMarker: Sendable, Equatable {
    public var id: Int64
    public var sessionID: Int64
    /// µs since the epoch.
    public var time: Int64
    public var text: String

    public init(id: Int64, sessionID: Int64, time: Int64, text: String) {
        self.id = id
        self.sessionID = sessionID
        self.time = time
        self.text = text
    }
}

/// What a session holds, counted (`tv audit show`, the deletion's question).
public struct AuditSessionSummary: Sendable, Equatable {
    public var flows = 0
    public var bytesUp: Int64 = 0
    public var bytesDown: Int64 = 0
    /// Hosts by flows, most first (ties by name); a flow with no name counts under its address.
    public var hosts: [AuditCount] = []
    /// Programs (command names) by flows, most first; unknown programs are not listed.
    public var programs: [AuditCount] = []
    /// Packet rows of its flows.
    public var packets = 0
    /// Capture files (sequences) holding its packets, not deleted.
    public var captures: [Int] = []
    /// Kept content turns of its flows.
    public var contentTurns = 0
    public var markers = 0

    public init() {}
}

/// A name and how many flows it had.
public struct AuditCount: Sendable, Equatable {
    /// The host or program; nil for flows whose program is not known (`tv top`'s "not known").
    public var name: String?
    public var flows: Int
    public init(_ name: String?, _ flows: Int) {
        self.name = name
        self.flows = flows
    }
}

/// What deleting a session took: its markers, and the exemption from retention of its flows.
public struct AuditDeletion: Sendable, Equatable {
    public var session: AuditSession
    public var markers: Int
    /// Flows no longer evidence (kept in the history; retention may now take them).
    public var flowsReleased: Int

    public init(session: AuditSession, markers: Int, flowsReleased: Int) {
        self.session = session
        self.markers = markers
        self.flowsReleased = flowsReleased
    }
}

/// What an audit project's name and a marker's text may hold.
public enum AuditLimits {
    /// Characters in a project's name.
    public static let name = 100
    /// Characters in a marker's text, and in a project's or session's note.
    public static let marker = 2_000

    /// Whether `name` can name a project: 1…`name` characters, no control character and no
    /// invisible one (general category Cf: a bidirectional override, which reorders what a
    /// listing shows, a zero-width space, which made a name nobody could type back: a trial; and
    /// Unicode's default-ignorable code points, drawn as nothing: the Hangul filler, a variation
    /// selector, the combining grapheme joiner made names that listed alike: a re-check), no
    /// whitespace at either end.
    /// An emoji sequence's joiners and selectors are kept where they draw a picture (a trial's
    /// family emoji 👨‍👩‍👧 was refused for its zero-width joiners): see `emojiHolds`.
    public static func isProjectName(_ name: String) -> Bool {
        guard let first = name.first, let last = name.last, name.count <= self.name else { return false }
        return !first.isWhitespace && !last.isWhitespace
            && name.allSatisfy { character in
                let scalars = Array(character.unicodeScalars)
                return scalars.indices.allSatisfy { i in
                    let p = scalars[i].properties
                    let invisible = [.control, .format].contains(p.generalCategory) || p.isDefaultIgnorableCodePoint
                    return !invisible || emojiHolds(scalars, at: i)
                }
            }
    }

    /// Whether the invisible scalar at `i` of one character's `scalars` is part of an emoji
    /// sequence (Unicode TS #51 §1.4): a zero-width joiner (U+200D) between two emoji, a
    /// variation selector (U+FE0E, U+FE0F) right after an emoji, or the tag characters (U+E0020…
    /// U+E007E, ended by U+E007F) of a flag after the black flag U+1F3F4. Anywhere else they draw
    /// nothing, and a name holding one lists like a name without it.
    static func emojiHolds(_ scalars: [Unicode.Scalar], at i: Int) -> Bool {
        let value = scalars[i].value
        let previous = i > 0 ? scalars[i - 1] : nil
        switch value {
        case 0x200D:
            guard let previous, i + 1 < scalars.count else { return false }
            let next = scalars[i + 1]
            return (isPicture(previous) || [0xFE0F, 0xFE0E].contains(previous.value)) && isPicture(next)
        case 0xFE0E, 0xFE0F:
            // A digit, `#` or `*` is an emoji only as a keycap (followed by U+20E3).
            guard let previous else { return false }
            return isPicture(previous) || (previous.properties.isEmoji && i + 1 < scalars.count && scalars[i + 1].value == 0x20E3)
        case 0xE0020...0xE007F:
            // Only the flags Unicode recommends (England, Scotland, Wales: UTS #51 §2.8's RGI
            // tag sequences): other tags draw nothing, and a re-check hid "ignore all" in them.
            guard scalars.count > 2, scalars.first?.value == 0x1F3F4, scalars.last?.value == 0xE007F else { return false }
            let tags = scalars.dropFirst().dropLast()
            guard tags.allSatisfy({ (0xE0020...0xE007E).contains($0.value) }) else { return false }
            let spelled = String(String.UnicodeScalarView(tags.compactMap { Unicode.Scalar($0.value - 0xE0000) }))
            return ["gbeng", "gbsct", "gbwls"].contains(spelled)
        default:
            return false
        }
    }

    /// `name` as it lists: without the joiners and variation selectors an emoji sequence may hold,
    /// so two names that draw alike (`🍕🍕` and `🍕` ZWJ `🍕`: a re-check made both) compare equal;
    /// `String`'s `==` also takes canonically equivalent spellings (é as one code point, or e and a
    /// combining accent) as equal.
    public static func skeleton(_ name: String) -> String {
        String(String.UnicodeScalarView(name.unicodeScalars.filter { ![0x200D, 0xFE0E, 0xFE0F].contains($0.value) }))
    }

    /// `name` with every invisible scalar (format characters, default-ignorable code points)
    /// written as `\u{…}` after `TerminalText.line`: a refusal quoting a name with a zero-width
    /// space showed it as the name without one (a re-check).
    public static func shown(_ name: String) -> String {
        var out = ""
        for scalar in TerminalText.line(name).unicodeScalars {
            if scalar.properties.generalCategory == .format || scalar.properties.isDefaultIgnorableCodePoint {
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// An emoji that is a picture by itself (not an ASCII digit, `#` or `*`, which have the
    /// Emoji property only for keycaps).
    private static func isPicture(_ scalar: Unicode.Scalar) -> Bool {
        !scalar.isASCII && scalar.properties.isEmoji
    }

}

/// Why an audit command could not do what was asked. One sentence each: what happened, what to do.
public enum AuditError: UserFacingError, Equatable {
    /// `tv audit project new` with a name already taken.
    case projectExists(String)
    /// A project name that names none.
    case noProject(String)
    /// An empty (or whitespace-only) name, note of a marker, …: `what` names the field.
    case empty(what: String)
    /// A session is recording already (at most one at a time).
    case sessionRecording(id: Int64, project: String)
    /// `tv audit stop` / `mark` with no session recording.
    case noLiveSession
    /// A session id that names none.
    case noSession(Int64)
    /// `tv audit delete` of the session still recording.
    case deleteLive(Int64)
    /// A project name with a control character, space at either end, or over `AuditLimits.name`
    /// characters: it would look like another name in every listing (a trial's 'app-review ').
    case badProjectName(String)
    /// A new project name that lists like an existing one (`AuditLimits.skeleton`).
    case projectLooksLike(new: String, existing: String)
    /// A marker's text over `AuditLimits.marker` characters (a trial's 100,000 were echoed whole).
    case markerTooLong(characters: Int)
    /// A project's or session's note over `AuditLimits.marker` characters (a trial's 100,000
    /// made every listing line 100,000 characters wide).
    case noteTooLong(characters: Int)

    public var message: String {
        switch self {
        case let .projectExists(name):
            return "A project named '\(TerminalText.line(name))' exists already; choose another name or use it (`tv audit start \(TerminalText.line(ShellWord.quote(name)))`)."
        case let .noProject(name):
            return "There is no project named '\(TerminalText.line(name))'; `tv audit projects` lists them and `tv audit project new NAME` makes one."
        case let .empty(what):
            return "The \(what) is empty; give some text."
        case let .sessionRecording(id, project):
            return "Session \(id) of project '\(TerminalText.line(project))' is recording; only one session records at a time, so stop it first (`tv audit stop`)."
        case .noLiveSession:
            return "No audit session is recording, so there is nothing to mark or stop; start one with `tv audit start PROJECT`."
        case let .noSession(id):
            return "There is no audit session \(id); `tv audit sessions` lists them."
        case let .deleteLive(id):
            return "Session \(id) is still recording; stop it (`tv audit stop`) before deleting it."
        case let .projectLooksLike(new, existing):
            return "'\(AuditLimits.shown(new))' would list like the project '\(AuditLimits.shown(existing))' (they differ only in invisible joiners or selectors, or in how the same letters are encoded, as é is one code point or e and an accent); choose another name or use that one (`tv audit start \(TerminalText.line(ShellWord.quote(existing)))`)."
        case let .badProjectName(name):
            // A long name is shown by its start (a trial's 5,000 characters came back whole).
            let shown = name.count > 60 ? AuditLimits.shown(String(name.prefix(60))) + "… (\(ByteWords.grouped(Int64(name.count))) characters)" : AuditLimits.shown(name)
            return "'\(shown)' cannot be a project name: give one of at most \(AuditLimits.name) characters, with no control or invisible format character and no space at either end."
        case let .markerTooLong(characters):
            return "The marker's text has \(characters) characters; a marker holds at most \(AuditLimits.marker) (put longer notes in a file beside the bundle)."
        case let .noteTooLong(characters):
            return "The note has \(characters) characters; a note holds at most \(AuditLimits.marker) (put longer notes in a file beside the bundle)."
        }
    }
}

/// The process recording a session for as long as it runs (`tv run --audit`): its pid and its
/// start time in clock ticks since boot (`/proc/PID/stat` field 22, proc(5)), so a pid reused by
/// another process does not pass for it. A session started by `tv audit start` has none: it
/// records until `tv audit stop`, whoever writes.
public struct AuditRecorder: Sendable, Equatable {
    public var pid: Int32
    /// Clock ticks since boot when the process started (proc(5) `starttime`).
    public var startTicks: Int64

    public init(pid: Int32, startTicks: Int64) {
        self.pid = pid
        self.startTicks = startTicks
    }

    /// `starttime` (field 22) from the text of `/proc/PID/stat`: the fields after the last `)`
    /// (the command name may hold spaces and parentheses) start at field 3; nil when malformed.
    public static func startTicks(stat: String) -> Int64? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
        return fields.count > 19 ? Int64(fields[19]) : nil
    }

    /// Whether `/proc/PID/stat`'s state (field 3) says the process has exited: a zombie (`Z`,
    /// its parent has not reaped it yet) or dead (`X`). A `tv run --audit` killed together with
    /// its parent stays a zombie for a while, and passed for a live recorder: its session took
    /// markers after the kill (a trial).
    public static func hasExited(stat: String) -> Bool {
        guard let close = stat.lastIndex(of: ")") else { return false }
        let state = stat[stat.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true).first
        return state == "Z" || state == "X"
    }

    /// Where a session whose recorder is gone is closed: its last flow's last activity or its
    /// last marker, whichever is later (µs); its start when it holds neither.
    public static func abandonedEnd(started: Int64, lastFlow: Int64?, lastMarker: Int64?) -> Int64 {
        max(started, lastFlow ?? started, lastMarker ?? started)
    }
}
