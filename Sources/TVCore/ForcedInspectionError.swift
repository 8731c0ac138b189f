import LocalCA
import TVHome

/// Why `--inspect` (inspection asked for explicitly, for one session) cannot happen. An
/// inspection that was asked for and cannot be done is an error: the session does not start,
/// rather than run uninspected (and silently under `--quiet`).
public enum ForcedInspectionError: UserFacingError, Equatable {
    /// The data folder has no CA (`directory`: its `ca/` folder).
    case noCA(directory: String)
    /// The data folder's CA is in doubt (`CAFolder.load`).
    case caInDoubt(CADoubt)

    public var message: String {
        switch self {
        case .noCA(let directory):
            return "--inspect asks to inspect this session, but there is no CA in \(directory) to inspect with; make one with `tv setup` (or `tv ca create`), or run without --inspect."
        case .caInDoubt(let doubt):
            return "--inspect asks to inspect this session, but the CA is in doubt (\(doubt.path) \(doubt.problem)); repair or restore that file (`tv ca status` says more), or run without --inspect."
        }
    }
}
