import ControlChannel
import FlowTerms
import Foundation
import Synchronization
import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// The one session that may serve a data folder: an exclusive `flock(2)` on
/// `$TV_HOME/run/session.lock` (0600, in the 0700 run folder), taken before the session makes
/// anything in the folder or says anything, held while it runs, dropped by the kernel when the
/// process ends however it ends (`kill -9` too).
///
/// Before it, the control socket was the only claim, bound after the banner: three `tv run`
/// started at once on one folder all passed the "is one live?" check, all printed "tv is running
/// … on 127.0.0.1:PORT", and two then said "already running" and exited 1, leaving an empty
/// decrypted capture and a `writer-N.lock` each (a new-user trial). Taking a lock is atomic, so
/// exactly one of them wins; the others refuse before anything is made.
///
/// The file is removed by a clean release. A taker checks that the file it locked is still the
/// one at the path (a holder may have removed it between the other's open and flock), and tries
/// again if not, so two sessions never hold locks on two different files.
/// `tv exec` (the namespace form) takes none: any number run beside a `tv run`.
public final class SessionLock: Sendable {
    /// The lock file's path.
    public let path: String
    /// The locked descriptor; -1 once released.
    private let descriptor: Mutex<Int32>

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = Mutex(descriptor)
    }

    /// `$TV_HOME/run/session.lock`.
    public static func path(_ home: TVHome) -> String { home.runDirectory + "/session.lock" }

    /// Takes the data folder's lock, making the folder and its `run` folder when missing; then
    /// checks that no session of a tv that takes no lock answers on the control socket.
    /// - Throws: `ControlError.alreadyRunning` when another session holds it (or answers),
    ///   `ControlError.occupiedByFolder`, `TVHomeError` (the folders), `TooManyOpenFiles`,
    ///   `ControlError.sessionLock` when the lock file cannot be opened otherwise.
    public static func take(_ home: TVHome) throws -> SessionLock {
        try home.ensureExists()
        try home.ensureDirectory(home.runDirectory)
        let path = path(home)
        let control = SessionPaths.controlSocket(home)
        while true {
            let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard fd >= 0 else {
                let err = errno
                if let shortage = TooManyOpenFiles(errno: err, opening: "the session lock \(path)") { throw shortage }
                throw ControlError.sessionLock(path: path, reason: Errno(err).phrase)
            }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                close(fd)
                throw ControlError.alreadyRunning(path: control)
            }
            // Still the file at the path (not one a releasing holder has just removed)?
            var held = stat()
            var named = stat()
            if fstat(fd, &held) == 0, lstat(path, &named) == 0, held.st_dev == named.st_dev, held.st_ino == named.st_ino {
                let lock = SessionLock(path: path, descriptor: fd)
                do {
                    try ControlServer.refuseIfLive(path: control)
                } catch {
                    lock.release()
                    throw error
                }
                return lock
            }
            close(fd)
        }
    }

    /// Removes the file and drops the lock (removed first, while still held: see the type's
    /// comment). Safe to call twice.
    public func release() {
        descriptor.withLock { fd in
            guard fd >= 0 else { return }
            unlink(path)
            close(fd)
            fd = -1
        }
    }

    deinit { release() }
}
