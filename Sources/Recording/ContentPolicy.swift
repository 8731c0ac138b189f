import Foundation
import TVHome

/// The three decrypted-content settings as plain values: whether to keep content, for how long,
/// and the per-direction flow budget. The settings module stores them; a session is handed a
/// `ContentPolicy` at start and a new one whenever a setting changes (saved first, applied second).
public struct ContentPolicy: Sendable, Equatable {
    /// Setting names, as `tv settings` shows them.
    public enum Key {
        /// `content.keep`: on/off, default off.
        public static let keep = "content.keep"
        /// `content.expiry`: `1h|1d|1w`, default `1d`.
        public static let expiry = "content.expiry"
        /// `content.flowBudget`: bytes per direction per flow, default 1,048,576.
        public static let flowBudget = "content.flowBudget"
    }

    /// The smallest accepted `content.flowBudget`: 1,024 bytes.
    public static let minimumFlowBudget = 1_024
    /// The largest accepted `content.flowBudget`: 64 MiB (the store's ceiling is 512 MiB).
    public static let maximumFlowBudget = 64 * 1_048_576

    /// Whether a session writes the plaintext of inspected (and plain) flows (default off).
    public var keep: Bool
    /// How long what was written is kept (default one day).
    public var expiry: ContentExpiry
    /// Bytes kept per direction per flow (default 1 MiB).
    public var flowBudget: Int

    public init(keep: Bool = false, expiry: ContentExpiry = .default, flowBudget: Int = RecordingBudget.defaultFlowBudget) {
        self.keep = keep
        self.expiry = expiry
        self.flowBudget = flowBudget
    }

    /// The recording budget this policy gives each new flow.
    public var budget: RecordingBudget { RecordingBudget(flowBudget: flowBudget) }

    /// Checks a change of `content.keep` before it is saved: turning it on needs inspection on;
    /// turning it off always works.
    /// - Throws: `ContentSettingError.keepNeedsInspection` when `on` while inspection is off.
    public static func checkKeep(_ on: Bool, inspectionOn: Bool) throws {
        if on && !inspectionOn { throw ContentSettingError.keepNeedsInspection }
    }

    /// Reads a `content.expiry` value typed by a person.
    /// - Throws: `ContentSettingError.badExpiry` for anything but 1h, 1d, 1w.
    public static func parseExpiry(_ text: String) throws -> ContentExpiry {
        guard let expiry = ContentExpiry(text: text) else { throw ContentSettingError.badExpiry(text) }
        return expiry
    }

    /// Reads a `content.flowBudget` value: a whole number of bytes, optionally with a binary
    /// suffix (`262144`, `256K`, `256KB`, `256KiB`, `1M`, `1MB`, `1MiB`), any case.
    /// - Throws: `ContentSettingError.badFlowBudget` when it is not such a number or lies
    ///   outside 1 KiB…64 MiB.
    public static func parseFlowBudget(_ text: String) throws -> Int {
        var digits = text.trimmingCharacters(in: .whitespaces).uppercased()
        var factor = 1
        // KB and MB as every other size setting takes them (1 KB = 1,024 bytes): `1MB` was refused
        // here alone (a trial).
        for (suffix, multiplier) in [("KIB", 1_024), ("MIB", 1_048_576), ("KB", 1_024), ("MB", 1_048_576), ("K", 1_024), ("M", 1_048_576), ("B", 1)]
        where digits.hasSuffix(suffix) {
            digits.removeLast(suffix.count)
            factor = multiplier
            break
        }
        guard let number = Int(digits.trimmingCharacters(in: .whitespaces)),
              number >= 0, number <= maximumFlowBudget / factor,
              number * factor >= minimumFlowBudget else {
            throw ContentSettingError.badFlowBudget(text)
        }
        return number * factor
    }
}

/// A decrypted-content setting that cannot be saved as asked.
public enum ContentSettingError: UserFacingError, Equatable {
    /// `content.keep on` while inspection is off: nothing is decrypted, so it would govern nothing.
    case keepNeedsInspection
    /// A `content.expiry` value other than 1h, 1d, 1w.
    case badExpiry(String)
    /// A `content.flowBudget` value that is not a byte count in range.
    case badFlowBudget(String)

    /// 2 for a value that is not one (a bad command line, as every other setting's bad value);
    /// 1 for a state that refuses a good value.
    public var exitCode: Int32 {
        switch self {
        case .keepNeedsInspection: return 1
        case .badExpiry, .badFlowBudget: return 2
        }
    }

    public var message: String {
        switch self {
        case .keepNeedsInspection:
            return "Keeping decrypted content needs inspection on, because nothing is decrypted otherwise; turn inspection on first (tv inspect on), then try again."
        case let .badExpiry(text):
            return "'\(text)' is not a content expiry; use 1h, 1d or 1w (there is no 'forever')."
        case let .badFlowBudget(text):
            return "'\(text)' is not a flow budget; give bytes per direction between 1K and 64M (for example 1048576, 256KB or 1MB)."
        }
    }
}
