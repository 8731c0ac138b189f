import TVHome
/// Counts, per side of an inspected HTTP/2 connection, the frames that ask work of the other side
/// and carry no request, response or body (the floods of the 2019 Netflix advisories,
/// CVE-2019-9512 PING, -9515 SETTINGS, -9518 empty frames, and the 2023 rapid reset,
/// CVE-2023-44487), and says when a side sent more than its limit: tv then ends the connection
/// with GOAWAY ENHANCE_YOUR_CALM to that side (RFC 9113 §10.5) instead of relaying the rest.
/// Pure: frames in, a flood (or nil) out.
///
/// The PING, SETTINGS and inert counts start again at any progress, either side's: a header block
/// or a DATA frame with payload or END_STREAM (`progressed`). A gRPC client's BDP PINGs while a
/// response streams, or a keep-alive PING every 10 s for a day between requests (8,640), stay
/// under. The limit, 10,000, is Go's x/net/http2 server's bound on control frames it queues
/// (`maxQueuedControlFrames`); nginx and nghttp2 bound the same frames by what they queue.
/// Resets are the client's RST_STREAM of a stream it opened before the stream's response ended
/// (a rapid reset: HEADERS then RST_STREAM at once, each a new stream, so headers are no
/// progress for them); their count starts again only at an exchange that completes. The limit,
/// 1,000, is nghttp2 1.57's burst of stream resets (`stream_reset_burst`) before it rate-limits
/// them; a browser cancels tens of streams when a page is left.
///
/// Legitimate traffic never reaches a limit: curl, nghttp, h2load -m100 and Chromium send a
/// SETTINGS, its ACK, a WINDOW_UPDATE (never counted: a long download's receiver sends one
/// per window, without progress of its own) and at most a few PINGs per request.
public struct HTTP2FloodPolicy: Equatable, Sendable {
    /// What is counted.
    public enum Kind: Equatable, Sendable, CaseIterable {
        /// PING frames that are not ACKs (§6.7).
        case ping
        /// SETTINGS frames that are not ACKs (§6.5).
        case settings
        /// Frames that carry nothing: DATA without payload or END_STREAM (§6.1), PRIORITY (§6.3)
        /// and frames of undefined types (§5.5).
        case inert
        /// RST_STREAM from the client on a stream whose response had not ended (§6.4).
        case reset

        /// Most frames of the kind a side may send without progress (see the type's comment).
        public var limit: Int {
            switch self {
            case .ping, .settings, .inert: return 10_000
            case .reset: return 1_000
            }
        }
    }

    /// A side sent more of `kind` than its limit: `count` is the limit plus one.
    public struct Flood: Equatable, Sendable {
        public var kind: Kind
        public var count: Int

        /// "10,001 PING frames without a request, response or DATA between them", inside the
        /// flow's error sentence.
        public var phrase: String {
            let number = Self.grouped(count)
            switch kind {
            case .ping: return "\(number) PING frames without a request, response or DATA between them"
            case .settings: return "\(number) SETTINGS frames without a request, response or DATA between them"
            case .inert: return "\(number) frames that carry nothing (empty DATA, PRIORITY, undefined types) without a request, response or DATA between them"
            case .reset: return "\(number) RST_STREAM frames cancelling its own streams with no exchange completing between them (a rapid reset, CVE-2023-44487)"
            }
        }

        /// `n` with a comma between each group of three digits ("10,001"), as tv writes counts.
        static func grouped(_ n: Int) -> String { ByteWords.grouped(Int64(n)) }
    }

    /// Counts by kind (`Kind` order), the client's and the server's.
    private var client = [0, 0, 0, 0]
    private var server = [0, 0, 0, 0]

    public init() {}

    /// The count of `kind` from `side` (for tests and the flow's sentence).
    public func count(_ kind: Kind, from side: ConnectionFailure.Side) -> Int {
        (side == .client ? client : server)[Self.slot(kind)]
    }

    /// One frame of `kind` from `side`: the flood when it is past the kind's limit (each later
    /// frame is too; the reader stops at the first).
    public mutating func note(_ kind: Kind, from side: ConnectionFailure.Side) -> Flood? {
        let slot = Self.slot(kind)
        let count: Int
        if side == .client {
            client[slot] += 1
            count = client[slot]
        } else {
            server[slot] += 1
            count = server[slot]
        }
        return count > kind.limit ? Flood(kind: kind, count: count) : nil
    }

    /// A header block, or DATA with payload or END_STREAM, from either side: the PING,
    /// SETTINGS and inert counts of both sides start again.
    public mutating func progressed() {
        for slot in 0 ..< 3 {
            client[slot] = 0
            server[slot] = 0
        }
    }

    /// An exchange completed: the resets' count starts again.
    public mutating func exchangeCompleted() {
        client[3] = 0
        server[3] = 0
    }

    private static func slot(_ kind: Kind) -> Int {
        switch kind {
        case .ping: 0
        case .settings: 1
        case .inert: 2
        case .reset: 3
        }
    }
}
