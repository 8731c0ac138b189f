/// How a relayed connection that tv does not read as HTTP began (`ExchangeReader.Stop.notHTTP`):
/// which side spoke first and its first bytes, said on an inspected flow in one sentence
/// (`ConnectionFailure.notReadAsHTTP`). Only where tv cannot know the stream is HTTP before its
/// first byte (TLS without ALPN to an arbitrary port, a plain relay): where it can
/// (`ExchangeReader.Settings.knowsHTTP`), such bytes are a broken request, refused. Before, the
/// flow said nothing of it: a trial's `\x00GET /first` through a TLS tunnel read "inspected" with
/// no rows while a lax server answered two requests. Pure.
public struct NotHTTPStart: Equatable, Sendable {
    /// The side whose bytes came first.
    public var side: ConnectionFailure.Side
    /// Its first bytes, at most `shown`.
    public var first: [UInt8]
    /// More bytes came than `first` holds.
    public var more: Bool

    /// Most bytes said.
    static let shown = 16

    init(_ side: ConnectionFailure.Side, _ bytes: UnsafeRawBufferPointer) {
        self.side = side
        first = Array(bytes.prefix(Self.shown))
        more = bytes.count > Self.shown
    }

    init(_ side: ConnectionFailure.Side, first: [UInt8], more: Bool = false) {
        self.side = side
        self.first = first
        self.more = more
    }

    /// The bytes as said: quoted when all are visible ASCII or spaces (`'SSH-2.0-OpenSSH_…'`),
    /// else in hex (`00 47 45 54 …`), as `tv http` says a flow it does not read.
    var bytesText: String {
        if !first.isEmpty && first.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
            return "'" + String(decoding: first, as: UTF8.self) + (more ? "…'" : "'")
        }
        return "the bytes " + first.map { byte in
            let hex = String(byte, radix: 16)
            return hex.count == 1 ? "0" + hex : hex
        }.joined(separator: " ") + (more ? " …" : "")
    }

    /// Why the connection is not read as HTTP, from its first bytes.
    public var sentence: String {
        switch side {
        case .client:
            return "the client's first bytes, \(bytesText), begin neither an HTTP/1 request line nor HTTP/2's preface"
        case .server:
            return "the server spoke first, \(bytesText), before any request, which an HTTP server does not"
        }
    }
}
