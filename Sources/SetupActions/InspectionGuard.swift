import CertificateSetup
import Settings
import TrustStore
import TVHome

/// Re-asks trust for the saved store and turns inspection off (saved, and said) when the root
/// stopped being usable: what every command that reports or uses inspection runs first.
public enum InspectionGuard {
    /// The result of one re-check.
    public struct Report: Sendable {
        /// The settings as saved after the check.
        public let record: SettingsRecord
        /// The saved `trust.store`.
        public let store: TrustStoreSpec
        /// The facts for the saved store, with the inspection setting as saved after the check.
        public let snapshot: SetupSnapshot
        /// Sentences for the user (inspection turned off, kept with a warning, could not be saved).
        public let notices: [String]
        /// Set when inspection had to be turned off and that could not be saved.
        public let saveProblem: SettingsError?
    }

    /// Reads the settings, asks the saved store now, and applies `CertificateSetupPolicy.inspectionAction`.
    /// - Throws: `SettingsError` when the settings cannot be read (say so; `tv inspect off` repairs),
    ///   `TrustStoreError` when the saved `trust.store` is not a store.
    public static func recheck(home: TVHome, settings: SettingsStore, environment: [String: String],
                               now: Int64) throws -> Report {
        let record = try settings.read()
        let store = try savedStore(record, settings: settings)
        let snapshot = SetupSnapshot.read(home: home, store: store, inspectionEnabled: record[SettingKeys.inspectionEnabled],
                                          environment: environment, now: now)
        // A leaf key made on this read is said first, once (`LeafKeyRemade`).
        let remade = snapshot.leafKeyNotice.map { [$0] } ?? []
        switch CertificateSetupPolicy.inspectionAction(snapshot.facts) {
        case .leaveAsIs:
            return Report(record: record, store: store, snapshot: snapshot, notices: remade, saveProblem: nil)
        case .keepWithWarning(let sentence):
            return Report(record: record, store: store, snapshot: snapshot, notices: remade + [sentence], saveProblem: nil)
        case .turnOff(let reason):
            do {
                let outcome = try settings.turnInspectionOff()
                var notices = remade + [reason.savedSentence]
                if case .rewroteUnreadable = outcome { notices.append(outcome.sentence(settingsPath: settings.file.path)) }
                else if let more = outcome.delivery.sentence { notices.append(more) }
                let after = (try? settings.read()) ?? record.setting(SettingKeys.inspectionEnabled, to: false)
                return Report(record: after, store: store, snapshot: snapshot.with(inspectionEnabled: false),
                              notices: notices, saveProblem: nil)
            } catch let error as SettingsError {
                return Report(record: record, store: store, snapshot: snapshot,
                              notices: remade + [reason.unsavedSentence(error.message)], saveProblem: error)
            }
        }
    }

    /// The saved `trust.store`, parsed.
    /// - Throws: `SettingsError.corrupt` naming the file when it is not a store.
    public static func savedStore(_ record: SettingsRecord, settings: SettingsStore) throws -> TrustStoreSpec {
        let text = record[SettingKeys.trustStore]
        do { return try TrustStoreSpec(parsing: text) } catch {
            throw SettingsError.corrupt(path: settings.file.path, reason: "trust.store holds '\(text)', which is not a trust store")
        }
    }
}
