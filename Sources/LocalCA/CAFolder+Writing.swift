import Foundation
import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// Writing a new CA into the folder (`create`, `importCA`): refused over anything there, and
/// serialised with every other tv writing one at the same moment.
extension CAFolder {
    /// Refuses unless the folder holds no CA. A CA half-written by another tv at this moment
    /// (root-key.pem there, root.pem not yet) is waited for under the creation lock, then said
    /// as made at the same moment, not as a doubt.
    /// - Throws: `CAError.alreadyExists` (`.alreadyExistsForImport`), `.inDoubt`, `.madeAtTheSameMoment`.
    func refuseUnlessAbsent(importing: Bool = false) throws {
        switch load(remakingLeafKey: false) {
        case .absent: return
        case .present: throw importing ? CAError.alreadyExistsForImport(directory: directory) : CAError.alreadyExists(directory: directory)
        case .doubt(let doubt):
            guard let lock = CACreationLock(directory: directory) else { throw CAError.inDoubt(doubt) }
            defer { lock.release() }
            switch load(remakingLeafKey: false) {
            case .absent: return
            case .present: throw CAError.madeAtTheSameMoment(directory: directory)
            case .doubt(let still): throw CAError.inDoubt(still)
            }
        }
    }

    /// Writes the three files exclusively under the creation lock (keys 0600, folder 0700), after
    /// checking again under it that no other tv made a CA since `refuseUnlessAbsent`: the losers
    /// of a trial's six concurrent `tv ca create` were told "Could not write …root-key.pem (File
    /// exists); check the folder's permissions and free space".
    /// - Throws: `CAError.madeAtTheSameMoment`; `FileWriteError`, `TVHomeError`.
    func write(root: Certificate, rootKey: PrivateKey, leafKey: PrivateKey) throws {
        try FileModes.makeDirectory(PathText.folder(of: directory), mode: 0o700)
        try FileModes.makeDirectory(directory, mode: 0o700)
        let lock = CACreationLock(directory: directory)
        defer { lock?.release() }
        if case .present = load(remakingLeafKey: false) { throw CAError.madeAtTheSameMoment(directory: directory) }
        do {
            try FileModes.writeAtomically(try rootKey.pkcs8PEM(), to: rootKeyPath, mode: 0o600, exclusive: true)
        } catch let error as FileWriteError where error.reason == FileWriteError.alreadyExists {
            // A tv that takes no lock (an older one) wrote it first.
            throw CAError.madeAtTheSameMoment(directory: directory)
        }
        try FileModes.writeAtomically(try leafKey.pkcs8PEM(), to: leafKeyPath, mode: 0o600, exclusive: true)
        try FileModes.writeAtomically(root.pem, to: rootPath, mode: 0o644, exclusive: true)
        _ = try ProfileIdentity.loadOrCreate(path: identityPath)
    }
}

/// An exclusive flock(2) on the CA folder itself, held while a CA is written into it: a second
/// writer waits for the first to finish, then finds its CA complete.
final class CACreationLock {
    private let fd: Int32

    /// Takes the lock on `directory`, waiting for its holder; nil when the folder cannot be opened.
    init?(directory: String) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        self.fd = fd
        while flock(fd, LOCK_EX) != 0 && errno == EINTR {}
    }

    /// Releases the lock (closing the folder's descriptor).
    func release() { close(fd) }
}
