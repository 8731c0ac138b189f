import FlowTerms
import Wire

/// An HTTP/2 connection error (RFC 9113 §5.4.1) one side's bytes caused on an inspected
/// connection: frames that break RFC 9113's rules or tv's bounds (a frame past the receiver's
/// SETTINGS_MAX_FRAME_SIZE, a header block HPACK cannot decode, a frame on a stream it must not
/// be on, a header block that never ends), or a flood (`HTTP2FloodPolicy`). As the HTTP/1 relay
/// refuses what it cannot read (`ExchangeRefusal`), tv forwards none of it: the burst is held
/// back from where it begins (`ExchangeRefusal.passing`), and tv ends the connection as an
/// endpoint would: GOAWAY with the error's code to the side that sent it (§5.4.1, §6.8).
///
/// The other side did nothing wrong, and what it was sent so far stays readable: it gets a
/// GOAWAY INTERNAL_ERROR (§7: its peer, the path through tv, failed) when what went on to it
/// ends at a frame boundary outside a header block (`otherSideFramed`), else its connection is
/// closed (a GOAWAY after part of a frame would be read as that frame's bytes). Naming the
/// sender's own code to it would blame it; NO_ERROR would tell a client its cut streams ended
/// gracefully.
///
/// Before, such frames stopped only tv's reading and went on to the other side (a
/// hostile-input trial), and a server's endless CONTINUATION was said as the client's GOAWAY.
public struct HTTP2ConnectionError: Equatable, Sendable {
    /// What the sender's frames did.
    public enum Kind: Equatable, Sendable {
        /// They break the rules or tv's bounds: one sentence with its RFC section (the frame
        /// scanner's or HPACK's).
        case malformed(String)
        /// More frames of a kind without progress than `HTTP2FloodPolicy` allows.
        case flood(HTTP2FloodPolicy.Flood)
    }

    /// The side whose frames caused it.
    public var sentBy: ConnectionFailure.Side
    public var kind: Kind
    /// The code tv's GOAWAY to the sender carries (RFC 9113 §7): PROTOCOL_ERROR,
    /// FRAME_SIZE_ERROR, COMPRESSION_ERROR, ENHANCE_YOUR_CALM.
    public var errorCode: UInt32
    /// The highest stream the client opened whose request went on: the last stream tv's GOAWAY
    /// to the client says was processed (§6.8; later ones may be retried).
    public var lastClientStream: UInt32
    /// The highest stream the server promised (PUSH_PROMISE) that went on: the last stream tv's
    /// GOAWAY to the server names.
    public var lastServerStream: UInt32
    /// What went on to the other side ends at a frame boundary, outside a header block and
    /// after its sender's preface: it gets a GOAWAY INTERNAL_ERROR; else its connection closes.
    public var otherSideFramed: Bool

    public init(sentBy: ConnectionFailure.Side, kind: Kind, errorCode: UInt32, lastClientStream: UInt32, lastServerStream: UInt32,
                otherSideFramed: Bool) {
        self.sentBy = sentBy
        self.kind = kind
        self.errorCode = errorCode
        self.lastClientStream = lastClientStream
        self.lastServerStream = lastServerStream
        self.otherSideFramed = otherSideFramed
    }

    /// The side that did nothing wrong.
    public var otherSide: ConnectionFailure.Side { sentBy == .client ? .server : .client }

    /// The flow's error: "the server sent HTTP/2 tv cannot read: a frame of 20,000 bytes, …
    /// (RFC 9113 §4.2); tv forwarded none of it and ended the connection with GOAWAY
    /// FRAME_SIZE_ERROR to the server and GOAWAY INTERNAL_ERROR to the client (RFC 9113 §5.4.1)".
    public var phrase: String {
        let ending = "GOAWAY \(HTTP2ErrorCode.name(errorCode)) to the \(sentBy.word) and "
            + (otherSideFramed ? "GOAWAY INTERNAL_ERROR to the \(otherSide.word)" : "closed the \(otherSide.word)'s connection")
        switch kind {
        case .malformed(let reason):
            var reason = reason.hasSuffix(".") ? String(reason.dropLast()) : reason
            // "A frame …" reads "a frame …" inside the sentence; "HPACK …" stays.
            if let first = reason.first, first.isUppercase, reason.prefix(while: { $0 != " " }).dropFirst().allSatisfy(\.isLowercase) {
                reason = first.lowercased() + reason.dropFirst()
            }
            return "the \(sentBy.word) sent HTTP/2 tv cannot read: \(reason); tv forwarded none of it and ended the connection with "
                + ending + " (RFC 9113 §5.4.1)"
        case .flood(let flood):
            return "the \(sentBy.word) sent \(flood.phrase): tv forwarded the first \(HTTP2FloodPolicy.Flood.grouped(flood.count - 1)) "
                + "and ended the connection with " + ending + " (RFC 9113 §10.5)"
        }
    }

    /// tv's GOAWAY to the sender (its code, the last stream tv let through from the other
    /// side's view, debug text naming tv) and to the other side (INTERNAL_ERROR; nil when it is
    /// closed instead: `otherSideFramed`).
    public var goaways: (toSender: [UInt8], toOther: [UInt8]?) {
        // A GOAWAY's last stream is one its receiver opened (§6.8): the client's streams in the
        // one to the client, the promised ones in the one to the server.
        func last(to side: ConnectionFailure.Side) -> UInt32 { side == .client ? lastClientStream : lastServerStream }
        let sender = Self.goawayFrame(lastStreamID: last(to: sentBy), errorCode: errorCode,
                                      debug: "tv: the \(sentBy.word)'s HTTP/2 " + (errorCode == 0xb ? "went past tv's limits" : "broke the rules"))
        guard otherSideFramed else { return (sender, nil) }
        let other = Self.goawayFrame(lastStreamID: last(to: otherSide), errorCode: 0x2,
                                     debug: "tv: the \(sentBy.word)'s HTTP/2 could not be relayed")
        return (sender, other)
    }

    /// A GOAWAY frame (RFC 9113 §6.8): stream 0, the last stream id (31 bits), the error code,
    /// `debug` as its debug data.
    public static func goawayFrame(lastStreamID: UInt32, errorCode: UInt32, debug: String) -> [UInt8] {
        let text = Array(debug.utf8)
        let length = 8 + text.count
        let last = lastStreamID & 0x7fff_ffff
        return [UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff), 0x7, 0, 0, 0, 0, 0,
                UInt8(last >> 24), UInt8(last >> 16 & 0xff), UInt8(last >> 8 & 0xff), UInt8(last & 0xff),
                UInt8(errorCode >> 24), UInt8(errorCode >> 16 & 0xff), UInt8(errorCode >> 8 & 0xff), UInt8(errorCode & 0xff)] + text
    }
}
