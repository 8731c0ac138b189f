import Capture
import Recording
import Foundation
import TVHome

/// `tv captures` (list, delete, room): what the command line says about capture files. Pure.
public enum CapturesPresentation {
    /// `tv exec`'s closing line about its packets: the files it wrote and are still there (a
    /// new-user trial was named only the last of four; another, a file the captures' limits had
    /// just deleted; another, a range holding a file of a second `tv exec` running beside it).
    /// `files`: the sequence numbers this session's writer opened, in order (not a range: two
    /// sessions at once number their files in turn); `present`: those on disk once its last
    /// retention pass ran.
    public static func execFiles(_ files: [Int64], present: Set<Int64>, folder: String) -> String {
        let kept = files.filter(present.contains)
        let gone = files.count - kept.count
        // Who deleted them is not known here: the limits, at its end or during it, or a user.
        let deletedBy = "deleted (by the captures' limits, captures.maxBytes and captures.maxAge, by `tv captures delete`, or by hand)"
        guard !kept.isEmpty else {
            return "its packets were in \(names(files)), \(deletedBy); its connections stay (`tv flows`)."
        }
        let deleted = gone == 0 ? "" : "; \(gone) of its \(files.count) files \(gone == 1 ? "was" : "were") \(deletedBy)"
        return "its packets are in \(names(kept, in: folder))\(deleted) (`tv packets ID`, `tv captures`)."
    }

    /// "FOLDER/capture-000034.pcapng", "4 files in FOLDER, capture-000034.pcapng to
    /// capture-000037.pcapng" (in a row), "capture-000034.pcapng and capture-000036.pcapng in
    /// FOLDER", or "9 files in FOLDER: capture-000034.pcapng to capture-000036.pcapng,
    /// capture-000040.pcapng, …" (more than four, each run of numbers in a row as one: no other
    /// list says which session wrote which file); without a folder, the names alone.
    static func names(_ files: [Int64], in folder: String? = nil) -> String {
        guard let first = files.first, let last = files.last else { return "no file" }
        let within = folder.map { " in " + $0 } ?? ""
        if files.count == 1 { return (folder.map { $0 + "/" } ?? "") + CaptureFolder.fileName(first) }
        if last - first + 1 == Int64(files.count) {
            return "\(files.count) files\(within), \(CaptureFolder.fileName(first)) to \(CaptureFolder.fileName(last))"
        }
        if files.count <= 4 {
            let all = files.map(CaptureFolder.fileName)
            return all.dropLast().joined(separator: ", ") + " and " + all.last! + within
        }
        var runs: [ClosedRange<Int64>] = []
        for n in files {
            if let run = runs.last, run.upperBound + 1 == n { runs[runs.count - 1] = run.lowerBound...n } else { runs.append(n...n) }
        }
        let said = runs.map { $0.count == 1 ? CaptureFolder.fileName($0.lowerBound) : "\(CaptureFolder.fileName($0.lowerBound)) to \(CaptureFolder.fileName($0.upperBound))" }
        return "\(files.count) files\(within): " + said.joined(separator: ", ")
    }

    /// The list, newest first: name, size, time, and the one being written marked Recording.
    /// - Parameters:
    ///   - captureOn: `capture.enabled` now (the empty list says it).
    ///   - deleted: captures whose files were deleted (an empty list says they were, not "yet":
    ///     a re-check read "no capture files yet" after a limit deleted them all).
    public static func lines(_ files: [CaptureFile], folder: String, captureOn: Bool, deleted: Int = 0) -> [String] {
        guard !files.isEmpty else {
            let writes = "tv writes one while `tv exec` or `tv run --mode tun` runs with capture.enabled on"
                + (captureOn ? " (it is on)." : " (it is off: `tv settings set capture.enabled on`).")
            if deleted > 0 {
                return ["There are no capture files: the \(deleted == 1 ? "one" : "\(deleted)") made here \(deleted == 1 ? "was" : "were") deleted (`tv captures delete` or the captures' limits); " + writes]
            }
            return ["There are no capture files yet: " + writes]
        }
        let rows: [[String]] = files.map { file in
            let name = CaptureFolder.fileName(file.seq)
            let started = Units.utc(file.startedMicros / 1_000_000, format: "%Y-%m-%d %H:%M:%S")
            let time: String
            if file.isRecording {
                time = "since \(started) UTC  Recording"
            } else if let ended = file.endedMicros {
                time = "\(started) to \(Units.utc(ended / 1_000_000, format: "%H:%M:%S")) UTC"
            } else {
                time = "\(started) UTC, not closed"
            }
            return [String(file.seq), name, Units.bytes(file.bytes), "\(ByteWords.grouped(file.packets)) packet\(file.packets == 1 ? "" : "s")",
                    time + onDiskNote(file)]
        }
        let widths = (0..<4).map { column in rows.map { $0[column].count }.max() ?? 0 }
        var out = rows.map { row in
            "  " + (0..<4).map { i in
                i == 1 ? row[i].padding(toLength: widths[i], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[i] - row[i].count) + row[i]
            }.joined(separator: "  ") + "  " + row[4]
        }
        out.insert("\(files.count) capture file\(files.count == 1 ? "" : "s") in \(TerminalText.line(folder)), newest first:", at: 0)
        if files.contains(where: \.isRecording) {
            out.append("The Recording one is being written: it can be neither deleted nor shared until `tv captures rotate` closes it.")
        }
        return out
    }

    /// `tv captures --json`: the packet captures newest first (`"kind": "packets"`, each with the
    /// `seq` the other commands take), then the decrypted captures newest first (`"kind":
    /// "decrypted"`, named by file: they have no sequence number; `tv content delete` and
    /// retention remove them). A trial found the decrypted ones missing here and in `/api/captures`
    /// while `tv captures` listed them. Times are µs since the epoch; `folder` is the captures folder.
    public static func json(_ files: [CaptureFile], decrypted: [DecryptedCaptureRetention.File] = [], folder: String = "") -> JSONValue {
        .array(files.map { file in
            .object([("kind", .string("packets")), ("seq", .int(file.seq)), ("path", .string(file.path)), ("startedMicros", .int(file.startedMicros)),
                     ("endedMicros", file.endedMicros.map { .int($0) } ?? .null), ("bytes", .int(file.bytes)),
                     ("packets", .int(file.packets)), ("snapLength", .int(file.snapLength)), ("recording", .bool(file.isRecording))])
        } + decrypted.sorted { $0.name > $1.name }.map { file in
            .object([("kind", .string("decrypted")), ("name", .string(file.name)), ("path", .string(folder + "/" + file.name)),
                     ("startedMicros", .int(file.started)), ("modifiedMicros", .int(file.modified)), ("bytes", .int(file.bytes)),
                     ("recording", .bool(file.isRecording))])
        })
    }

    /// The decrypted captures (`capture.decrypted`: the plaintext of inspected connections as
    /// TCP, one file per session), newest first; nothing when there are none. `tv captures`
    /// listed only the packet captures, and these went unmentioned outside `tv storage` (a trial).
    public static func decryptedLines(_ files: [DecryptedCaptureRetention.File]) -> [String] {
        guard !files.isEmpty else { return [] }
        let rows = files.sorted { $0.name > $1.name }.map { file in
            (file.name, Units.bytes(file.bytes), file.isRecording ? "Recording" : "closed")
        }
        let nameWidth = rows.map(\.0.count).max() ?? 0, sizeWidth = rows.map(\.1.count).max() ?? 0
        return ["\(files.count) decrypted capture\(files.count == 1 ? "" : "s") (inspected connections' plaintext as TCP, for Wireshark without keys; `tv captures delete NAME`, `tv content delete` and retention remove closed ones):"]
            + rows.map { name, size, state in
                "  " + name.padding(toLength: nameWidth, withPad: " ", startingAt: 0) + "  "
                    + String(repeating: " ", count: sizeWidth - size.count) + size + "  " + state
            }
    }

    /// What a closed capture's file no longer holds of what was recorded (a trial's file cut by
    /// hand still read "9.3 KiB, 52 packets"): gone, or shorter; empty when whole (or recording,
    /// whose end is still being written).
    static func onDiskNote(_ file: CaptureFile) -> String {
        guard !file.isRecording else { return "" }
        guard let size = file.bytesOnDisk else { return "  (its file is gone from the folder)" }
        // Left open by a killed writer: its size and count are what it had committed, and the
        // next start repairs it (not "cut after tv closed it": it was never closed; a trial).
        if file.endedMicros == nil {
            // Also a session that ended normally on a full disk, which could not record the end
            // (a trial read "killed or crashed" where nothing was).
            return "  (its end was never recorded: its session was killed or crashed, or the disk was full as it closed; the next `tv run` or `tv exec` cuts it back to its whole packets and counts them)"
        }
        guard size < file.bytes else { return "" }
        return "  (the file was cut after tv closed it: it now holds only \(Units.bytes(size)) of the \(Units.bytes(file.bytes)) written; `tv packet` says which packets are gone)"
    }

    /// Said before a capture is deleted.
    /// - Parameter evidence: the file holds packets of an audit session's flows (retention keeps
    ///   it; a deletion asked for takes it, so that is said first: a re-check's went unsaid).
    public static func deletionWarning(_ file: CaptureFile, evidence: Bool = false) -> String {
        "Deleting \(CaptureFolder.fileName(file.seq)) (\(Units.bytes(file.bytes)), \(ByteWords.grouped(file.packets)) packet\(file.packets == 1 ? "" : "s")): the connections recorded while it was written stay in your history; only the raw packet bytes go, and they do not come back."
            + (evidence ? " It is audit evidence (it holds packets of an audit session's connections, which `tv audit bundle` packs): the bundle made after this has no packets from it." : "")
    }

    /// Said before a decrypted capture is deleted (`tv captures delete decrypted-….pcapng`).
    /// - Parameter evidence: its span meets an audit session's (`tv audit bundle` cuts from it).
    public static func deletionWarning(decrypted file: DecryptedCaptureRetention.File, evidence: Bool = false) -> String {
        "Deleting \(file.name) (\(Units.bytes(file.bytes))): the plaintext of the inspected connections it holds goes and does not come back; the connections stay in your history (and their kept content, `tv turns`, until content.expiry)."
            + (evidence ? " It is audit evidence (its time meets an audit session's, which `tv audit bundle` packs): the bundle made after this has no decrypted packets from it." : "")
    }

    /// Said after a decrypted capture was deleted: what it held, or that it was already gone.
    public static func deleted(decrypted name: String, freed: Int64?) -> String {
        guard let freed else { return "\(name) was already gone (or a session began writing it again); nothing was freed." }
        return "Deleted \(name); \(Units.bytes(freed)) freed."
    }

    /// Said after: what the unlinked file held (`freed` bytes), or that it was already gone
    /// (a trial's moved-away file was "deleted; 1.1 KiB freed").
    public static func deleted(_ file: CaptureFile, freed: Int64) -> String {
        guard freed > 0 else {
            return "Deleted \(CaptureFolder.fileName(file.seq)) from the list; its file was already gone from \(TerminalText.line(file.path)), so nothing was freed."
        }
        return "Deleted \(CaptureFolder.fileName(file.seq)); \(Units.bytes(freed)) freed."
    }

    /// `tv captures room`: one sentence per half, or the one sentence of neither limit / unreadable limits.
    /// `decryptedBytes`: how much of what the captures use is decrypted captures (they live
    /// under the same size limit), said after the first sentence when any.
    /// - Parameter diskFree: the bytes the file system holding the captures has free (nil: not
    ///   known): said when it is less than the size limit leaves (a trial's room read "2.0 GiB
    ///   left" on a full disk).
    public static func roomLines(_ room: CaptureRoom, decryptedBytes: Int64 = 0, diskFree: Int64? = nil) -> [String] {
        var lines: [String]
        switch room {
        case .neitherLimit(let used):
            lines = ["Neither limit is set (captures.maxBytes and captures.maxAge are off): nothing removes a capture unless you delete it. The captures use \(Units.bytes(used))."]
        case .unreadable(let list):
            let names = list.map { "\($0.name) ('\(TerminalText.line($0.text))')" }.joined(separator: " and ")
            return ["tv cannot read \(names), so the room left is not shown; set \(list.count == 1 ? "it" : "them") again with `tv settings set NAME VALUE` (a size like 2GB, an age like 30d, or off)."]
        case let .limits(size, expiry):
            lines = [sizeSentence(size), expirySentence(expiry)]
        }
        if decryptedBytes > 0 { lines[0] += " \(Units.bytes(decryptedBytes)) of that is decrypted captures (`tv captures` lists them)." }
        // Without a size limit, only a disk nearly full is news.
        if let diskFree, diskFree < room.leftUnderLimit ?? (64 << 20) {
            lines.append(diskFree == 0
                ? "The disk holding the captures is full: no packet is written until room is made on it (the limit is not what stops them)."
                : "The disk holding the captures has only \(Units.bytes(diskFree)) free, less than the limit leaves: captures stop being written when it fills, before the limit.")
        }
        return lines
    }

    /// `tv captures room --json`: the same outcome as `roomLines`, as fields. `outcome` is
    /// `neitherLimit`, `unreadable` or `limits`; with `limits`, `size.outcome` is one of
    /// `roomToSpare`, `full`, `openCaptureOverLimit`, `noLimit` and `expiry.outcome` one of
    /// `date`, `past`, `noDateYet`, `onlyEvidence`, `off` (the `CaptureRoom` case names), with the
    /// rule: `maxAgeMicros` (captures.maxAge, null when off) and `decryptedMaxAgeMicros` (how long
    /// a closed decrypted capture is kept, when any is there). Sizes in bytes, times in µs
    /// (`expiresMicros` since the epoch, the ages durations).
    public static func roomJSON(_ room: CaptureRoom, decryptedBytes: Int64 = 0) -> JSONValue {
        switch room {
        case .neitherLimit(let used):
            return .object([("outcome", .string("neitherLimit")), ("usedBytes", .int(used)), ("decryptedBytes", .int(decryptedBytes))])
        case .unreadable(let list):
            return .object([("outcome", .string("unreadable")),
                            ("unreadable", .array(list.map { .object([("setting", .string($0.name)), ("text", .string($0.text))]) }))])
        case let .limits(size, expiry):
            let sizeFields: [(String, JSONValue)]
            switch size {
            case let .roomToSpare(left, limit, used):
                sizeFields = [("outcome", .string("roomToSpare")), ("leftBytes", .int(left)), ("limitBytes", .int(limit)), ("usedBytes", .int(used))]
            case let .full(used, limit):
                sizeFields = [("outcome", .string("full")), ("limitBytes", .int(limit)), ("usedBytes", .int(used))]
            case let .openCaptureOverLimit(open, limit):
                sizeFields = [("outcome", .string("openCaptureOverLimit")), ("limitBytes", .int(limit)), ("openBytes", .int(open))]
            case let .heldAsEvidence(used, limit):
                sizeFields = [("outcome", .string("heldAsEvidence")), ("limitBytes", .int(limit)), ("usedBytes", .int(used))]
            case .noLimit(let used):
                sizeFields = [("outcome", .string("noLimit")), ("usedBytes", .int(used))]
            }
            // The rule: captures.maxAge (null when off) and, when said, the decrypted captures' own.
            func rule(_ rule: CaptureRoom.ExpiryRule) -> [(String, JSONValue)] {
                [("maxAgeMicros", rule.maxAgeMicros.map { .int($0) } ?? .null)]
                    + (rule.decryptedMaxAgeMicros.map { [("decryptedMaxAgeMicros", .int($0))] } ?? [])
            }
            let expiryFields: [(String, JSONValue)]
            switch expiry {
            case let .date(micros, r):
                expiryFields = [("outcome", .string("date")), ("expiresMicros", .int(micros))] + rule(r)
            case let .past(count, r):
                expiryFields = [("outcome", .string("past")), ("captures", .int(Int64(count)))] + rule(r)
            case .noDateYet(let r):
                expiryFields = [("outcome", .string("noDateYet"))] + rule(r)
            case .onlyEvidence(let r):
                expiryFields = [("outcome", .string("onlyEvidence"))] + rule(r)
            case .off:
                expiryFields = [("outcome", .string("off"))]
            }
            return .object([("outcome", .string("limits")), ("size", .object(sizeFields)), ("expiry", .object(expiryFields)),
                            ("decryptedBytes", .int(decryptedBytes))])
        }
    }

    static func sizeSentence(_ size: CaptureRoom.Size) -> String {
        switch size {
        case let .roomToSpare(left, limit, used):
            return "\(Units.bytes(left)) left: the captures use \(Units.bytes(used)) of the \(Units.bytes(limit)) limit (captures.maxBytes)."
        case let .full(used, limit):
            return "No room left: the captures use \(Units.bytes(used)), the \(Units.bytes(limit)) limit is already full, so the oldest closed captures go to make room and what they held is lost."
        case let .openCaptureOverLimit(open, limit):
            return "The \(Units.bytes(limit)) limit cannot be met: the capture being recorded is \(Units.bytes(open)) on its own; close it with `tv captures rotate` so it can be removed."
        case let .heldAsEvidence(used, limit):
            return "No room left: the captures use \(Units.bytes(used)) of the \(Units.bytes(limit)) limit, and every closed one is audit evidence, which no limit removes until its audit session is deleted (`tv audit delete`)."
        case .noLimit(let used):
            return "No size limit (captures.maxBytes is off): the captures use \(Units.bytes(used)) and grow until you delete them."
        }
    }

    static func expirySentence(_ expiry: CaptureRoom.Expiry) -> String {
        switch expiry {
        case let .date(micros, rule):
            return "The oldest capture expires on \(Units.utc(micros / 1_000_000, format: "%Y-%m-%d %H:%M UTC")) (\(ruleWords(rule)))."
        case let .past(count, rule):
            let captures = count == 1 ? "1 capture is" : "\(count) captures are"
            let goes = count == 1 ? "goes" : "go"
            if let age = rule.maxAgeMicros, !decryptedSooner(rule) {
                return "\(captures) already past the \(ageWords(age)) expiry and \(goes) at the next cleanup."
            }
            return "\(captures) already past their expiry and \(goes) at the next cleanup (\(ruleWords(rule)))."
        case .noDateYet(let rule):
            guard let age = rule.maxAgeMicros else {
                return "No decrypted capture has closed yet, so none has an expiry date: a decrypted capture is kept \(ageWords(rule.decryptedMaxAgeMicros ?? 0)) from when it closes (content.expiry: it holds plaintext; packet captures do not expire, captures.maxAge is off), and the one being written closes when the next one opens."
            }
            let decrypted = decryptedSooner(rule) ? " (a decrypted capture, which holds plaintext, \(ageWords(rule.decryptedMaxAgeMicros ?? 0)): content.expiry is sooner)" : ""
            return "No capture has closed yet, so none has an expiry date: a capture is kept \(ageWords(age)) from when it closes\(decrypted), and the one being recorded closes when the next one opens."
        case .onlyEvidence(let rule):
            if let age = rule.maxAgeMicros, !decryptedSooner(rule) {
                return "Every closed capture is audit evidence, which does not expire until its audit session is deleted; others are kept \(ageWords(age)) after they close."
            }
            return "Every closed capture is audit evidence, which does not expire until its audit session is deleted; for others, \(ruleWords(rule))."
        case .off:
            return "Captures do not expire (captures.maxAge is off)."
        }
    }

    /// Whether decrypted captures are kept for less than packet captures (or packet captures do
    /// not expire): then the rule says both.
    static func decryptedSooner(_ rule: CaptureRoom.ExpiryRule) -> Bool {
        guard let decrypted = rule.decryptedMaxAgeMicros else { return false }
        return rule.maxAgeMicros.map { decrypted < $0 } ?? true
    }

    /// How long closed captures are kept, as the expiry sentences say it: "captures are kept 30
    /// days after they close", and, when decrypted captures go sooner, "; decrypted captures,
    /// which hold plaintext, 1 hour (content.expiry is sooner)".
    static func ruleWords(_ rule: CaptureRoom.ExpiryRule) -> String {
        let packets = rule.maxAgeMicros.map { "captures are kept \(ageWords($0)) after they close" }
            ?? "packet captures do not expire (captures.maxAge is off)"
        guard decryptedSooner(rule), let decrypted = rule.decryptedMaxAgeMicros else { return packets }
        guard rule.maxAgeMicros != nil else {
            return packets + "; decrypted captures, which hold plaintext, are kept \(ageWords(decrypted)) after they close (content.expiry)"
        }
        return packets + "; decrypted captures, which hold plaintext, \(ageWords(decrypted)) (content.expiry is sooner)"
    }

    /// "30 days", "1 day", "12 hours", "90 minutes", "45 seconds".
    static func ageWords(_ micros: Int64) -> String {
        let seconds = micros / 1_000_000
        func unit(_ n: Int64, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s")" }
        if seconds % 86_400 == 0 { return unit(seconds / 86_400, "day") }
        if seconds % 3_600 == 0 { return unit(seconds / 3_600, "hour") }
        if seconds % 60 == 0 { return unit(seconds / 60, "minute") }
        return unit(seconds, "second")
    }
}

extension CapturesPresentation {
    /// The `tv status` line of a session's capture (`SessionCapture.statusValues`), nil when the
    /// session has none to report (not a TUN session, or capture off).
    public static func statusLine(_ values: [String: String]) -> String? {
        guard values["capture.enabled"] == "on" else { return nil }
        let written = Int64(values["capture.packetsWritten"] ?? "0") ?? 0
        let dropped = Int64(values["capture.packetsDropped"] ?? "0") ?? 0
        let failed = Int64(values["capture.packetsFailed"] ?? "0") ?? 0
        // The file's own count beside the session's (after a rotation the session's read as the
        // new file's: a trial).
        let inFile = values["capture.recordingPackets"].flatMap { Int64($0) }.map { " (\(ByteWords.grouped($0)) \($0 == 1 ? "packet" : "packets") in it)" } ?? ""
        var line = values["capture.recording"].map { "capture \($0) recording\(inFile), " } ?? "no capture file open, "
        line += "\(ByteWords.grouped(written)) packets written this session"
        if dropped > 0 { line += ", \(ByteWords.grouped(dropped)) dropped (the capture writer fell behind; they are not in the file)" }
        if failed > 0 { line += ", \(ByteWords.grouped(failed)) not saved (\(values["capture.lastFailure"].map(TerminalText.line) ?? "a write failed"))" }
        if values["capture.writeMode"] == CaptureWriteMode.buffered.rawValue {
            line += ", through the page cache (the captures folder's file system refused O_DIRECT)"
        }
        return line
    }

    /// The `tv status` line of a session's decrypted capture (`QueueStatus`' values), nil when
    /// the session writes none. What it could not save is said by the losses' lines
    /// (`RecordingPresentation.statusLines`).
    public static func decryptedStatusLine(_ values: [String: String]) -> String? {
        guard let written = values[QueueStatus.decryptedPacketsWritten].flatMap({ Int64($0) }) else { return nil }
        let file = values[QueueStatus.decryptedRecording].map { "\(TerminalText.line($0)) recording" }
            ?? (values["decryptedCapture.failing"] == "on" ? "no file open while writes fail"
                : "no file open (the next opens with the next inspected packet)")
        let files = Int64(values[QueueStatus.decryptedFilesOpened] ?? "0") ?? 0
        return "\(file), \(ByteWords.grouped(written)) packet\(written == 1 ? "" : "s") written in \(ByteWords.grouped(files)) file\(files == 1 ? "" : "s")"
    }

    /// Said when a TUN session ends and its capture lost packets (nil: it lost none).
    /// - Parameter why: the writer's first failure, when packets were not saved (a full disk says so).
    public static func lossSentence(dropped: UInt64, failed: UInt64, why: String? = nil) -> String? {
        guard dropped + failed > 0 else { return nil }
        var parts: [String] = []
        if dropped > 0 { parts.append("\(ByteWords.grouped(Int64(dropped))) dropped because the capture writer fell behind") }
        if failed > 0 {
            parts.append("\(ByteWords.grouped(Int64(failed))) not saved because a write failed"
                         + (why.map { " (" + TerminalText.line($0.hasSuffix(".") ? String($0.dropLast()) : $0) + ")" } ?? ""))
        }
        return "Not every packet was captured: " + parts.joined(separator: ", ") + "; the connections themselves were not affected."
    }
}
