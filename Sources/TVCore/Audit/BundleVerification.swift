import Foundation
import TVHome

/// What `tv audit verify` found: the bundle is intact, the first thing that is not, or why it
/// could not be checked at all.
public enum BundleVerdict: Sendable, Equatable {
    case intact(files: Int)
    /// Every file matches, and the manifest carries no seal (`manifestSHA256`: an older tv's
    /// bundle, or one whose seal was taken out): its own fields were not checked.
    case intactUnsealed(files: Int)
    /// A listed file's bytes do not hash to the manifest's SHA-256.
    case changed(String)
    /// A listed file's size is not the manifest's.
    case wrongSize(String, expected: Int64, found: Int64)
    /// A listed file is not in the archive.
    case missing(String)
    /// The archive holds a file the manifest does not list.
    case unlisted(String)
    /// The archive holds two members of this name (unpacked, one shadows the other).
    case heldTwice(String)
    /// The manifest lists this name twice.
    case listedTwice(String)
    /// A member that unpacking could write outside its folder: absolute, or with an empty, `.`
    /// or `..` component.
    case unsafeName(String)
    /// The manifest lists such a name (no member need hold it).
    case unsafeListedName(String)
    /// The manifest lists itself (`manifest.json` is never in its own list).
    case listsItself
    /// The file is neither gzip nor tar: not a bundle at all, so nothing was checked.
    case notAnArchive
    /// Bytes follow the end of what `tv audit bundle` wrote (after the gzip member, or after
    /// the tar's end-of-archive blocks): something was appended.
    case appended(bytes: Int64)
    /// The archive holds no manifest, or one that is not a tv bundle's.
    case noManifest
    /// The manifest is of a bundle format this tv does not read.
    case unknownFormat(Int64)
    /// The manifest's `formatVersion` is no whole number (`BundleManifest.Listing.formatVersionMalformed`).
    case malformedFormatVersion
    /// The manifest's text does not hash to the `manifestSHA256` it carries: one of its own
    /// fields (the span, the CA's fingerprint, the machine, a file's line) was changed.
    case manifestChanged
    /// The archive itself cannot be read: cut short, not gzip or tar, a damaged header.
    case unreadable(String)
    /// The file could not be opened or read at all (a wrong path, no permission): nothing was
    /// checked, so nothing is said of the bundle.
    case cannotRead(String)

    /// Decides the verdict from what was read (pure): the manifest's listing against the files
    /// found, in archive order (`found`: name, size, SHA-256). The archive's own shape comes
    /// first (a name held twice, an unsafe name), then the manifest, then each listed file.
    public static func decide(manifest: BundleManifest.Listing?, found: [BundleManifest.Entry]) -> BundleVerdict {
        var seen = Set<String>()
        for entry in found {
            if !isSafe(entry.name) { return .unsafeName(entry.name) }
            if !seen.insert(entry.name).inserted { return .heldTwice(entry.name) }
        }
        guard let manifest else { return .noManifest }
        if manifest.formatVersionMalformed { return .malformedFormatVersion }
        guard manifest.formatVersion == BundleManifest.formatVersion else { return .unknownFormat(manifest.formatVersion) }
        if manifest.sealHolds == false { return .manifestChanged }
        var listed = Set<String>()
        for entry in manifest.entries {
            if !isSafe(entry.name) { return .unsafeListedName(entry.name) }
            if entry.name == BundleManifest.fileName { return .listsItself }
            if !listed.insert(entry.name).inserted { return .listedTwice(entry.name) }
        }
        var byName: [String: BundleManifest.Entry] = [:]
        for entry in found where entry.name != BundleManifest.fileName { byName[entry.name] = entry }
        for entry in manifest.entries {
            guard let seen = byName.removeValue(forKey: entry.name) else { return .missing(entry.name) }
            if seen.bytes != entry.bytes { return .wrongSize(entry.name, expected: entry.bytes, found: seen.bytes) }
            if seen.sha256 != entry.sha256.lowercased() { return .changed(entry.name) }
        }
        if let extra = found.first(where: { byName[$0.name] != nil }) { return .unlisted(extra.name) }
        // A seal taken out verified as plain intact (a re-check): said apart.
        return manifest.sealHolds == nil ? .intactUnsealed(files: manifest.entries.count) : .intact(files: manifest.entries.count)
    }

    /// A relative name of non-empty components, none `.` or `..` (what `tv audit bundle` writes).
    static func isSafe(_ name: String) -> Bool {
        !name.isEmpty && !name.hasPrefix("/")
            && name.split(separator: "/", omittingEmptySubsequences: false).allSatisfy { !$0.isEmpty && $0 != "." && $0 != ".." }
    }

    /// One sentence.
    public func sentence(file: String) -> String {
        let f = TerminalText.line(file)
        switch self {
        case let .intact(files):
            return "\(f) is intact: all \(files) file\(files == 1 ? "" : "s") match the SHA-256 in its manifest (nothing was damaged or lost; the manifest is not signed, so this does not show that nobody rewrote the bundle whole)."
        case let .intactUnsealed(files):
            return "\(f) is NOT shown intact: all \(files) file\(files == 1 ? "" : "s") match the SHA-256 in its manifest, but the manifest carries no seal (manifestSHA256, which every bundle of this tv has: taken out, or an older tv's bundle), so its own fields and file list (the span, the CA's fingerprint, the machine) cannot be relied on."
        case let .changed(name):
            return "\(f) is NOT intact: \(TerminalText.line(name)) was changed (its SHA-256 differs from the manifest's)."
        case let .wrongSize(name, expected, found):
            return "\(f) is NOT intact: \(TerminalText.line(name)) holds \(found) bytes where the manifest says \(expected)."
        case let .missing(name):
            return "\(f) is NOT intact: \(TerminalText.line(name)) is listed in the manifest but missing from the archive."
        case let .unlisted(name):
            return "\(f) is NOT intact: \(TerminalText.line(name)) is in the archive but not in the manifest."
        case let .heldTwice(name):
            return "\(f) is NOT intact: the archive holds \(TerminalText.line(name)) twice (unpacked, one copy would replace the other)."
        case let .listedTwice(name):
            return "\(f) is NOT intact: its manifest lists \(TerminalText.line(name)) twice."
        case let .unsafeName(name):
            return "\(f) is NOT intact: it holds \(TerminalText.line(name)), a name `tv audit bundle` never writes (absolute, or with an empty, . or .. part; an absolute or .. name unpacks outside its folder)."
        case let .unsafeListedName(name):
            return "\(f) is NOT intact: its manifest lists \(TerminalText.line(name)), a name `tv audit bundle` never writes (absolute, or with an empty, . or .. part)."
        case .listsItself:
            return "\(f) is NOT intact: its manifest lists manifest.json itself, which `tv audit bundle` never does."
        case .notAnArchive:
            return "\(f) is not a tv evidence bundle: it is neither gzip nor tar, so nothing was checked."
        case let .appended(bytes):
            return "\(f) is NOT intact: \(bytes) byte\(bytes == 1 ? "" : "s") follow the end of the archive tv wrote (something was appended)."
        case .noManifest:
            return "\(f) is NOT a tv evidence bundle: it holds no readable manifest.json."
        case .manifestChanged:
            return "\(f) is NOT intact: its manifest.json was changed (its text does not hash to the manifestSHA256 it carries), so its span, CA fingerprint, machine and file list cannot be relied on."
        case .malformedFormatVersion:
            return "\(f) is NOT intact: its manifest's formatVersion is not a whole number (tv writes \(BundleManifest.formatVersion))."
        case let .unknownFormat(version) where version < BundleManifest.formatVersion:
            // No tv wrote a format below 1: not "newer", and nothing to check it with (a trial).
            return "\(f) is NOT intact: its manifest names bundle format \(version), which no tv writes (tv's formats start at 1)."
        case let .unknownFormat(version):
            return "\(f) is a tv evidence bundle of format \(version), which this tv (format \(BundleManifest.formatVersion)) cannot check; verify it with the tv that wrote it or a newer one."
        case let .unreadable(reason):
            return "\(f) is NOT intact: \(reason)."
        case let .cannotRead(reason):
            return "tv could not read \(f) (\(reason)), so nothing was checked; give the path of a bundle file you can read."
        }
    }

    public var isIntact: Bool {
        switch self {
        case .intact, .intactUnsealed: return true
        default: return false
        }
    }

    /// `tv audit verify`'s exit status: 0 intact, 2 nothing could be checked (the file could
    /// not be read, is no archive at all, or its format is newer than this tv), 1 not intact,
    /// and 1 too for a manifest without its seal: a script reading 0 as "intact" passed a bundle
    /// edited by hand with its seal line taken out (an audit trial).
    public var exitCode: Int32 {
        switch self {
        case .intact: return 0
        case let .unknownFormat(version): return version < BundleManifest.formatVersion ? 1 : 2
        case .cannotRead, .notAnArchive: return 2
        default: return 1
        }
    }
}

/// Reads a bundle (gzip-compressed or plain ustar) and hashes every file as it streams by.
public enum BundleVerifier {
    /// The most manifest text read (a manifest is a few KiB per thousand files).
    static let manifestLimit = 64 << 20

    /// Verifies the bundle at `path` (`-`: standard input, as every command's `-o -` writes it).
    public static func verify(path: String) -> BundleVerdict {
        let fd = path == "-" ? dup(STDIN_FILENO) : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .cannotRead(String(cString: strerror(errno))) }
        defer { close(fd) }
        var info = stat()
        if fstat(fd, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR { return .cannotRead("it is a folder") }
        var reader = UstarStreamReader()
        var found: [BundleManifest.Entry] = []
        var manifest: [UInt8] = []
        var manifests = 0
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
                if member.name == BundleManifest.fileName { manifests += 1 }
            }, data: { data in
                digest?.update(data)
                // The first manifest only (a second is `heldTwice`).
                if currentName == BundleManifest.fileName && manifests == 1 && manifest.count < manifestLimit { manifest += data }
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
                    return .cannotRead("reading it failed: \(String(cString: strerror(errno)))")
                }
                if n == 0 {
                    if first { return .unreadable("it is empty (0 bytes)") }
                    break
                }
                if first {
                    first = false
                    if n >= 2 && buffer[0] == 0x1F && buffer[1] == 0x8B {
                        guard let g = GzipDecompressor() else { return .unreadable("zlib could not start") }
                        gzip = g
                    } else if n < 512 || !buffer[257..<262].elementsEqual("ustar".utf8) {
                        // Neither gzip (RFC 1952 §2.3.1's magic) nor a POSIX tar header ("ustar" at 257):
                        // another file given by mistake (a HAR), not a damaged bundle (a trial's
                        // read "NOT intact", exit 1).
                        return .notAnArchive
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
        // Appended bytes: after the one gzip member tv writes (a second member, or garbage), or
        // non-zero bytes after the tar's end (GNU tar pads a record with zeros).
        let appended = (gzip?.trailingBytes ?? 0) + reader.trailingBytes
        let verdict = BundleVerdict.decide(manifest: BundleManifest.listing(manifest), found: found)
        if appended > 0, verdict.isIntact { return .appended(bytes: appended) }
        return verdict
    }
}
