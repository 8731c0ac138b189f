import LocalCA
import TVHome

/// The `tv run` / `tv exec` options that ask for inspection for one session.
public enum ForcedSessionOption: String, Sendable, Equatable {
    /// `--inspect`: inspect whatever the trust store says.
    case inspect = "--inspect"
    /// `--keep-content`: keep decrypted content, which needs inspection.
    case keepContent = "--keep-content"

    /// What the option asks for, as a clause: "asks to inspect this session".
    var asks: String {
        switch self {
        case .inspect: return "asks to inspect this session"
        case .keepContent: return "asks to keep this session's decrypted content"
        }
    }

    /// The option asking for inspection among `options` (`--inspect` first), or nil.
    public static func asked(by options: Session.Options) -> ForcedSessionOption? {
        guard options.caFile == nil else { return nil }
        if options.forceInspection { return .inspect }
        if options.forceContentKeep { return .keepContent }
        return nil
    }
}

/// Why `--inspect` or `--keep-content` (inspection asked for explicitly, for one session) cannot
/// happen. An inspection that was asked for and cannot be done is an error: the session does not
/// start, rather than run uninspected (and silently under `--quiet`).
public enum ForcedInspectionError: UserFacingError, Equatable {
    /// The data folder has no CA (`directory`: its `ca/` folder).
    case noCA(ForcedSessionOption, directory: String)
    /// The data folder's CA is in doubt (`CAFolder.load`).
    case caInDoubt(ForcedSessionOption, CADoubt)
    /// The data folder's CA cannot sign now (expired, or not valid yet).
    case caCannotSign(ForcedSessionOption, CARootProblem)

    public var message: String {
        switch self {
        case let .noCA(option, directory):
            // --keep-content keeps only what is inspected: its way out names --inspect too (a
            // trial's `--keep-content --yes` made a root key and kept nothing).
            let run = option == .keepContent ? "`tv run --inspect --keep-content --yes` makes one as it starts and inspects with it"
                                             : "`tv run --inspect --yes` makes one as it starts"
            return "\(option.rawValue) \(option.asks), but there is no CA in \(directory) to inspect with; make one with `tv setup` or `tv ca create` (\(run)), or run without \(option.rawValue)."
        case let .caInDoubt(option, doubt):
            return "\(option.rawValue) \(option.asks), but the CA is in doubt (\(doubt.path) \(doubt.problem)); repair or restore that file (`tv ca status` says more), or run without \(option.rawValue)."
        case let .caCannotSign(option, problem):
            return "\(option.rawValue) \(option.asks), but the CA cannot sign: \(problem.clause); \(problem.remedy), or run without \(option.rawValue)."
        }
    }
}
