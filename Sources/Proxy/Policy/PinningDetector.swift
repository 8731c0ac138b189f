import FlowTerms

/// Decides whether a client leg that ended badly means the client refused our certificate.
///
/// Evidence, in the order we trust it (mitmproxy `layers/tls.py` classifies the same way):
/// - definite: a fatal alert naming the certificate: bad_certificate (42),
///   unsupported_certificate (43), certificate_unknown (46), unknown_ca (48) (RFC 8446 §6.2);
/// - suspicion: a close (FIN or reset) after our certificate was sent and before the handshake
///   finished; a handshake that finished, then a close within `quietCloseWindow` without one
///   byte of application data (a client checking a pin after the handshake, curl
///   --pinnedpubkey). Clients also close like this for other reasons (a load tool stopping, a
///   browser dropping a spare connection), so a suspicion only counts through `PinningEvidence`:
///   repeated, sequential, and with no successful inspected exchange for the host meanwhile.
public struct PinningDetector: Sendable {
    /// How soon after the handshake a silent close still counts as pinning (default 2 s): long
    /// enough for a pin check, shorter than a browser's unused pre-connection.
    public var quietCloseWindowMicros: Int64

    public init(quietCloseWindowMicros: Int64 = 2_000_000) {
        self.quietCloseWindowMicros = quietCloseWindowMicros
    }

    /// How the client leg ended.
    public enum Ending: Sendable, Hashable {
        /// The client sent a fatal alert (its description code).
        case alert(UInt8)
        /// The client closed or reset the connection during the handshake.
        case closedDuringHandshake(certificateSent: Bool)
        /// The handshake finished; the client closed after `elapsedMicros` having sent
        /// `applicationBytes` bytes of application data.
        case closedAfterHandshake(applicationBytes: UInt64, elapsedMicros: Int64)
        /// Any other failure (protocol error, timeout, our own error).
        case otherError(String)
    }

    public enum Evidence: Sendable, Hashable {
        case none
        /// Proof enough on its own (a certificate alert).
        case definite
        /// Counts only when repeated (`PinningEvidence`).
        case suspicion
    }

    public struct Verdict: Sendable, Hashable {
        public var evidence: Evidence
        /// One sentence for the flow's error field (nil when nothing went wrong).
        public var reason: String?
        /// Whether this alone is enough to remember the host.
        public var pinned: Bool { evidence == .definite }
    }

    public func judge(_ ending: Ending) -> Verdict {
        switch ending {
        case .alert(let code):
            let name = TLSAlert.name(code)
            if TLSAlert.certificateRefusals.contains(code) {
                return Verdict(evidence: .definite, reason: "the client rejected tv's certificate (alert \(name))")
            }
            return Verdict(evidence: .none, reason: "the client aborted the handshake (alert \(name))")
        case .closedDuringHandshake(let certificateSent):
            if certificateSent {
                return Verdict(evidence: .suspicion, reason: "the client closed the connection after seeing tv's certificate, before finishing the handshake")
            }
            return Verdict(evidence: .none, reason: "the client closed the connection before the handshake")
        case let .closedAfterHandshake(bytes, elapsed):
            if bytes == 0 && elapsed <= quietCloseWindowMicros {
                return Verdict(evidence: .suspicion, reason: "the client closed right after the handshake without sending data (possible pinning)")
            }
            return Verdict(evidence: .none, reason: nil)
        case .otherError(let text):
            return Verdict(evidence: .none, reason: text)
        }
    }
}
