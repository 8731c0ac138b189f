import FlowTerms

/// Who made a connection, as far as pinning memory can tell.
///
/// Until tv records which program made a connection (a later issue), a client is its address
/// plus the fingerprint of its ClientHello (`ClientHelloFingerprint`): two programs on one
/// address (curl and Python's urllib on 127.0.0.1) offer different ciphers, extensions and ALPN,
/// so what one of them taught tv (it lacks the root, it pins) is not applied to the other, while
/// one program's retries look alike. When programs are known, they take the fingerprint's
/// place here (the seam: a `program` beside `address`), and the store's `client_hello` column.
public struct ClientIdentity: Sendable, Hashable, CustomStringConvertible {
    /// The client's numeric address (`127.0.0.1`, `::1`); the port is left out (each connection
    /// has its own).
    public var address: String
    /// `ClientHelloFingerprint.of(_:)` of the client's ClientHello, 12 lowercase hex digits.
    public var helloFingerprint: String

    public init(address: String, helloFingerprint: String) {
        self.address = address
        self.helloFingerprint = helloFingerprint
    }

    /// `127.0.0.1 (hello 1a2b3c4d5e6f)`.
    public var description: String { "\(address) (hello \(helloFingerprint))" }
}

/// What pinning memory is keyed by: the client, and the host and port it went to. The host is
/// the SNI, else the destination's name or address, lowercased without a trailing dot.
public struct PinKey: Sendable, Hashable, CustomStringConvertible {
    public var client: ClientIdentity
    public var host: String
    public var port: UInt16

    public init(client: ClientIdentity, host: String, port: UInt16) {
        self.client = client
        self.host = PinKey.normalize(host)
        self.port = port
    }

    /// `a.test:443`, `[::1]:8443`: the host and port, as a sentence names them.
    public var target: String { Endpoint(address: host, port: port).description }

    /// `a.test:443 from 127.0.0.1 (hello 1a2b3c4d5e6f)`.
    public var description: String { "\(target) from \(client)" }

    /// `Example.COM.` → `example.com`.
    public static func normalize(_ host: String) -> String {
        var name = host.lowercased()
        while name.hasSuffix(".") { name.removeLast() }
        return name
    }
}
