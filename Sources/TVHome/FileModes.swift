import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// File-system helpers that set the mode at creation, never after: a key file is 0600 from its
/// first byte, and a replaced file is swapped in whole (write a temporary, fsync, rename(2)).
public enum FileModes {
    /// Creates `path` and missing parents; an existing folder of ours is (re)set to `mode`: one
    /// that is a real folder (not a symbolic link to one) owned by this user. A link's target is
    /// the user's choice and keeps its mode (a trial's `captures` linked to a bigger disk's 0755
    /// folder became 0700, and a link to /tmp took /tmp's 1777 to 0700 for the whole machine).
    /// - Throws: `TVHomeError.fileWhereFolderGoes` when a file stands at `path`, `.cannotCreate`
    ///   when it cannot be made.
    public static func makeDirectory(_ path: String, mode: mode_t) throws {
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDir) {
            guard isDir.boolValue else {
                throw TVHomeError.fileWhereFolderGoes(path: path)
            }
            // A folder that has the mode already needs no chmod: on a read-only file system the
            // chmod fails (EROFS), and "could not create" an existing folder read wrong (a
            // new-user trial); what cannot be written there is said by what writes.
            var info = stat()
            guard lstat(path, &info) == 0 else {
                throw TVHomeError.cannotSetMode(path: path, mode: mode, reason: String(cString: strerror(errno)))
            }
            guard info.st_mode & S_IFMT == S_IFDIR, info.st_uid == geteuid() else { return }
            let current = info.st_mode & 0o7777
            if current == mode { return }
            // Bits are only taken away, never given: a folder its owner made read-only stays so,
            // and is said (a trial's 0500 data folder became 0700 and was written by `tv run`).
            if mode & 0o200 != 0 && current & 0o200 == 0 { throw TVHomeError.readOnlyFolder(path: path, mode: current) }
            guard let tightened = tightened(current, to: mode) else { return }
            if chmod(path, tightened) != 0 {
                throw TVHomeError.cannotSetMode(path: path, mode: mode, reason: String(cString: strerror(errno)))
            }
            return
        }
        if let reason = makeDirectories(path, mode: mode) {
            throw TVHomeError.cannotCreate(path: path, reason: reason)
        }
        _ = chmod(path, mode)
    }

    /// The mode of a folder of ours whose mode is `current` once tightened to `mode`: the bits
    /// `mode` lacks taken away, none given (0755 → 0700, 0555 → 0500); nil when none are to be
    /// taken away (0700, 0500). The data folder (`makeDirectory`) and its `ca/`
    /// (`tightenFolder`, from `CAFolder.load`) follow it.
    public static func tightened(_ current: mode_t, to mode: mode_t) -> mode_t? {
        let kept = current & mode
        return kept == current ? nil : kept
    }

    /// Tightens the folder `path` to `mode` (`tightened`) when it is a real folder (not a
    /// symbolic link) of this user's; another user's folder, or one that is not there, is left
    /// to the checks that say so (`TVHome.checkTrust`). A chmod that fails (a read-only file
    /// system) leaves the mode as it was.
    /// - Returns: the mode given, nil when nothing was changed.
    @discardableResult
    public static func tightenFolder(_ path: String, to mode: mode_t) -> mode_t? {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == geteuid(),
              let tightened = tightened(info.st_mode & 0o7777, to: mode), chmod(path, tightened) == 0 else { return nil }
        return tightened
    }

    /// mkdir(2) of `path` and of its missing parents, each with `mode`; nil when made, else the
    /// system's reason in words (Foundation's said "The operation could not be completed. The
    /// file doesn't exist." of a folder under /proc: a trial). ENOENT in a parent that exists is a
    /// file system that takes no new entries (/proc, /sys).
    private static func makeDirectories(_ path: String, mode: mode_t) -> String? {
        if mkdir(path, mode) == 0 { return nil }
        let code = errno
        if code == EEXIST { return nil }
        let parent = PathText.folder(of: path)
        if code == ENOENT, !parent.isEmpty, parent != path {
            var info = stat()
            if stat(parent, &info) == 0 {
                return info.st_mode & S_IFMT == S_IFDIR ? FileWriteError.noNewFiles : "\(parent) is not a folder"
            }
            if let reason = makeDirectories(parent, mode: mode) { return reason }
            if mkdir(path, mode) == 0 || errno == EEXIST { return nil }
            return String(cString: strerror(errno))
        }
        return String(cString: strerror(code))
    }

    /// Writes `data` to `path` atomically with `mode` (e.g. 0o600), through a temporary file in the
    /// same folder that is fsynced and renamed over the target.
    /// - Parameter exclusive: when true, refuses (EEXIST) if `path` already exists.
    /// - Throws: `FileWriteError` naming the path and the system's reason.
    public static func writeAtomically(_ data: [UInt8], to path: String, mode: mode_t, exclusive: Bool = false) throws {
        try writeAtomically(to: path, mode: mode, exclusive: exclusive) { write in write(data) }
    }

    /// Writes what `produce` hands to its `write` function to `path` atomically with `mode`, as
    /// `writeAtomically(_:to:mode:exclusive:)` does, without gathering it first: bytes go to the
    /// temporary file as they come (buffered up to 64 KiB), so a large file needs little memory.
    /// - Throws: `FileWriteError` naming the path and the system's reason; whatever `produce`
    ///   throws (the temporary file is removed either way).
    public static func writeAtomically(to path: String, mode: mode_t, exclusive: Bool = false,
                                       _ produce: (_ write: ([UInt8]) -> Void) throws -> Void) throws {
        if exclusive && FileManager.default.fileExists(atPath: path) {
            throw FileWriteError(path: path, reason: FileWriteError.alreadyExists)
        }
        // A path ending in "/" names a folder: one that is not there is said as that (a trial's
        // `-o newdir/` read "the folder . takes no new files").
        if path.count > 1, path.hasSuffix("/"), !FileManager.default.fileExists(atPath: path) {
            throw FileWriteError(path: path, reason: FileWriteError.namedFolderMissing)
        }
        // rename(2) would replace a link, a device or a pipe with a regular file (as root, even
        // /dev/stdout or /dev/null): only a regular file, or nothing, is ever replaced.
        var existing = stat()
        if lstat(path, &existing) == 0, existing.st_mode & S_IFMT != S_IFREG {
            throw FileWriteError(path: path, reason: FileWriteError.notRegular)
        }
        let tmp = temporaryPath(for: path, nonce: "\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        let fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else {
            let code = errno
            // ENOENT in a folder that is there: one that takes no new files (/proc, /sys).
            var folder = stat()
            let parent = PathText.folder(of: path)
            if code == ENOENT, stat(parent.isEmpty ? "." : parent, &folder) == 0, folder.st_mode & S_IFMT == S_IFDIR {
                throw FileWriteError(path: path, reason: FileWriteError.noNewFiles)
            }
            throw FileWriteError(path: path, reason: FileWriteError.reason(errno: code))
        }
        var ok = true
        var reason = ""
        var buffer: [UInt8] = []
        func flush() {
            guard ok else { return }
            buffer.withUnsafeBytes { raw in
                var off = 0
                while off < raw.count {
                    let n = write(fd, raw.baseAddress! + off, raw.count - off)
                    if n < 0 {
                        if errno == EINTR { continue }
                        ok = false; reason = String(cString: strerror(errno)); return
                    }
                    off += n
                }
            }
            buffer.removeAll(keepingCapacity: true)
        }
        do {
            try produce { bytes in
                buffer += bytes
                if buffer.count >= 65_536 { flush() }
            }
        } catch {
            close(fd)
            unlink(tmp)
            throw error
        }
        flush()
        if ok && fchmod(fd, mode) != 0 { ok = false; reason = String(cString: strerror(errno)) }
        if ok && fsync(fd) != 0 { ok = false; reason = String(cString: strerror(errno)) }
        close(fd)
        if ok {
            if exclusive {
                // link(2) fails with EEXIST instead of replacing, so a racing writer never loses.
                if link(tmp, path) != 0 {
                    ok = false
                    reason = errno == EEXIST ? FileWriteError.alreadyExists : String(cString: strerror(errno))
                }
                unlink(tmp)
            } else if rename(tmp, path) != 0 {
                ok = false; reason = String(cString: strerror(errno))
            }
        }
        if !ok {
            unlink(tmp)
            throw FileWriteError(path: path, reason: reason)
        }
    }

    /// Where `writeAtomically` writes before renaming: a hidden file beside `path`
    /// ("/a/b.pem" → "/a/.b.pem.tmp-NONCE"). A bare file name ("root.pem") is in the current
    /// folder, so its temporary file is too ("./.root.pem.tmp-NONCE"), not in "/" (where only
    /// root may write; rename(2) also needs both on one file system).
    public static func temporaryPath(for path: String, nonce: String) -> String {
        // Split at the last "/" in Swift: NSString's path methods trap on a one-character name.
        guard let slash = path.lastIndex(of: "/") else { return "./." + path + ".tmp-" + nonce }
        let parent = path[..<slash]
        let name = path[path.index(after: slash)...]
        return (parent.isEmpty ? "" : String(parent)) + "/." + name + ".tmp-" + nonce
    }

    /// Makes the regular files directly in `folder` that group or others may read or write
    /// owner-only (their group and other bits taken away, nothing given); symbolic links and
    /// other users' files are left alone. For the folders holding what was recorded (captures,
    /// decrypted content), whose files a user's `chmod` would otherwise leave open.
    public static func tightenFiles(in folder: String) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
            let file = folder + "/" + name
            var info = stat()
            guard lstat(file, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_mode & 0o077 != 0,
                  info.st_uid == geteuid() else { continue }
            _ = chmod(file, info.st_mode & 0o700)
        }
    }

    /// The permission bits of `path` (e.g. 0o600), or nil when it cannot be stat'ed.
    public static func permissions(of path: String) -> mode_t? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return st.st_mode & 0o7777
    }
}

/// A file could not be written.
public struct FileWriteError: UserFacingError, Equatable {
    public let path: String
    public let reason: String
    public init(path: String, reason: String) { self.path = path; self.reason = reason }
    public var message: String {
        if reason == FileWriteError.noFolder {
            let parent = PathText.folder(of: path)
            let folder = parent.isEmpty ? "." : parent
            return "Could not write \(path): the folder \(folder) does not exist; create it or write somewhere else."
        }
        if reason == FileWriteError.namedFolderMissing {
            let folder = String(path.reversed().drop { $0 == "/" }.reversed())
            return "Could not write \(path): the folder \(folder) does not exist; create it or write somewhere else."
        }
        if reason == FileWriteError.noNewFiles {
            let parent = PathText.folder(of: path)
            return "Could not write \(path): the folder \(parent.isEmpty ? "." : parent) takes no new files (a kernel's folder such as /proc or /sys); write somewhere else."
        }
        if reason == FileWriteError.notRegular {
            return "Did not write \(path): it is a link, a device, a pipe or a folder, which tv does not replace; give the path of a file to create or replace."
        }
        return "Could not write \(path) (\(reason)); check the folder's permissions and free space, then try again."
    }

    /// The reason when an exclusive write found the file there (before it began, or made by
    /// another process while it wrote: link(2)'s EEXIST).
    public static let alreadyExists = "the file already exists"

    /// The reason when the target exists and is not a regular file.
    public static let notRegular = "not a regular file"

    /// The reason when open(2) said ENOENT: the folder the file goes in is missing.
    public static let noFolder = "no such folder"

    /// The reason when the path ends in "/" and names a folder that is not there.
    public static let namedFolderMissing = "no such folder (the path names a folder)"

    /// The reason when open(2) said ENOENT in a folder that is there (/proc, /sys).
    public static let noNewFiles = "the folder takes no new files"

    /// The reason for an errno from opening `path` for writing (ENOENT: `noFolder`).
    public static func reason(errno code: Int32) -> String {
        code == ENOENT ? noFolder : String(cString: strerror(code))
    }
}
