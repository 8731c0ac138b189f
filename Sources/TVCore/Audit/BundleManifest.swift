import Foundation
import TVHome

/// `manifest.json`, the first file of an evidence bundle: what made it, what it covers, and every
/// other file with its size and SHA-256 (what `tv audit verify` checks).
///
/// Shape: `{"format": "tv-audit-bundle", "formatVersion": 1, "tvVersion", "machine",
/// "caSHA256" (hex or null: the first root its runs minted from), "caSHA256s" (the roots they
/// minted from in the order they took over, the first included, one used again listed again;
/// a `tv ca remake` or a run with another `--ca` mid-session adds one), "created" (µs), "project", "session", "from", "to" (µs; null while
/// recording), "settings" (the session's, an object), "contentIncluded" (the bundle holds
/// decrypted content: `decrypted.pcapng` or `content/`), "keysIncluded" (it holds `keys.log`),
/// "files": [{"name", "bytes", "sha256"}], "manifestSHA256"}`. (Both said what was asked, not what was there: a
/// trial's bundle after `tv content delete` said content was included and held none.)
///
/// `manifestSHA256` seals the manifest's own text: the SHA-256 of manifest.json as written with
/// this value as 64 zeros (`sealed`). A flipped digit of `from`, the CA's fingerprint or the
/// machine, or a file's line removed with its file, verified as intact before (a trial); a
/// bundle of an older tv carries no seal, and its fields are not checked.
public struct BundleManifest: Sendable, Equatable {
    public static let fileName = "manifest.json"
    public static let format = "tv-audit-bundle"
    public static let formatVersion: Int64 = 1

    /// One listed file.
    public struct Entry: Sendable, Equatable {
        public var name: String
        public var bytes: Int64
        /// 64 lowercase hex digits.
        public var sha256: String
        public init(name: String, bytes: Int64, sha256: String) {
            self.name = name
            self.bytes = bytes
            self.sha256 = sha256
        }
    }

    public var tvVersion: String
    public var machine: String
    public var caSHA256: String?
    /// Every root the session's runs minted from, in order (`AuditPresentation.roots`).
    public var caSHA256s: [String] = []
    public var created: Int64
    public var project: String
    public var session: Int64
    public var from: Int64
    public var to: Int64?
    /// The session's settings, a JSON object as text.
    public var settings: String
    public var contentIncluded: Bool
    public var keysIncluded: Bool
    public var files: [Entry]

    public var json: JSONValue {
        .object([
            ("format", .string(BundleManifest.format)), ("formatVersion", .int(BundleManifest.formatVersion)),
            ("tvVersion", .string(tvVersion)), ("machine", .string(machine)),
            ("caSHA256", caSHA256.map { .string($0) } ?? .null), ("caSHA256s", .array(caSHA256s.map { .string($0) })),
            ("created", .int(created)),
            ("project", .string(project)), ("session", .int(session)),
            ("from", .int(from)), ("to", to.map { .int($0) } ?? .null),
            ("settings", AuditPresentation.settingsJSON(settings)),
            ("contentIncluded", .bool(contentIncluded)), ("keysIncluded", .bool(keysIncluded)),
            ("files", .array(files.map { .object([("name", .string($0.name)), ("bytes", .int($0.bytes)), ("sha256", .string($0.sha256))]) })),
            ("manifestSHA256", .string(BundleManifest.unsealed)),
        ])
    }

    /// The seal's value before it is computed.
    static let unsealed = String(repeating: "0", count: 64)

    /// `text` (a manifest serialized with `unsealed` as its `manifestSHA256`) with the seal's value
    /// put in: the SHA-256 of `text` itself. Nil when the text holds no seal or OpenSSL cannot hash.
    public static func sealed(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        guard let at = sealValue(in: bytes), bytes[at].allSatisfy({ $0 == UInt8(ascii: "0") }),
              let hash = SHA256Digest.hex(bytes) else { return nil }
        return String(decoding: bytes[..<at.lowerBound] + Array(hash.utf8) + bytes[at.upperBound...], as: UTF8.self)
    }

    /// Where the 64 hex digits of the one `"manifestSHA256": "…"` in `bytes` are; nil when there
    /// is none, or more than one.
    static func sealValue(in bytes: [UInt8]) -> Range<Int>? {
        let key = Array("\"manifestSHA256\"".utf8)
        var found: Range<Int>?
        var i = 0
        while i + key.count <= bytes.count {
            // A key, not the same text inside a string (a project named so: `\"` there).
            guard bytes[i] == key[0], i == 0 || bytes[i - 1] != UInt8(ascii: "\\"), bytes[i ..< i + key.count].elementsEqual(key) else { i += 1; continue }
            var j = i + key.count
            while j < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[j]) { j += 1 }
            guard j < bytes.count, bytes[j] == UInt8(ascii: ":") else { return nil }
            j += 1
            while j < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[j]) { j += 1 }
            guard j + 66 <= bytes.count, bytes[j] == UInt8(ascii: "\""), bytes[j + 65] == UInt8(ascii: "\""), found == nil else { return nil }
            found = j + 1 ..< j + 65
            i = j + 66
        }
        return found
    }

    /// Whether the manifest's text hashes to its seal (`sealed`): nil when it carries none (an
    /// older tv's bundle).
    static func sealHolds(_ bytes: [UInt8]) -> Bool? {
        guard let at = sealValue(in: bytes) else {
            return String(decoding: bytes, as: UTF8.self).contains("\"manifestSHA256\"") ? false : nil
        }
        let zeroed = Array(bytes[..<at.lowerBound]) + Array(unsealed.utf8) + Array(bytes[at.upperBound...])
        guard let hash = SHA256Digest.hex(zeroed) else { return false }
        return bytes[at].elementsEqual(hash.utf8)
    }

    /// What `tv audit verify` reads of a manifest: its format version and its file list.
    public struct Listing: Sendable, Equatable {
        public var formatVersion: Int64
        public var entries: [Entry]
        /// `formatVersion` is there but is no whole number as JSON writes one (`true`, `1.5`,
        /// `1e0`, `"1"`, past 64 bits): JSON readers took `true` and `1.5` for 1 and wrapped a
        /// huge number (a re-check).
        public var formatVersionMalformed = false
        /// Whether the text hashes to its `manifestSHA256` (`sealHolds`); nil: no seal.
        public var sealHolds: Bool?
        public init(formatVersion: Int64, entries: [Entry], formatVersionMalformed: Bool = false, sealHolds: Bool? = nil) {
            self.formatVersion = formatVersion
            self.entries = entries
            self.formatVersionMalformed = formatVersionMalformed
            self.sealHolds = sealHolds
        }
    }

    /// The manifest's `formatVersion` as its text writes it: digits only (an optional minus),
    /// within 64 bits; nil for any other spelling. Pure.
    static func wholeFormatVersion(_ text: String) -> Int64? {
        guard let key = text.range(of: "\"formatVersion\"") else { return nil }
        var rest = text[key.upperBound...].drop { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }
        guard rest.first == ":" else { return nil }
        rest = rest.dropFirst().drop { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }
        let token = rest.prefix { $0 == "-" || $0.isASCII && $0.isNumber }
        let after = rest.dropFirst(token.count).first { $0 != " " && $0 != "\n" && $0 != "\t" && $0 != "\r" }
        guard !token.isEmpty, after == "," || after == "}" else { return nil }
        return Int64(token)
    }

    /// The format version and file list of a manifest's text; nil when it is not a tv bundle
    /// manifest (a version this tv does not know is returned as it is, for the verdict to say).
    public static func listing(_ bytes: [UInt8]) -> Listing? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
              object["format"] as? String == format, object["formatVersion"] != nil else { return nil }
        guard let version = wholeFormatVersion(String(decoding: bytes, as: UTF8.self)) else {
            return Listing(formatVersion: 0, entries: [], formatVersionMalformed: true)
        }
        guard version == formatVersion else { return Listing(formatVersion: version, entries: []) }
        guard let files = object["files"] as? [[String: Any]] else { return nil }
        var out: [Entry] = []
        for file in files {
            guard let name = file["name"] as? String, let bytes = (file["bytes"] as? Int).map(Int64.init) ?? (file["bytes"] as? NSNumber)?.int64Value,
                  let sha256 = file["sha256"] as? String else { return nil }
            out.append(Entry(name: name, bytes: bytes, sha256: sha256))
        }
        return Listing(formatVersion: version, entries: out, sealHolds: sealHolds(bytes))
    }
}
