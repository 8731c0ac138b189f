/// Whether a datagram on a DNS association answers the query the program asked with its ID
/// (pure). A stub resolver accepts a response only when its ID and question (name, type and
/// class; names compared without regard to case, RFC 4343 §3) are the query's, and its ports the
/// association's (RFC 5452 §9.1; glibc's `res_queriesmatch`). tv goes by the same rule: only an
/// answer to the question closes the query's flow and teaches tv names, so a datagram the
/// program drops (a spoof, a late or misdirected answer) names nothing (a trial: an answer with
/// another question, which dig discarded, named a connection "other.example").
public enum DNSAnswerMatch: Equatable, Sendable {
    /// A response to the question asked (the message read).
    case answers(DNSMessage)
    /// A readable message that answers some other question, or is no response (QR 0): the
    /// program's resolver drops it and waits on.
    case doesNotAnswer
    /// Bytes that are not a DNS message (`DNSMessageParser.Failure`'s reason).
    case unreadable(String)
    /// The query itself could not be read, so nothing can be checked: it ends the query's flow
    /// and names nothing.
    case unchecked

    /// - Parameter asked: the query's first question (nil: the query could not be read).
    public static func judge(_ parsed: Result<DNSMessage, DNSMessageParser.Failure>, asked: DNSQuestion?) -> DNSAnswerMatch {
        switch parsed {
        case .failure(let failure):
            return .unreadable(failure.reason)
        case .success(let message):
            guard let asked else { return .unchecked }
            guard message.isResponse, message.opcode == 0, let question = message.questions.first, message.questions.count == 1,
                  question == asked else { return .doesNotAnswer }
            return .answers(message)
        }
    }
}

/// How a DNS query's flow ends when no answer to it came.
enum DNSQueryEnd {
    /// "no answer within 5 s" and, when datagrams with its ID answered another question, that too.
    static func unanswered(seconds: Int, otherAnswers: Int) -> String {
        guard otherAnswers > 0 else { return "no answer within \(seconds) s" }
        let some = otherAnswers == 1 ? "1 datagram" : "\(otherAnswers) datagrams"
        return "no answer within \(seconds) s; \(some) with its ID answered another question (a spoofed or misdirected answer, which the program's resolver drops)"
    }
}
