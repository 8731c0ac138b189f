import Foundation
import TVHome

/// `manifest.json`, the first file of an evidence bundle: what made it, what it covers, and every
/// other file with its size and SHA-256 (what `tv audit verify` checks).
///
/// Shape: `{"format": "tv-audit-bundle", "formatVersion": 1, "tvVersion", "machine",
/// "caSHA256" (hex or null), "created" (µs), "project", "session", "from", "to" (µs; null while
/// recording), "settings" (the session's, an object), "contentIncluded", "keysIncluded",
/// "files": [{"name", "bytes", "sha256"}]}`.
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
            ("caSHA256", caSHA256.map { .string($0) } ?? .null), ("created", .int(created)),
            ("project", .string(project)), ("session", .int(session)),
            ("from", .int(from)), ("to", to.map { .int($0) } ?? .null),
            ("settings", AuditPresentation.settingsJSON(settings)),
            ("contentIncluded", .bool(contentIncluded)), ("keysIncluded", .bool(keysIncluded)),
            ("files", .array(files.map { .object([("name", .string($0.name)), ("bytes", .int($0.bytes)), ("sha256", .string($0.sha256))]) })),
        ])
    }

    /// The file list of a manifest's text; nil when it is not a tv bundle manifest.
    public static func entries(_ bytes: [UInt8]) -> [Entry]? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
              object["format"] as? String == format, let files = object["files"] as? [[String: Any]] else { return nil }
        var out: [Entry] = []
        for file in files {
            guard let name = file["name"] as? String, let bytes = (file["bytes"] as? Int).map(Int64.init) ?? (file["bytes"] as? NSNumber)?.int64Value,
                  let sha256 = file["sha256"] as? String else { return nil }
            out.append(Entry(name: name, bytes: bytes, sha256: sha256))
        }
        return out
    }
}

/// What `tv audit verify` found: the bundle is intact, or the first thing that is not.
public enum BundleVerdict: Sendable, Equatable {
    case intact(files: Int)
    /// A listed file's bytes do not hash to the manifest's SHA-256.
    case changed(String)
    /// A listed file's size is not the manifest's.
    case wrongSize(String, expected: Int64, found: Int64)
    /// A listed file is not in the archive.
    case missing(String)
    /// The archive holds a file the manifest does not list.
    case unlisted(String)
    /// The archive holds no manifest, or one that is not a tv bundle's.
    case noManifest
    /// The archive itself cannot be read: cut short, not gzip or tar, a damaged header.
    case unreadable(String)

    /// Decides the verdict from what was read (pure): the manifest's list against the files
    /// found, in archive order (`found`: name, size, SHA-256).
    public static func decide(manifest: [BundleManifest.Entry]?, found: [BundleManifest.Entry]) -> BundleVerdict {
        guard let manifest else { return .noManifest }
        var byName: [String: BundleManifest.Entry] = [:]
        for entry in found where entry.name != BundleManifest.fileName { byName[entry.name] = entry }
        for entry in manifest {
            guard let seen = byName.removeValue(forKey: entry.name) else { return .missing(entry.name) }
            if seen.bytes != entry.bytes { return .wrongSize(entry.name, expected: entry.bytes, found: seen.bytes) }
            if seen.sha256 != entry.sha256.lowercased() { return .changed(entry.name) }
        }
        if let extra = found.first(where: { byName[$0.name] != nil }) { return .unlisted(extra.name) }
        return .intact(files: manifest.count)
    }

    /// One sentence.
    public func sentence(file: String) -> String {
        let f = TerminalText.line(file)
        switch self {
        case let .intact(files):
            return "\(f) is intact: all \(files) file\(files == 1 ? "" : "s") match the SHA-256 in its manifest (nothing was damaged or lost; the manifest is not signed, so this does not show that nobody rewrote the bundle whole)."
        case let .changed(name):
            return "\(f) is NOT intact: \(TerminalText.line(name)) was changed (its SHA-256 differs from the manifest's)."
        case let .wrongSize(name, expected, found):
            return "\(f) is NOT intact: \(TerminalText.line(name)) holds \(found) bytes where the manifest says \(expected)."
        case let .missing(name):
            return "\(f) is NOT intact: \(TerminalText.line(name)) is listed in the manifest but missing from the archive."
        case let .unlisted(name):
            return "\(f) is NOT intact: \(TerminalText.line(name)) is in the archive but not in the manifest."
        case .noManifest:
            return "\(f) is NOT a tv evidence bundle: it holds no readable manifest.json."
        case let .unreadable(reason):
            return "\(f) is NOT intact: \(reason)."
        }
    }

    public var isIntact: Bool {
        if case .intact = self { return true }
        return false
    }
}

/// Reads a bundle (gzip-compressed or plain ustar) and hashes every file as it streams by.
public enum BundleVerifier {
    /// The most manifest text read (a manifest is a few KiB per thousand files).
    static let manifestLimit = 64 << 20

    /// Verifies the bundle at `path`.
    public static func verify(path: String) -> BundleVerdict {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            return .unreadable("it cannot be opened (\(String(cString: strerror(errno))))")
        }
        defer { close(fd) }
        var reader = UstarStreamReader()
        var found: [BundleManifest.Entry] = []
        var manifest: [UInt8] = []
        var digest: SHA256Digest?
        var currentName = ""
        var currentSize: Int64 = 0
        func endMember() {
            if let d = digest { found.append(.init(name: currentName, bytes: currentSize, sha256: d.hex())) }
            digest = nil
        }
        func feedTar(_ bytes: UnsafeRawBufferPointer) throws {
            try reader.take(bytes, member: { member in
                endMember()
                currentName = member.name
                currentSize = member.size
                digest = SHA256Digest()
            }, data: { data in
                digest?.update(data)
                if currentName == BundleManifest.fileName && manifest.count < manifestLimit { manifest += data }
            })
        }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var gzip: GzipDecompressor?
        var first = true
        do {
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n < 0 {
                    if errno == EINTR { continue }
                    return .unreadable("reading it failed (\(String(cString: strerror(errno))))")
                }
                if n == 0 { break }
                if first {
                    first = false
                    if n >= 2 && buffer[0] == 0x1F && buffer[1] == 0x8B {
                        guard let g = GzipDecompressor() else { return .unreadable("zlib could not start") }
                        gzip = g
                    } else if n < 512 || !buffer[257..<262].elementsEqual("ustar".utf8) {
                        // Neither gzip (RFC 1952 §2.3.1's magic) nor a POSIX tar header ("ustar" at 257).
                        return .unreadable("it is not an archive `tv audit bundle` writes (neither gzip nor tar)")
                    }
                }
                try buffer.withUnsafeBytes { raw in
                    let piece = UnsafeRawBufferPointer(rebasing: raw[..<n])
                    if let gzip { try gzip.take(piece, emit: feedTar) } else { try feedTar(piece) }
                }
            }
            try gzip?.finish()
            try reader.finish()
        } catch let problem as GzipDecompressor.Problem {
            switch problem {
            case let .damaged(words): return .unreadable("its compressed stream is damaged (zlib: \(words))")
            case .endsEarly: return .unreadable("it ends before its compressed stream does (cut short)")
            }
        } catch let problem as UstarStreamReader.Problem {
            switch problem {
            case let .badHeader(after, _):
                return .unreadable("a tar header " + (after.map { "after \(TerminalText.line($0)) " } ?? "") + "is damaged (its checksum or a field is wrong)")
            case let .endsEarly(inside):
                return .unreadable("the archive ends early" + (inside.map { " inside \(TerminalText.line($0))" } ?? ""))
            case let .notAFile(name):
                return .unreadable("\(TerminalText.line(name)) is not a regular file")
            }
        } catch {
            return .unreadable("\(error)")
        }
        endMember()
        return BundleVerdict.decide(manifest: BundleManifest.entries(manifest), found: found)
    }
}
