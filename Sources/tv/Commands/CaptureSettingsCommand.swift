import Foundation
import Settings

/// `tv settings set` for the capture settings: each value checked before it is saved, and the
/// sentence saying when it applies (a session reads them as it starts).
enum CaptureSettingsCommand {
    static let names: Set<String> = [
        SettingKeys.captureEnabled.name, SettingKeys.captureSnapLength.name, SettingKeys.captureRotateBytes.name,
        SettingKeys.captureRotateAge.name, SettingKeys.capturesMaxBytes.name, SettingKeys.capturesMaxAge.name,
    ]

    /// Saves `value` for `name` (one of `names`).
    /// - Returns: the change, and when it applies.
    /// - Throws: `UsageRefusal` for a value that is not one (nothing is saved).
    static func set(_ name: String, _ value: String, settings: SettingsStore) throws -> (SettingChange, String?) {
        let nextStart = "It applies when the next `tv exec` or `tv run --mode tun` starts; a running session keeps the value it started with."
        switch name {
        case SettingKeys.captureEnabled.name:
            return (try settings.set(SettingKeys.captureEnabled, to: try SettingsCommands.bool(name, value)), nextStart)
        case SettingKeys.captureSnapLength.name:
            guard let n = Int(value), n >= 0, n <= 262_144 else {
                throw UsageRefusal("capture.snaplen takes a number of bytes from 0 (whole packets) to 262144, not '\(value)'.")
            }
            // The snap length is written in each file's header, so it belongs to a session's files.
            return (try settings.set(SettingKeys.captureSnapLength, to: n),
                    "The snap length is written in each capture file's header, so it applies from the next start of `tv exec` or `tv run --mode tun`; rotating does not apply it.")
        case SettingKeys.captureRotateBytes.name, SettingKeys.capturesMaxBytes.name:
            let key = name == SettingKeys.captureRotateBytes.name ? SettingKeys.captureRotateBytes : SettingKeys.capturesMaxBytes
            guard let size = SettingLimit.userBytes(value) else {
                throw UsageRefusal("\(name) takes a size above zero with its unit like 64MB, 2GB or 500KB (1 KB = 1024 bytes), or off, not '\(value)'.")
            }
            return (try settings.set(key, to: size),
                    name == SettingKeys.captureRotateBytes.name ? nextStart : nil)
        default:
            let key = name == SettingKeys.captureRotateAge.name ? SettingKeys.captureRotateAge : SettingKeys.capturesMaxAge
            guard let age = SettingLimit.userMicros(value) else {
                throw UsageRefusal("\(name) takes an age above zero like 90s, 15m, 1h, 30d or 2w, or off, not '\(value)'.")
            }
            return (try settings.set(key, to: age),
                    name == SettingKeys.captureRotateAge.name ? nextStart : nil)
        }
    }
}
