import CTVShims
import Foundation
import LocalCA
import Settings
import TrustStore
import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// `tv ca remake`: a new root and keys, made beside the old CA and swapped in whole.
///
/// Order (seed 002): inspection is turned off and saved first; if that save fails nothing else
/// happens and the CA is byte-for-byte as it was. The new CA is written into a fresh sibling
/// folder (with a copy of the profile identity, so the `.mobileconfig` replaces the old one on
/// devices), then exchanged with `ca/` in one `renameat2(RENAME_EXCHANGE)`; only then are the old
/// files deleted. Files in `ca/` that are not the CA's own move to the new folder untouched.
public enum CARemake {
    /// What a remake did.
    public struct Outcome: Sendable {
        /// The root that was replaced (to find and remove it in stores).
        public let oldRoot: Certificate
        /// The CA now in `ca/`.
        public let newCA: CertificateAuthority
        /// What turning inspection off did (it happened before the CA was touched).
        public let inspectionOff: InspectionOffOutcome
        /// Sentences about clean-up that did not fully succeed (the new CA is in place regardless).
        public let warnings: [String]
        /// The stores tv had put the old root in, where it is still trusted: kept
        /// (`ReplacedRoots`) for the next `tv ca trust --apply` or `tv ca remove --apply`.
        public var oldRootStores: [TrustStoreSpec] = []
    }

    /// Why a remake did not happen or did not finish.
    public enum Failure: UserFacingError {
        /// Inspection could not be turned off, so the CA was not touched.
        case inspectionNotSaved(SettingsError)
        /// The new CA could not be made or swapped in; the old one is unchanged and still in use.
        case notSwapped(reason: String)

        public var message: String {
            switch self {
            case .inspectionNotSaved(let error):
                return "The CA was not remade, because inspection must be turned off first and that could not be saved (\(error.message)) The CA is exactly as it was."
            case .notSwapped(let reason):
                return "The CA was not remade (\(reason)); the current CA is unchanged and still in use — check that the data folder is writable, then try again."
            }
        }
    }

    /// Remakes the CA in `home`.
    /// - Parameters:
    ///   - rootKeyType / leafKeyType: key types of the new root and leaf key.
    ///   - now: seconds since 1970-01-01 UTC.
    /// - Throws: `CAError.absent` / `.inDoubt` (nothing to remake, or nothing generates over
    ///   doubt), `Failure`.
    public static func remake(home: TVHome, settings: SettingsStore, rootKeyType: KeyType = .ecdsaP256,
                              leafKeyType: KeyType = .ecdsaP256, now: Int64) throws -> Outcome {
        let folder = CAFolder(home: home)
        let old: CertificateAuthority
        // Its leaf key is replaced with the rest: none is made for it first.
        switch folder.load(remakingLeafKey: false) {
        case .present(let ca): old = ca
        case .absent: throw CAError.absent(directory: folder.directory)
        case .doubt(let doubt): throw CAError.inDoubt(doubt)
        }

        let inspectionOff: InspectionOffOutcome
        do { inspectionOff = try settings.turnInspectionOff() } catch let error as SettingsError {
            throw Failure.inspectionNotSaved(error)
        }

        let staging = home.path + "/.ca-new-\(UInt32.random(in: 0...UInt32.max))"
        let newCA: CertificateAuthority
        do {
            guard mkdir(staging, 0o700) == 0 else { throw Failure.notSwapped(reason: "\(staging) could not be made: \(String(cString: strerror(errno)))") }
            let stagingFolder = CAFolder(directory: staging)
            if FileManager.default.fileExists(atPath: folder.identityPath) {
                // The identity must survive, or installed profiles would stack instead of being replaced.
                guard let identity = FileManager.default.contents(atPath: folder.identityPath) else {
                    throw Failure.notSwapped(reason: "the profile identity \(folder.identityPath) cannot be read")
                }
                try FileModes.writeAtomically([UInt8](identity), to: stagingFolder.identityPath, mode: 0o644)
            }
            newCA = try stagingFolder.create(rootKeyType: rootKeyType, leafKeyType: leafKeyType, now: now)
            try exchange(folder.directory, staging)
        } catch {
            removeTree(staging)
            if let failure = error as? Failure { throw failure }
            throw Failure.notSwapped(reason: (error as? UserFacingError)?.message ?? "\(error)")
        }

        // `staging` now holds the old CA. Move anything that is not the CA's own back, then delete it.
        var warnings: [String] = []
        let own: Set<String> = ["root.pem", "root-key.pem", "leaf-key.pem", "profile-identity.json"]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: staging)) ?? [] where !own.contains(name) {
            if rename(staging + "/" + name, folder.directory + "/" + name) != 0 {
                warnings.append("\(staging)/\(name) could not be moved into the new CA folder (\(String(cString: strerror(errno)))); move it by hand.")
            }
        }
        let oldFolder = CAFolder(directory: staging)
        do {
            try oldFolder.remove()
            unlink(oldFolder.identityPath)
            if rmdir(staging) != 0 && errno != ENOENT {
                warnings.append("The old CA folder \(staging) could not be removed (\(String(cString: strerror(errno)))); delete it by hand.")
            }
        } catch {
            warnings.append("The old root key could not be deleted from \(staging) (\((error as? UserFacingError)?.message ?? "\(error)")); delete that folder by hand.")
        }
        var outcome = Outcome(oldRoot: old.root, newCA: newCA, inspectionOff: inspectionOff, warnings: warnings)
        do { outcome.oldRootStores = try ReplacedRoots.keep(old.root, home: home) } catch {
            outcome = Outcome(oldRoot: old.root, newCA: newCA, inspectionOff: inspectionOff,
                              warnings: warnings + ["The old root could not be kept for taking it out of the stores tv put it in (\((error as? UserFacingError)?.message ?? "\(error)")); remove it by hand (`tv ca remove --help` lists how per store)."])
        }
        return outcome
    }

    /// Swaps two folders atomically; where the file system cannot, renames with a way back.
    static func exchange(_ current: String, _ replacement: String) throws {
        if tv_rename_exchange(current, replacement) == 0 { return }
        guard errno == EINVAL || errno == ENOSYS else {
            throw Failure.notSwapped(reason: "the folders could not be exchanged: \(String(cString: strerror(errno)))")
        }
        let aside = replacement + ".old"
        guard rename(current, aside) == 0 else {
            throw Failure.notSwapped(reason: "\(current) could not be moved aside: \(String(cString: strerror(errno)))")
        }
        guard rename(replacement, current) == 0 else {
            let reason = String(cString: strerror(errno))
            _ = rename(aside, current)
            throw Failure.notSwapped(reason: "the new CA could not be moved into place: \(reason)")
        }
        guard rename(aside, replacement) == 0 else {
            throw Failure.notSwapped(reason: "the old CA is at \(aside); the new one is in place")
        }
    }

    private static func removeTree(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }
}
