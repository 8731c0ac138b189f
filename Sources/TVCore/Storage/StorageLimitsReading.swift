import Recording
import Settings

/// The limits a settings record holds, read with `StorageLimitText`.
public enum StorageLimitsReading {
    /// - Throws: `StorageError.unreadableLimit` when a saved value is not a limit (hand-edited
    ///   file): retention then deletes nothing rather than fall back to a factory value.
    public static func limits(_ record: SettingsRecord) throws -> StorageLimits {
        func read<T>(_ key: SettingKey<String>, _ parse: (String, String) throws(StorageLimitError) -> T) throws -> T {
            let text = record[key]
            do {
                return try parse(text, key.name)
            } catch {
                throw StorageError.unreadableLimit(key: key.name, text: text, sentence: "'\(text)' is not a limit")
            }
        }
        return StorageLimits(historyMaxAge: try read(SettingKeys.historyMaxAge, StorageLimitText.age),
                             capturesMaxBytes: try read(SettingKeys.capturesMaxBytes, StorageLimitText.bytes),
                             capturesMaxAge: try read(SettingKeys.capturesMaxAge, StorageLimitText.age),
                             contentExpiry: ContentExpiry(text: record[SettingKeys.contentExpiry]) ?? .default)
    }

    /// True for the keys whose change runs a retention pass.
    public static func isLimit(_ key: String) -> Bool {
        [SettingKeys.historyMaxAge.name, SettingKeys.capturesMaxBytes.name, SettingKeys.capturesMaxAge.name,
         SettingKeys.contentExpiry.name].contains(key)
    }
}
