import FlowStore
import Foundation
import Settings
import TVCore
import TVHome

/// A history.maxAge that deletes connections already kept is said first, and saved only with
/// --yes: a trial's `1s` (and `1m`, minutes, for a month) deleted the whole history with one
/// line of output, the count only in the session's own log.
enum HistoryAgeConsent {
    /// Refuses (exit 1) when flows started before now − `micros` are kept, naming how many.
    static func check(_ inv: Invocation, age: String, micros: Int64) throws {
        guard let home = try? inv.existingHome(), let storage = try LimitConsentStore.open(home) else { return }
        defer { storage.close() }
        let cutoff = inv.now * 1_000_000 - micros
        // Closed flows outside audit sessions: what the deletion takes.
        guard let (older, all) = try? storage.flowsDoomed(startedBefore: cutoff), older > 0 else { return }
        throw UsageRefusal("history.maxAge \(age) deletes \(ByteWords.grouped(Int64(older))) of the \(ByteWords.grouped(Int64(all))) connections kept (those started before \(Units.utc(cutoff / 1_000_000))), with their requests, packets and content, as soon as it is saved; add --yes to save it (m is minutes: a month is 30d).", exitCode: 1)
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
        let now = inv.now * 1_000_000
        let already = (try? storage.captureFilesDoomed(limits, now: now)) ?? (files: 0, bytes: 0)
        if name == SettingKeys.capturesMaxBytes.name { limits.capturesMaxBytes = n } else { limits.capturesMaxAge = n }
        guard let doomed = try? storage.captureFilesDoomed(limits, now: now), doomed.files > already.files else { return }
        let more = doomed.files - already.files
        throw UsageRefusal("\(name) \(value) deletes \(more) capture file\(more == 1 ? "" : "s") (\(Units.bytes(doomed.bytes - already.bytes))) that the limits in force keep, as soon as it is saved; add --yes to save it.", exitCode: 1)
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
