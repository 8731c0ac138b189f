import FlowStore
import Recording
import Foundation
import Settings
import TVCore
import TVHome

/// A limit that would delete what is kept as soon as it is saved, refused until agreed to: the
/// command line says "add --yes" (exit 1); tv web asks with the same count and sends the change
/// again agreed (`WebAPI.setSetting`: a 409 whose `consent` is `question`). Its page used to
/// guess which changes delete and asked without the count (a trial).
struct LimitConsentNeeded: UserFacingError {
    /// What saving deletes: `history.maxAge 1d deletes 3 of the 10 connections kept (…), with
    /// their requests, packets and content, as soon as it is saved`.
    let deletes: String
    /// How many things `deletes` names (3 connections, capture files, decrypted turns): tv web's
    /// agreement names it, and a change that would delete more by the time it is sent again is
    /// asked again (`WebAPI.setSetting`).
    let count: Int
    /// Said after it (`(m is minutes: a month is 30d)`), or empty.
    var aside = ""

    var message: String { deletes + "; add --yes to save it" + (aside.isEmpty ? "." : " " + aside + ".") }
    /// The page's question.
    var question: String { deletes + (aside.isEmpty ? "" : " " + aside) + ". Save it?" }
}

/// A history.maxAge that deletes connections already kept is said first, and saved only with
/// --yes: a trial's `1s` (and `1m`, minutes, for a month) deleted the whole history with one
/// line of output, the count only in the session's own log.
enum HistoryAgeConsent {
    /// Refuses (exit 1) when flows started before now − `micros` are kept, naming how many.
    static func check(_ inv: Invocation, age: String, micros: Int64) throws {
        // A running session's writer first writes the flows it holds: a flow that had just
        // closed was not counted, and the session deleted it once the limit was saved (a
        // re-check's tv web saved `1s` without asking and deleted 1 connection).
        try? FlowCommands.askSessionToFlush(inv)
        guard let home = try? inv.existingHome(), let storage = try LimitConsentStore.open(home) else { return }
        defer { storage.close() }
        let cutoff = inv.nowMicros - micros
        // Closed flows outside audit sessions: what the deletion takes.
        guard let (older, all) = try? storage.flowsDoomed(startedBefore: cutoff), older > 0 else { return }
        throw LimitConsentNeeded(deletes: "history.maxAge \(age) deletes \(ByteWords.grouped(Int64(older))) of the \(ByteWords.grouped(Int64(all))) connections kept (those started before \(Units.utc(cutoff / 1_000_000))), with their requests, packets and content, as soon as it is saved",
                                 count: older, aside: age.hasSuffix("m") ? "(m is minutes: a month is 30d)" : "")
    }
}

/// A captures.maxBytes or captures.maxAge that deletes capture files now is said first, and
/// saved only with --yes, as history.maxAge is (a re-check's `1MB` deleted a 17.8 MiB decrypted
/// capture at once, without a count).
enum CaptureLimitConsent {
    /// Refuses (exit 1) when the new limit would delete capture files that the limits in force
    /// keep, naming how many: loosening one limit is never refused for what the other one
    /// deletes (a trial's `captures.maxAge 60d`, was 30d, was said to delete 9 files that
    /// `captures.maxBytes` was over by).
    static func check(_ inv: Invocation, name: String, value: String, settings: SettingsStore) throws {
        let limit: SettingLimit
        switch name {
        case SettingKeys.capturesMaxBytes.name: limit = SettingLimit.userBytes(value).map(SettingLimit.bytes) ?? .off
        case SettingKeys.capturesMaxAge.name: limit = SettingLimit.userMicros(value).map(SettingLimit.micros) ?? .off
        default: return
        }
        guard case let .limit(n) = limit, let home = try? inv.existingHome(),
              var limits = try? StorageLimitsReading.limits(settings.read()),
              let storage = try LimitConsentStore.open(home) else { return }
        defer { storage.close() }
        let now = inv.nowMicros
        let none = (files: 0, bytes: Int64(0))
        let already = (try? storage.captureFilesDoomed(limits, now: now)) ?? none
        let alreadyRecording = (try? storage.recordingFilesDoomedOnceClosed(limits, now: now)) ?? none
        if name == SettingKeys.capturesMaxBytes.name { limits.capturesMaxBytes = n } else { limits.capturesMaxAge = n }
        let doomed = (try? storage.captureFilesDoomed(limits, now: now)) ?? already
        let recording = (try? storage.recordingFilesDoomedOnceClosed(limits, now: now)) ?? alreadyRecording
        let atOnce = (files: max(0, doomed.files - already.files), bytes: doomed.bytes - already.bytes)
        let later = (files: max(0, recording.files - alreadyRecording.files), bytes: recording.bytes - alreadyRecording.bytes)
        guard atOnce.files + later.files > 0 else { return }
        throw LimitConsentNeeded(deletes: sentence(name: name, value: value, now: atOnce, later: later), count: atOnce.files + later.files)
    }

    /// `captures.maxBytes 10MB deletes 2 capture files (3.1 MiB) that the limits in force keep,
    /// as soon as it is saved, and the file being recorded now (40.1 MiB) once it closes`.
    static func sentence(name: String, value: String, now: (files: Int, bytes: Int64), later: (files: Int, bytes: Int64)) -> String {
        func files(_ n: Int) -> String { n == 1 ? "1 capture file" : "\(n) capture files" }
        let recorded = later.files == 1 ? "the file being recorded now" : "the \(later.files) files being recorded now"
        let closing = later.files == 1 ? "once it closes (when its session stops or the file rotates)"
            : "once they close (when their sessions stop or the files rotate)"
        switch (now.files > 0, later.files > 0) {
        case (true, true):
            return "\(name) \(value) deletes \(files(now.files)) (\(Units.bytes(now.bytes))) that the limits in force keep, as soon as it is saved, and \(recorded) (\(Units.bytes(later.bytes))) \(closing)"
        case (true, false):
            return "\(name) \(value) deletes \(files(now.files)) (\(Units.bytes(now.bytes))) that the limits in force keep, as soon as it is saved"
        default:
            return "\(name) \(value) deletes \(recorded) (\(Units.bytes(later.bytes))) \(closing): the limits in force keep \(later.files == 1 ? "it" : "them")"
        }
    }
}

/// A shorter `content.expiry` that deletes decrypted turns or closed decrypted captures kept now
/// is said first, and saved only with --yes, as the three storage limits are (a trial's `1h`
/// deleted 1,029 turns at once without a word before).
enum ContentExpiryConsent {
    /// Refuses (exit 1) when `expiry` deletes turns or decrypted captures the expiry in force
    /// keeps, naming how many.
    static func check(_ inv: Invocation, expiry: ContentExpiry, settings: SettingsStore) throws {
        guard let home = try? inv.existingHome(), let record = try? settings.read(),
              let current = ContentExpiry(text: record[SettingKeys.contentExpiry]),
              expiry.microseconds < current.microseconds else { return }
        // The turns a running session holds are written first, as for history.maxAge.
        try? FlowCommands.askSessionToFlush(inv)
        guard let storage = try LimitConsentStore.open(home) else { return }
        defer { storage.close() }
        let now = inv.nowMicros
        let after = (try? storage.contentTurnsExpiring(expiry, now: now)) ?? 0
        let before = (try? storage.contentTurnsExpiring(current, now: now)) ?? 0
        let more = max(0, after - before)
        // Closed decrypted captures expire by it too (they hold the same plaintext).
        var files = (files: 0, bytes: Int64(0))
        if var limits = try? StorageLimitsReading.limits(record) {
            limits.contentExpiry = current
            let kept = try? storage.captureFilesDoomed(limits, now: now)
            limits.contentExpiry = expiry
            if let kept, let doomed = try? storage.captureFilesDoomed(limits, now: now), doomed.files > kept.files {
                files = (doomed.files - kept.files, doomed.bytes - kept.bytes)
            }
        }
        guard more + files.files > 0 else { return }
        var parts: [String] = []
        if more > 0 {
            parts.append("\(ByteWords.grouped(Int64(more))) decrypted turn\(more == 1 ? "" : "s") that \(current.text) keeps (those recorded before \(Units.utc((now - expiry.microseconds) / 1_000_000)))")
        }
        if files.files > 0 {
            parts.append("\(files.files == 1 ? "1 closed decrypted capture" : "\(files.files) closed decrypted captures") (\(Units.bytes(files.bytes)))\(more > 0 ? "" : " that \(current.text) keeps")")
        }
        throw LimitConsentNeeded(deletes: "content.expiry \(expiry.text) deletes " + parts.joined(separator: " and ") + ", as soon as it is saved",
                                 count: more + files.files)
    }
}

/// The store a limit's consent reads: nil when nothing is kept (no database, no log waiting);
/// else opened, and a store that cannot be (a database missing beside its waiting log, a corrupt
/// one) refuses the change before it is saved (it was saved, the consent skipped, and applied
/// once the database was put back: a re-check).
enum LimitConsentStore {
    static func open(_ home: TVHome) throws -> StorageManager? {
        var st = stat()
        let waitingLog = stat(home.databasePath + "-wal", &st) == 0 && st.st_size > 0
        guard FileManager.default.fileExists(atPath: home.databasePath) || waitingLog else { return nil }
        return try StorageManager(home: home)
    }
}
