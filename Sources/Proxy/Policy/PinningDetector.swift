import FlowTerms

/// What a client's refusal of tv's leaf says, in the three kinds the flow and the counters name
/// (`ProxyCounters.clientLacksRoot`, `.possiblePinning`, `.clientLeft`).
public enum ClientLegOutcome: String, Sendable, Hashable, CaseIterable {
    /// The client does not trust tv's root: an alert unknown_ca (48), bad_certificate (42) or
    /// certificate_unknown (46) during tv's handshake with it.
    case lacksRoot
    /// Possible pinning: the handshake completed (or tv's certificate reached the client) and it
    /// closed before sending anything; it counts when repeated (`PinningEvidenceRule`).
    case possiblePinning
    /// The client left without a handshake: it closed or reset before tv's certificate reached
    /// it (a probe, a port scan, a client that gave up). Never taken for pinning.
    case clientLeft
}

/// Classifies how a client leg ended: a pure function from what was seen (the alert received,
/// whether the handshake completed, whether tv's certificate went out, the bytes the client sent
/// after it, how long it stayed) to a `Verdict`. Repeats are weighed apart, by
/// `PinningEvidenceRule`.
///
/// An alert is the client's own word (RFC 8446 §6.2): unknown_ca, bad_certificate and
/// certificate_unknown say it does not trust the issuer, i.e. it lacks tv's root (a client that
/// checks a pin with a custom trust manager, e.g. Java, says the same and is treated the same: it
/// is passed through next time). A close without an alert after tv's certificate reached the
/// client, or a close right after the handshake without one byte of application data, is what a
/// client checking a pin does (curl --pinnedpubkey, OkHttp), but also a probe (`openssl s_client
/// </dev/null`): possible pinning, weighed by repeats. A close before tv's certificate reached the
/// client is a client that left.
public struct PinningDetector: Sendable {
    /// How soon after the handshake a silent close still counts as possible pinning (default
    /// 500 ms): long enough for a pin check, shorter than a browser's unused pre-connection.
    /// Measured through tv on 127.0.0.1 (tcpdump on the proxy port, Debian's curl, Python 3.11,
    /// Chromium 156): curl --pinnedpubkey sent its close_notify 0.3 ms after its Finished, Python
    /// checking a pinned hash reset 20 ms after its own; Chromium left a connection it had opened
    /// ahead idle and closed it 1.4 s after (on quitting a second after the page loaded; left
    /// longer, its idle sockets go after 10 s). The window was 2 s, so that spare read "possible
    /// pinning". 500 ms is 25 times the slowest pin check measured and a third of that idle
    /// close. A close after the window is no evidence (`fine`). Chromium also closes a spare 0.3
    /// ms after its handshake, as fast as a pin check, when another connection won the race:
    /// that one is told apart by the other connection (`PinningEvidenceRule.Weight`), not by time.
    public var quietCloseWindowMicros: Int64

    public init(quietCloseWindowMicros: Int64 = 500_000) {
        self.quietCloseWindowMicros = quietCloseWindowMicros
    }

    /// The alerts that say the client does not trust tv's root.
    public static let lacksRootAlerts: Set<UInt8> = [TLSAlert.badCertificate, TLSAlert.certificateUnknown, TLSAlert.unknownCA]

    /// How the client leg ended.
    public enum Ending: Sendable, Hashable {
        /// The client sent a fatal alert (its description code) during the handshake.
        case alert(UInt8)
        /// The client closed or reset the connection during the handshake; `certificateSent`:
        /// tv's certificate had gone out (and the client was still there to read it).
        case closedDuringHandshake(certificateSent: Bool)
        /// The handshake finished; the client closed after `elapsedMicros` having sent
        /// `applicationBytes` bytes of application data.
        case closedAfterHandshake(applicationBytes: UInt64, elapsedMicros: Int64)
        /// Any other failure of the TLS layer (its reason).
        case otherError(String)
    }

    /// What possible pinning looked like.
    public enum PinningSign: Sendable, Hashable {
        /// The client closed without an alert after tv's certificate reached it, before the
        /// handshake finished.
        case closedAfterCertificate
        /// The handshake finished and the client closed within the quiet-close window without
        /// sending application data.
        case quietCloseAfterHandshake
    }

    public enum Verdict: Sendable, Hashable {
        /// The client does not trust tv's root (its alert).
        case lacksRoot(alert: UInt8)
        /// Possible pinning; counts only when repeated (`PinningEvidenceRule`).
        case possiblePinning(PinningSign)
        /// The client left before tv's certificate reached it.
        case clientLeft
        /// The client aborted the handshake with another alert (not about trust).
        case aborted(alert: UInt8)
        /// The TLS layer failed otherwise (its reason).
        case failed(String)
        /// Nothing went wrong: the client sent data, or stayed longer than a pin check takes.
        case fine

        /// Which of the three kinds this is; nil for the others.
        public var outcome: ClientLegOutcome? {
            switch self {
            case .lacksRoot: return .lacksRoot
            case .possiblePinning: return .possiblePinning
            case .clientLeft: return .clientLeft
            case .aborted, .failed, .fine: return nil
            }
        }
    }

    public func judge(_ ending: Ending) -> Verdict {
        switch ending {
        case .alert(let code):
            return Self.lacksRootAlerts.contains(code) ? .lacksRoot(alert: code) : .aborted(alert: code)
        case .closedDuringHandshake(let certificateSent):
            return certificateSent ? .possiblePinning(.closedAfterCertificate) : .clientLeft
        case let .closedAfterHandshake(bytes, elapsed):
            return bytes == 0 && elapsed <= quietCloseWindowMicros ? .possiblePinning(.quietCloseAfterHandshake) : .fine
        case .otherError(let text):
            return .failed(text)
        }
    }
}
