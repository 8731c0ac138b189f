import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// Reads and changes settings: saved first, applied to a live session second (DESIGN.md §5).
public struct SettingsStore: Sendable {
    /// The durable record.
    public let file: SettingsFile
    /// Told after each successful save (never before, never after a failed one).
    public let liveSession: any LiveSessionNotifier

    public init(file: SettingsFile, liveSession: any LiveSessionNotifier = NoLiveSession()) {
        self.file = file
        self.liveSession = liveSession
    }

    /// The record as saved now.
    /// - Throws: `SettingsError.corrupt` / `.unreadable` (see `SettingsFile.load`).
    public func read() throws -> SettingsRecord { try file.load() }

    /// Saves `key = value`, then tells a live session. When the value is already saved nothing is
    /// written and no session is told.
    /// - Throws: `SettingsError` from reading (a corrupt file is never overwritten here) or
    ///   `.saveFailed` (the old value stays).
    public func set<Value>(_ key: SettingKey<Value>, to value: Value) throws -> SettingChange {
        let record = try file.load()
        let old = record[key]
        if old == value && record.isSaved(key) {
            return SettingChange(key: key.name, oldText: old.text, newText: value.text, saved: false, delivery: .noSession)
        }
        let updated = record.setting(key, to: value)
        try file.save(updated, changing: key.name)
        let delivery = liveSession.settingSaved(key: key.name, record: updated)
        return SettingChange(key: key.name, oldText: old.text, newText: value.text, saved: true, delivery: delivery)
    }

    /// Saves several keys in one atomic write (`transform` sets them), then tells a live session
    /// about each key whose saved value changed.
    /// - Returns: the record now on disk and the delivery for each changed key, in key order.
    /// - Throws: `SettingsError` from reading, or `.saveFailed` naming the keys (nothing changed).
    public func update(_ transform: (SettingsRecord) -> SettingsRecord) throws -> (SettingsRecord, [(String, LiveSessionDelivery)]) {
        let record = try file.load()
        let updated = transform(record)
        let changed = Set(record.values.keys).union(updated.values.keys).filter { record.values[$0] != updated.values[$0] }.sorted()
        if changed.isEmpty { return (record, []) }
        try file.save(updated, changing: changed.joined(separator: " and "))
        return (updated, changed.map { ($0, liveSession.settingSaved(key: $0, record: updated)) })
    }

    /// The limits a rewritten record turns off: whatever the lost file held (`off`, or longer
    /// than the default), their defaults would have deleted history and capture files at the
    /// next start without the `--yes` a shorter limit asks for (a trial lost 103 connections).
    /// `content.expiry` has no `off`; it stays at its default.
    public static let keepingLimits = [SettingKeys.historyMaxAge, SettingKeys.capturesMaxBytes, SettingKeys.capturesMaxAge]

    /// Saves `inspection.enabled = false`, whatever state the file is in: this is the one change
    /// that must always be possible. A file that cannot be read as a record is replaced by a new
    /// one with inspection off, the limits that delete history and captures off
    /// (`keepingLimits`), and every other key at its default; its old bytes are kept next to it
    /// as `settings.json.corrupt` when they can be read. A live session is always told.
    /// - Throws: `SettingsError.saveFailed` only when nothing can be written at the path.
    public func turnInspectionOff() throws -> InspectionOffOutcome {
        let key = SettingKeys.inspectionEnabled
        do {
            let record = try file.load()
            // Off, saved or by default: nothing to write (a read-only data folder refused an
            // off that was already so, and `tv ca remake` with it).
            if !record[key] {
                return .wasAlreadyOff(delivery: liveSession.settingSaved(key: key.name, record: record))
            }
            let updated = record.setting(key, to: false)
            do {
                try file.save(updated, changing: key.name)
            } catch let failure as SettingsError {
                // A full disk cannot take the atomic save's temporary file; the record without
                // the key (off by default) is shorter than the file, so it fits where it is.
                // When that fails too (a read-only mount), the save's own reason is said.
                do { try file.overwriteInPlace(record.removing(key), changing: key.name) } catch { throw failure }
            }
            return .turnedOff(wasOn: true, delivery: liveSession.settingSaved(key: key.name, record: updated))
        } catch let error as SettingsError {
            let reason: String
            switch error {
            case .corrupt(_, let why), .unreadable(_, let why): reason = why
            case .saveFailed, .diskFull, .tooManyOpenFiles: throw error
            }
            var keptAt: String?
            if let bytes = try? file.readBytes() {
                // Never over an earlier copy: a second rewrite replaced the first file's copy,
                // and with it the user's store URL and limits (a re-check). `.corrupt-2`, … after.
                let aside = (1...99).lazy.map { file.path + ".corrupt" + ($0 == 1 ? "" : "-\($0)") }
                    .first { access($0, F_OK) != 0 } ?? file.path + ".corrupt-99"
                if (try? FileModes.writeAtomically(bytes, to: aside, mode: 0o600)) != nil { keptAt = aside }
            }
            var fresh = SettingsRecord().setting(key, to: false)
            for limit in Self.keepingLimits { fresh = fresh.setting(limit, to: "off") }
            try file.save(fresh, changing: key.name)
            return .rewroteUnreadable(reason: reason, keptCopyAt: keptAt,
                                      delivery: liveSession.settingSaved(key: key.name, record: fresh))
        }
    }
}

/// What one `SettingsStore.set` did.
public struct SettingChange: Sendable, Equatable {
    public let key: String
    /// The value before, and the value now, as people read them.
    public let oldText: String
    public let newText: String
    /// False when the value was already saved and nothing was written.
    public let saved: Bool
    /// What the live session did with it.
    public let delivery: LiveSessionDelivery

    public init(key: String, oldText: String, newText: String, saved: Bool, delivery: LiveSessionDelivery) {
        self.key = key
        self.oldText = oldText
        self.newText = newText
        self.saved = saved
        self.delivery = delivery
    }
}

/// What `SettingsStore.turnInspectionOff` did; `sentence` says it to the user.
public enum InspectionOffOutcome: Sendable, Equatable {
    case wasAlreadyOff(delivery: LiveSessionDelivery)
    case turnedOff(wasOn: Bool, delivery: LiveSessionDelivery)
    /// The file could not be read as a record and was rewritten with inspection off.
    case rewroteUnreadable(reason: String, keptCopyAt: String?, delivery: LiveSessionDelivery)

    public var delivery: LiveSessionDelivery {
        switch self {
        case .wasAlreadyOff(let d), .turnedOff(_, let d), .rewroteUnreadable(_, _, let d): return d
        }
    }

    /// One or two sentences for people.
    public func sentence(settingsPath: String) -> String {
        var text: String
        switch self {
        case .wasAlreadyOff: text = "Inspection is off (it already was)."
        case .turnedOff(let wasOn, _): text = wasOn ? "Inspection is now off." : "Inspection is off (it already was)."
        case let .rewroteUnreadable(reason, keptAt, _):
            let limits = SettingsStore.keepingLimits.map(\.name)
            text = "Inspection is now off. The settings file \(settingsPath) could not be read (\(reason)), so it was rewritten with inspection off and every other setting at its default, except "
                + limits.dropLast().joined(separator: ", ") + " and " + limits.last!
                + ": off, so that nothing kept is deleted before you set them again"
            text += keptAt.map { "; the old file is kept at \($0)." } ?? "."
        }
        if let more = delivery.sentence { text += " " + more }
        return text
    }
}
