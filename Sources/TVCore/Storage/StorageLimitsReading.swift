import Recording
import Settings

/// The limits a settings record holds (`SettingLimit`, the one reading of `2GB` / `30d` / `off`).
public enum StorageLimitsReading {
    /// - Throws: `StorageError.unreadableLimit` when a saved value is not a limit (hand-edited
    ///   file): retention then deletes nothing rather than fall back to a factory value.
    public static func limits(_ record: SettingsRecord) throws -> StorageLimits {
        func read(_ key: SettingKey<String>, _ parse: (String) -> SettingLimit) throws -> Int64? {
            switch parse(record[key]) {
            case .off: return nil
            case .limit(let n): return n
            case .unreadable(let text):
                throw StorageError.unreadableLimit(key: key.name, text: text, sentence: "'\(text)' is not a limit")
            }
        }
        return StorageLimits(historyMaxAge: try read(SettingKeys.historyMaxAge, SettingLimit.micros),
                             capturesMaxBytes: try read(SettingKeys.capturesMaxBytes, SettingLimit.bytes),
                             capturesMaxAge: try read(SettingKeys.capturesMaxAge, SettingLimit.micros),
                             contentExpiry: ContentExpiry(text: record[SettingKeys.contentExpiry]) ?? .default)
    }

    /// True for the keys whose change runs a retention pass.
    public static func isLimit(_ key: String) -> Bool {
        [SettingKeys.historyMaxAge.name, SettingKeys.capturesMaxBytes.name, SettingKeys.capturesMaxAge.name,
         SettingKeys.contentExpiry.name].contains(key)
    }
}
