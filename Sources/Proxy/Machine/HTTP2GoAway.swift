import FlowTerms
import Wire

/// A GOAWAY with an error code (RFC 9113 §6.8, §7) read on an inspected HTTP/2 connection: one
/// side ended the connection because something went wrong (a protocol, flow-control or
/// compression error, ENHANCE_YOUR_CALM). A NO_ERROR GOAWAY is a graceful end (nginx after its
/// `keepalive_requests`) and is not one. The flow keeps it as its error when it has none (a
/// trial's connections ended by GOAWAY PROTOCOL_ERROR and FLOW_CONTROL_ERROR read as clean).
public struct HTTP2GoAway: Equatable, Sendable {
    /// The side that sent the GOAWAY.
    public var sentBy: ConnectionFailure.Side
    /// The error code (never 0, NO_ERROR).
    public var errorCode: UInt32
    /// The last stream its sender processed (0: none).
    public var lastStreamID: UInt32
    /// Its debug data when that is printable ASCII text (at most
    /// `HTTP2FrameScanner.goawayDebugKept` bytes of it); nil when there was none or it is not text.
    public var debug: String?

    /// "the server ended HTTP/2 with GOAWAY PROTOCOL_ERROR ('…'); streams after 5 went
    /// unprocessed (RFC 9113 §6.8)", inside the flow's error sentence.
    public var phrase: String {
        var out = "the \(sentBy.word) ended HTTP/2 with GOAWAY \(HTTP2ErrorCode.name(errorCode))"
        if let debug { out += " ('\(debug)')" }
        out += lastStreamID == 0 ? "; it processed no stream" : "; streams after \(lastStreamID) went unprocessed"
        return out + " (RFC 9113 §6.8)"
    }
}

extension HTTP2GoAway {
    /// The GOAWAY read on `direction`, or nil for a graceful one (NO_ERROR).
    init?(_ direction: Direction, lastStreamID: UInt32, errorCode: UInt32, debug: UnsafeRawBufferPointer) {
        guard errorCode != 0 else { return nil }
        sentBy = direction == .clientToServer ? .client : .server
        self.errorCode = errorCode
        self.lastStreamID = lastStreamID
        let text = !debug.isEmpty && debug.allSatisfy { $0 >= 0x20 && $0 < 0x7f }
        self.debug = text ? String(decoding: debug, as: UTF8.self) : nil
    }
}
