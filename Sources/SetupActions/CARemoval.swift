import Foundation
import LocalCA
import Settings
import TVHome

/// `tv ca remove`: inspection off (saved) first, then the root key, the root certificate and the
/// leaf key are deleted. Everything else in `$TV_HOME` (history, captures, settings, the profile
/// identity) stays.
public enum CARemoval {
    /// What a removal did.
    public struct Outcome: Sendable {
        /// The root that was removed, when it could be read (for the store-removal steps).
        public let removedRoot: Certificate?
        public let inspectionOff: InspectionOffOutcome
        /// False when there was no CA to remove.
        public let removedSomething: Bool
    }

    /// Why the CA was not removed.
    public enum Failure: UserFacingError {
        case inspectionNotSaved(SettingsError)
        case notDeleted(FileWriteError)

        public var message: String {
            switch self {
            case .inspectionNotSaved(let error):
                return "The CA was not removed, because inspection must be turned off first and that could not be saved (\(error.message)) Nothing was deleted."
            case .notDeleted(let error):
                return "Inspection is off, but the CA could not be fully removed: \(error.message)"
            }
        }
    }

    /// Removes the CA of `home`; a CA in doubt is removed too (this deletes, it generates nothing).
    /// - Parameter beforeDeleting: runs after inspection is off and before any file is deleted,
    ///   with the root when it can be read (e.g. to take it out of trust stores); when it throws,
    ///   nothing is deleted and its error is rethrown, so the removal can be retried.
    /// - Throws: `Failure`, or what `beforeDeleting` throws.
    public static func remove(home: TVHome, settings: SettingsStore,
                              beforeDeleting: (Certificate?) throws -> Void = { _ in }) throws -> Outcome {
        let folder = CAFolder(home: home)
        let state = folder.load(remakingLeafKey: false)
        let inspectionOff: InspectionOffOutcome
        do { inspectionOff = try settings.turnInspectionOff() } catch let error as SettingsError {
            throw Failure.inspectionNotSaved(error)
        }
        var root: Certificate?
        switch state {
        case .absent: return Outcome(removedRoot: nil, inspectionOff: inspectionOff, removedSomething: false)
        case .present(let ca): root = ca.root
        case .doubt: root = FileManager.default.contents(atPath: folder.rootPath).flatMap { try? Certificate.fromPEM([UInt8]($0)) }
        }
        try beforeDeleting(root)
        do { try folder.remove() } catch let error as FileWriteError { throw Failure.notDeleted(error) }
        return Outcome(removedRoot: root, inspectionOff: inspectionOff, removedSomething: true)
    }
}
