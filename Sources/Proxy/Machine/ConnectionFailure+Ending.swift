#if canImport(Glibc)
import Glibc
#endif
import FlowTerms

/// Why reading or writing one leg (socket, TLS session or splice pipe) failed.
public enum LegFailure: Equatable, Sendable {
    /// A socket call failed with this errno.
    case system(Errno)
    /// The TLS layer failed (the peer's alert, the errno, OpenSSL's reason).
    indirect case tls(TLSFailure)
    /// The peer closed its TLS session (close_notify) while tv was writing.
    case tlsClosed
    /// The splice pipe closed.
    case pipeClosed
    /// There was no splice pipe to use.
    case noPipe

    /// How it failed, inside a sentence.
    var phrase: String {
        switch self {
        case .system(let err): return err.phrase
        case .tls(let failure): return failure.text
        case .tlsClosed: return "the peer closed the TLS session"
        case .pipeClosed: return "the pipe closed"
        case .noPipe: return "no pipe"
        }
    }
}

extension ConnectionFailure {
    /// Whether a flow that ended with `status` and `failure` was cut off rather than closed in
    /// order: a failed flow, or one that ended in a reset from either side (the decrypted
    /// capture then ends its stream with RST, not FIN: a trial's reset flows closed with FINs).
    public static func cutsOff(status: FlowStatus, failure: ConnectionFailure?) -> Bool {
        if status == .failed { return true }
        switch failure {
        case .read(_, let reset, _)?, .clientGone(let reset, _)?: return reset
        case .send(_, .system(let err))?: return err.code == ECONNRESET || err.code == EPIPE
        default: return false
        }
    }
}

extension ConnectionFailure {
    /// How a relay that ended with `status` and `failure` ended, for the decrypted capture: a
    /// reset from the side that sent it (a read that met it, a send that side refused; a trial's
    /// client reset was drawn as the server's), tv's own cut of a failed flow as the server's,
    /// and otherwise closed in order: first by the side whose end ended the relay when the
    /// failure names it (a TLS leg's close), else by `firstClosed` (the side whose end tv read first).
    public static func streamEnd(status: FlowStatus, failure: ConnectionFailure?, firstClosed: Direction) -> StreamEnd {
        switch failure {
        case let .read(side, true, _)?: return .reset(from: side.sending)
        case let .read(side, false, _)? where status != .failed: return .closed(firstFrom: side.sending)
        case .clientGone(true, _)?: return .reset(from: .clientToServer)
        case let .send(side, .system(err))? where err.code == ECONNRESET || err.code == EPIPE: return .reset(from: side.sending)
        default: break
        }
        return cutsOff(status: status, failure: failure) ? .reset(from: .serverToClient) : .closed(firstFrom: firstClosed)
    }
}

extension ConnectionFailure.Side {
    /// The way this side's bytes go.
    var sending: Direction { self == .client ? .clientToServer : .serverToClient }

    /// "client" or "server", inside a sentence.
    var word: String { self == .client ? "client" : "server" }
}

extension Direction {
    /// The side these bytes were read from.
    var source: ConnectionFailure.Side { self == .clientToServer ? .client : .server }
    /// The side these bytes are sent to.
    var sink: ConnectionFailure.Side { self == .clientToServer ? .server : .client }
}
