#if canImport(Glibc)
import Glibc
#endif
import FlowTerms
import Proxy

/// How tv answers a program's SYN whose upstream connect failed (connect-first: the program
/// waits in SYN-SENT while tv connects), so that its connect(2) fails with the error it would
/// have got without tv wherever a packet can carry it (pure).
///
/// A reset in SYN-SENT is always ECONNREFUSED (RFC 9293 §3.10.7.3; Linux `tcp_reset`), which
/// is right for a refusal and wrong for everything else: a trial's program saw ECONNREFUSED
/// where, without tv, the same connect failed with EHOSTUNREACH (a router's host unreachable)
/// and ENETUNREACH (no route). An ICMP destination unreachable quoting the SYN does better: a
/// socket in SYN-SENT takes any destination unreachable as fatal (Linux `tcp_v4_err` /
/// `tcp_v6_err`: `tcp_done_with_error` with the code's errno, soft or hard alike, once the
/// quoted sequence number is the SYN's) and reports the errno Linux's tables give the code
/// (`icmp_err_convert`, `icmpv6_err_convert`):
///
/// | tv's connect failed with        | ICMP (type 3) code → errno           | ICMPv6 (type 1) code → errno     |
/// |---------------------------------|--------------------------------------|----------------------------------|
/// | ENETUNREACH                     | 0 network unreachable → ENETUNREACH  | 0 no route → ENETUNREACH         |
/// | EHOSTUNREACH                    | 1 host unreachable → EHOSTUNREACH    | 3 address unreachable → EHOSTUNREACH |
/// | EHOSTDOWN                       | 7 host unknown → EHOSTDOWN           | 3 → EHOSTUNREACH                 |
/// | ENONET                          | 8 host isolated → ENONET             | 3 → EHOSTUNREACH                 |
/// | EACCES, EPERM (a firewall)      | 13 administratively prohibited → EHOSTUNREACH | 1 administratively prohibited → EACCES |
///
/// No answer at all (ETIMEDOUT: tv's kernel sent its SYN retries and heard nothing; or no answer
/// within a connect timeout of tv's) is answered with nothing, as the network answered tv: the
/// program's own SYN retries, its own timeout or its kernel's ETIMEDOUT then decide, as they
/// would without tv. A reset there made every blackholed server (SYNs dropped on the path) read
/// ECONNREFUSED after tv's 10 s, to a curl given `--connect-timeout 2` (rc 28 without tv) and to
/// a Python socket given 30 s (socket.timeout without tv): a trial. The program's retransmitted
/// SYNs are then taken in silence too (`TCPNATTable.SYNDecision.failedAgain`), never a new
/// connect; every answer is given again to a retransmission of the SYN it answered.
///
/// Everything else keeps the reset: a refusal (ECONNREFUSED) is one; tv's own failures (a
/// routing mark, no resolver, no address) have no ICMP that says them, and a reset ends the
/// program's wait at once.
public enum FailedConnectAnswer: Equatable, Sendable {
    /// `RST|ACK` answering the SYN: the program sees ECONNREFUSED.
    case reset
    /// ICMP (`isIPv6` false) or ICMPv6 destination unreachable with `code`, quoting the SYN; the
    /// program's connect fails with `programSees`.
    case unreachable(code: UInt8, programSees: Errno)
    /// Nothing: the server never answered tv, so the program is answered as the network answered
    /// it (its SYNs go unanswered until its own timeout or its kernel's ETIMEDOUT).
    case nothing

    /// The answer for a connect that failed for `why`, to a program of family `isIPv6`.
    public static func choose(_ why: ConnectionFailure.Unreachable, isIPv6: Bool) -> FailedConnectAnswer {
        if case .noAnswer = why { return .nothing }
        guard case .connect(let err) = why else { return .reset }
        switch err.code {
        case ETIMEDOUT: return .nothing
        case ENETUNREACH: return .unreachable(code: 0, programSees: Errno(ENETUNREACH))
        case EHOSTUNREACH: return isIPv6 ? .unreachable(code: 3, programSees: Errno(EHOSTUNREACH)) : .unreachable(code: 1, programSees: Errno(EHOSTUNREACH))
        case EHOSTDOWN: return isIPv6 ? .unreachable(code: 3, programSees: Errno(EHOSTUNREACH)) : .unreachable(code: 7, programSees: Errno(EHOSTDOWN))
        case ENONET: return isIPv6 ? .unreachable(code: 3, programSees: Errno(EHOSTUNREACH)) : .unreachable(code: 8, programSees: Errno(ENONET))
        case EACCES, EPERM: return isIPv6 ? .unreachable(code: 1, programSees: Errno(EACCES)) : .unreachable(code: 13, programSees: Errno(EHOSTUNREACH))
        default: return .reset
        }
    }

    /// What the flow says the program was told.
    public var clientAnswer: ConnectionFailure.ClientAnswer {
        switch self {
        case .reset: return .reset
        case .unreachable(_, let seen): return .icmpToConnect(programSaw: seen)
        case .nothing: return .nothing
        }
    }
}
