import FlowTerms
import HTTPReading
import TVHome

/// Why `tv request ID` (its `--json` `absence`, its `--curl` note) has no kept request and
/// response for an exchange row: decided once from what is kept of its flow (`of`), each case's
/// sentence rendered here. A row whose bytes were deleted is said as deleted, and turns kept but
/// unreadable as that, where every one of them read "content keeping was off" or "the budget ran
/// out" (a trial, after `tv content delete` while connections stayed open).
public enum RequestContentAbsence: Sendable, Equatable {
    /// No turn of the flow is kept.
    case noneKept
    /// The kept turns are not HTTP (the reader's reason).
    case notHTTP(String)
    /// The start of what was kept was deleted and the rest cannot be read from the middle;
    /// the row was made after it (`http2`: HTTP/2, whose header compression state went too).
    case startDeleted(DeletedStart, http2: Bool)
    /// Made before what is kept of its flow begins: its bytes went with the deleted start.
    case madeBeforeDeletedStart(DeletedStart)
    /// Made before anything of its flow was kept: keeping was switched on while it was open.
    case madeBeforeKeeping
    /// Reading the kept turns as HTTP stopped before it.
    case readingStopped(HTTPConversation.ReadingProblem)
    /// After what is kept: its recording budget ran out, or keeping was switched off.
    case pastKept

    /// Why `row` has no recorded exchange, given what its flow's kept turns read as (`read`,
    /// nil when none is kept), when the first of them started (`keptFrom`, µs since the flow's
    /// first byte) and the flow's start (µs since the epoch). Pure.
    public static func of(_ row: ExchangeRecord, read: HTTPReadResult?, keptFrom: Int64?, flowStart: Int64) -> RequestContentAbsence {
        switch read {
        case nil:
            return .noneKept
        case let .notHTTP(reason)?:
            return .notHTTP(reason)
        case let .startDeleted(deleted, http2)?:
            return deleted.precedes(row, flowStart: flowStart) ? .madeBeforeDeletedStart(deleted) : .startDeleted(deleted, http2: http2)
        case let .conversation(conversation)?:
            if let deleted = conversation.deletedStart, deleted.precedes(row, flowStart: flowStart) { return .madeBeforeDeletedStart(deleted) }
            if conversation.deletedStart == nil, let keptFrom, row.requestTime < flowStart + keptFrom {
                return .madeBeforeKeeping
            }
            return conversation.problems.first.map(RequestContentAbsence.readingStopped) ?? .pastKept
        }
    }

    /// The sentence `tv request` prints (and `--json` gives as `absence`) for a row of flow `flowID`.
    public func sentence(flowID: Int64) -> String {
        let plain = " `tv turns \(flowID)` shows every byte that was kept."
        let notIn = "This request is not in the content kept of its connection (the facts above are its row's): "
        switch self {
        case .noneKept:
            return RequestDetailPresentation.noneKept + " " + RequestDetailPresentation.keptWithoutContent
        case let .notHTTP(reason):
            return "No headers or bodies can be shown for this request: its connection's kept turns are not read as HTTP — "
                + TerminalText.line(reason) + plain
        case let .startDeleted(deleted, http2):
            let reason = deleted.unreadable(http2: http2)
            return "No headers or bodies can be shown for this request, though its bytes are kept: " + reason.prefix(1).lowercased()
                + reason.dropFirst() + plain
        case let .madeBeforeDeletedStart(deleted):
            return notIn + "it was made before what is kept begins — \(deleted.clause)." + plain
        case .madeBeforeKeeping:
            return notIn + "it was made before keeping content began on it (content keeping was switched on while the connection was open)." + plain
        case let .readingStopped(problem):
            let side = problem.direction == .serverToClient ? "from the server" : "from the client"
            return notIn + "reading the connection's kept turns as HTTP stopped before it, at turn \(problem.turn) \(side): "
                + TerminalText.line(problem.reason) + plain
        case .pastKept:
            return notIn + "it came after what is kept: the flow's recording budget ran out before it, or content keeping was switched off." + plain
        }
    }

    /// The same, short, inside `--curl`'s note after "this request is not in the content kept of
    /// its connection"; nil for `noneKept` (its note says content was not kept).
    public var curlReason: String? {
        switch self {
        case .noneKept: return nil
        case .notHTTP: return "its kept turns are not read as HTTP"
        case let .startDeleted(_, http2):
            return http2 ? "the start of what was kept was deleted, so its HTTP/2 cannot be read from the middle"
                : "the start of what was kept was deleted, so the rest cannot be read as HTTP"
        case .madeBeforeDeletedStart: return "it was made before what is kept begins: that part was deleted"
        case .madeBeforeKeeping: return "it was made before keeping content began on it"
        case .readingStopped: return "reading its kept turns as HTTP stopped before it"
        case .pastKept: return "its recording budget ran out first, or content keeping was switched off"
        }
    }
}
