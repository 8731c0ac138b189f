import TVHome

/// Why `tv turns` or `tv export har` prints nothing from kept content, or a command that reads
/// one flow has no such flow: one sentence, exit code 1.
public enum ContentRefusal: UserFacingError, Equatable {
    /// The data folder has no flow with this id (`tv turns`: no flow row, no turns and no
    /// damaged turn rows either; `tv export har`, `tv flow`, `tv packets`, `tv packet`, `tv
    /// requests --flow`: no flow row).
    case noFlow(Int64)
    /// The flow has no turn `turn`; `last` is the number of its last kept turn, nil when none is kept.
    case noTurn(flow: Int64, turn: Int, last: Int?)
    /// `--raw` asked to write turn `turn` to a terminal, and the turn is binary or holds control characters.
    case unsafeForTerminal(turn: Int)
    /// None of the flows given to `tv export har` holds kept HTTP or exchange rows, so no file was written.
    case noHTTP
    /// `tv request ID`: the data folder has no exchange with this id; `highest`: the largest id
    /// given out so far, when known.
    case noRequest(Int64, highest: Int64? = nil)
    /// A command that takes flow ids (`tv export har`) was given `id`, which names no flow but
    /// is the id of a request (`tv requests`) of flow `flow`.
    case requestIDNotFlow(Int64, flow: Int64)

    public var message: String {
        switch self {
        case let .noFlow(id):
            return "There is no flow \(id) in this data folder; `tv flows` lists the ones there are."
        case let .noTurn(flow, turn, last):
            let known = last.map { "its turns are 1 to \($0)" } ?? "no turns are kept for it"
            return "Flow \(flow) has no turn \(turn); \(known)."
        case let .unsafeForTerminal(turn):
            return "Turn \(turn) is binary or holds control characters, and standard output is a terminal; write it with -o FILE or redirect it."
        case .noHTTP:
            return "None of these flows holds kept HTTP or exchange rows, so nothing was written."
        case let .requestIDNotFlow(id, flow):
            return "There is no flow \(id) in this data folder; \(id) is the id of a request of flow \(flow) (`tv requests` ids are not flow ids), so name flow \(flow) or pick requests with --filter."
        case let .noRequest(id, highest?) where id < highest:
            // A gap among ids given out is no lost request: each later state of a row written
            // open (a streaming response's) used an id up until the writer changed rows in place
            // (a trial read 33, 35 and took "There is no request 34" for data loss); retention
            // takes old requests with their flows.
            return "There is no request \(id) in this data folder, and that is no sign of a lost one: not every id up to the largest "
                + "(\(highest)) names a request (tv before this version skipped one after each request whose row changed as it streamed, "
                + "and old requests go with their flows); `tv requests` lists the ones there are."
        case let .noRequest(id, _):
            return "There is no request \(id) in this data folder; `tv requests` lists the ones there are."
        }
    }
}
