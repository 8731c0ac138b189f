/// The seam for TLS secrets of the client legs (tv's side of each inspected client's handshake):
/// each NSS key log line (`CLIENT_HANDSHAKE_TRAFFIC_SECRET …`, SSLKEYLOGFILE format) as OpenSSL
/// derives it, for the capture file's Decryption Secrets Block (pcapng §4.7).
///
/// Called on a loop thread in the middle of a handshake: copy the line and return; never block.
public protocol TLSSecretsRecorder: Sendable {
    /// - Parameter line: one key log line without its line feed, valid during the call only.
    func record(keyLogLine line: UnsafeRawBufferPointer)
    /// The client whose ClientHello carried `clientRandom` (32 bytes) gets no TLS leg from tv
    /// (its connection is passed through): no secret of it will come. A capture waiting for one
    /// before writing its packets stops waiting.
    func noSecretWillCome(clientRandom: [UInt8])
}

extension TLSSecretsRecorder {
    public func noSecretWillCome(clientRandom: [UInt8]) {}
}
