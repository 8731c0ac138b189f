import Foundation
import Settings

/// `tv settings set` for the capture settings: each value checked before it is saved, and the
/// sentence saying when it applies (a session reads them as it starts).
enum CaptureSettingsCommand {
    static let names: Set<String> = [
        SettingKeys.captureEnabled.name, SettingKeys.captureSnapLength.name, SettingKeys.captureRotateBytes.name,
        SettingKeys.captureRotateAge.name, SettingKeys.capturesMaxBytes.name, SettingKeys.capturesMaxAge.name,
    ]

    /// The smallest rotation size and size limit (1 MiB) and the shortest rotation age and
    /// expiry (10 s) a setting takes.
    static let smallestSize: Int64 = 1 << 20
    static let shortestAge: Int64 = 10_000_000

    /// Saves `value` for `name` (one of `names`).
    /// - Parameter consent: asked once the value is known to be one, before it is saved (a limit
    ///   that deletes files now: `CaptureLimitConsent`); it throws to refuse. A value that is not
    ///   one is refused first (`1B` was said to delete files, then refused as too small: a trial).
    /// - Returns: the change, and when it applies.
    /// - Throws: `UsageRefusal` for a value that is not one (nothing is saved), what `consent` throws.
    static func set(_ name: String, _ value: String, settings: SettingsStore, consent: () throws -> Void = {}) throws -> (SettingChange, String?) {
        // A running session says itself that it keeps the value it started with (both said it: a re-check).
        let nextStart = "It applies when the next `tv exec` or `tv run --mode tun` starts."
        // The rotation settings rotate the decrypted capture too, in every mode (`capture.rotateBytes`
        // said it applied to tv exec and --mode tun only, and a `tv run`'s decrypted capture never
        // rotated: a trial).
        let rotationAtNextStart = "It applies when the next session starts: the packet captures of `tv exec` and `tv run --mode tun`, and the decrypted capture of any session (capture.decrypted)."
        switch name {
        case SettingKeys.captureEnabled.name:
            return (try settings.set(SettingKeys.captureEnabled, to: try SettingsCommands.bool(name, value)), nextStart)
        case SettingKeys.captureSnapLength.name:
            // Below 64 not even a packet's IP and TCP headers fit (IPv6's 40 and TCP's 20 bytes
            // without options: tcpdump's classic 68 is of the same mind), and every row's
            // meaning, flags and ports would be lost to the cut.
            guard let n = Int(value), n == 0 || (n >= 64 && n <= 262_144) else {
                throw UsageRefusal("capture.snaplen takes 0 (whole packets) or a number of bytes from 64 (a packet's IP and TCP headers) to 262144, not '\(value)'.")
            }
            // The snap length is written in each file's header, so it belongs to a session's files.
            return (try settings.set(SettingKeys.captureSnapLength, to: n),
                    "The snap length is written in each capture file's header, so it applies from the next start of `tv exec` or `tv run --mode tun`; rotating does not apply it.")
        case SettingKeys.captureRotateBytes.name, SettingKeys.capturesMaxBytes.name:
            let key = name == SettingKeys.captureRotateBytes.name ? SettingKeys.captureRotateBytes : SettingKeys.capturesMaxBytes
            guard let size = SettingLimit.userBytes(value) else {
                if SettingLimit.isTooManyBytes(value) {
                    throw UsageRefusal("\(name) takes at most \(SettingLimit.largestUserBytes), and '\(value)' is more bytes than that; set a smaller size, or off for no limit.")
                }
                throw UsageRefusal("\(name) takes a size of 1MB or more with its unit like 64MB or 2GB (1 KB = 1024 bytes), or off, not '\(value)'.")
            }
            // Smaller, a capture file would rotate (or be deleted) at every few packets.
            if case .limit(let bytes) = SettingLimit.bytes(size), bytes < Self.smallestSize {
                throw UsageRefusal(name == SettingKeys.captureRotateBytes.name
                    ? "\(name) takes 1MB or more (or off): a capture file of '\(value)' would be closed every few packets."
                    : "\(name) takes 1MB or more (or off): all captures within '\(value)' would hold only a few packets, each file deleted as soon as the next began.")
            }
            if let refusal = try rotationBeyondLimit(name, size, settings: settings) { throw refusal }
            try consent()
            return (try settings.set(key, to: size),
                    name == SettingKeys.captureRotateBytes.name ? rotationAtNextStart : nil)
        default:
            let key = name == SettingKeys.captureRotateAge.name ? SettingKeys.captureRotateAge : SettingKeys.capturesMaxAge
            guard let age = SettingLimit.userMicros(value) else {
                throw UsageRefusal("\(name) takes an age of 10s or more like 90s, 15m, 1h, 30d or 2w, or off, not '\(value)'.")
            }
            if case .limit(let micros) = SettingLimit.micros(age), micros < Self.shortestAge {
                throw UsageRefusal(name == SettingKeys.captureRotateAge.name
                    ? "\(name) takes 10s or more (or off): a capture file closed every '\(value)' would hold only a few packets."
                    : "\(name) takes 10s or more (or off): each capture file would be deleted '\(value)' after it was closed, before anyone could read it.")
            }
            try consent()
            return (try settings.set(key, to: age),
                    name == SettingKeys.captureRotateAge.name ? rotationAtNextStart : nil)
        }
    }

    /// The refusal for a rotation size above the size limit on all captures (or a limit below the
    /// rotation size), nil when they fit: the file being recorded is never deleted, so it would
    /// grow past the limit before it was closed (a trial saved capture.rotateBytes 5GB under a 1GB
    /// captures.maxBytes). Equal is allowed: the file being recorded is then all that is kept.
    static func rotationBeyondLimit(_ name: String, _ size: String, settings: SettingsStore) throws -> UsageRefusal? {
        let record = try settings.read()
        let rotating = name == SettingKeys.captureRotateBytes.name
        let rotation = rotating ? size : record[SettingKeys.captureRotateBytes]
        let limit = rotating ? record[SettingKeys.capturesMaxBytes] : size
        guard case .limit(let limitBytes) = SettingLimit.bytes(limit) else { return nil }
        // No size rotation at all: the file being recorded grows until its age rotation (a
        // re-check saved `off` under a 1MB limit).
        if case .off = SettingLimit.bytes(rotation) {
            return rotating
                ? UsageRefusal("capture.rotateBytes off lets the file being recorded grow past captures.maxBytes (\(limit)) before it closes, and that file is never deleted; set a size of at most \(limit), or turn captures.maxBytes off first.")
                : UsageRefusal("captures.maxBytes \(size) needs capture.rotateBytes set (it is off): the file being recorded, never deleted, would grow past \(size) before it closed; set capture.rotateBytes to \(size) or less first.")
        }
        guard case .limit(let rotationBytes) = SettingLimit.bytes(rotation), rotationBytes > limitBytes else { return nil }
        return rotating
            ? UsageRefusal("capture.rotateBytes takes at most captures.maxBytes (\(limit)): a capture file of \(size) would outgrow the limit on all captures before it was closed, and the file being recorded is never deleted; set a smaller size, or raise captures.maxBytes first.")
            : UsageRefusal("captures.maxBytes takes at least capture.rotateBytes (\(rotation)): the file being recorded, never deleted, would outgrow \(size) before it was closed; lower capture.rotateBytes first (`tv settings set capture.rotateBytes \(size)`), or set a larger limit.")
    }
}
