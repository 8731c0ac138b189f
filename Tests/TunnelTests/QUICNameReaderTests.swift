import Testing
import Wire
import Proxy
import FlowTerms
@testable import Tunnel

/// `QUICNameReader`: a client's Initials in, the ClientHello (or why not) out, with the counts
/// the engine keeps. Packets are the RFC's own (A.2) or sealed by `InitialSealer`, which
/// reproduces the RFC's packet exactly (`QUICProtectionTests.sealer`).
@Suite("Reading the name from QUIC Initial packets")
struct QUICNameReaderTests {
    let hello = Array(QUICVectors.v1.bytes("client_crypto_frame")[4...])
    let dcid = QUICVectors.v1.bytes("dcid")
    typealias Sealer = InitialSealer

    private func read(_ reader: inout QUICNameReader, _ datagram: [UInt8], now: UInt64 = 1) -> QUICNameReader.Tally {
        datagram.withUnsafeBytes { reader.read($0, now: now) }
    }

    private func serverName(_ outcome: QUICNameReader.Outcome) -> String? {
        if case .finished(let hello) = outcome { return hello.serverName }
        return nil
    }

    @Test("the RFC 9001 A.2 Initial alone names example.com with ALPN alpn; so does RFC 9369's v2 one", arguments: [QUICVectors.v1, QUICVectors.v2])
    func rfcPacket(_ v: QUICVectors) {
        var reader = QUICNameReader(now: 0)
        #expect(read(&reader, v.bytes("client_protected_packet")) == .init(opened: 1, notOpened: 0, restarts: 0))
        guard case .finished(let found) = reader.outcome else { Issue.record("\(reader.outcome)"); return }
        #expect(found.serverName == "example.com" && found.alpnProtocols == ["alpn"])
    }

    @Test("a post-quantum-sized ClientHello split across three Initials, CRYPTO frames shuffled among PING and PADDING")
    func split() throws {
        // 1,216 bytes of key share's worth, as a padding extension (RFC 7685): a ~1,470-byte hello.
        let big = withExtension(hello, type: 0x0015, data: [UInt8](repeating: 0, count: 1_216))
        #expect(try ClientHello(message: big).serverName == "example.com")
        let one = Sealer.seal(dcid: dcid, packetNumber: 0, frames: Sealer.crypto(0, big[0..<1_000]), padTo: 1_162)
        // Chromium-style chaos: PING, the later part first, PADDING, the earlier part.
        let two = Sealer.seal(dcid: dcid, packetNumber: 1, frames: [0x01] + Sealer.crypto(1_300, big[1_300..<big.count]) + [0, 0, 0]
                              + Sealer.crypto(1_000, big[1_000..<1_200]), padTo: 1_162)
        let three = Sealer.seal(dcid: dcid, packetNumber: 2, frames: Sealer.crypto(1_200, big[1_200..<1_300]), padTo: 1_162)
        var reader = QUICNameReader(now: 0)
        _ = read(&reader, one)
        #expect(reader.outcome == .reading)
        _ = read(&reader, two)
        #expect(reader.outcome == .reading)
        #expect(read(&reader, three) == .init(opened: 1, notOpened: 0, restarts: 0))
        #expect(serverName(reader.outcome) == "example.com")
    }

    @Test("reordered: the second Initial arrives first")
    func reordered() {
        let one = Sealer.seal(dcid: dcid, packetNumber: 0, frames: Sealer.crypto(0, hello[0..<120]), padTo: 1_162)
        let two = Sealer.seal(dcid: dcid, packetNumber: 1, frames: Sealer.crypto(120, hello[120...]), padTo: 1_162)
        var reader = QUICNameReader(now: 0)
        _ = read(&reader, two)
        #expect(reader.outcome == .reading)
        _ = read(&reader, one)
        #expect(serverName(reader.outcome) == "example.com")
    }

    @Test("two Initials coalesced in one datagram around a Handshake packet are both read")
    func coalesced() {
        let first = Sealer.seal(dcid: dcid, packetNumber: 0, frames: Sealer.crypto(0, hello[0..<120]), padTo: 100)
        let second = Sealer.seal(dcid: dcid, packetNumber: 1, frames: Sealer.crypto(120, hello[120...]), padTo: 100)
        let handshake: [UInt8] = [0xE0, 0, 0, 0, 1, 0, 0, 3, 9, 9, 9]  // v1 Handshake, no CIDs, Length 3
        var reader = QUICNameReader(now: 0)
        #expect(read(&reader, first + handshake + second) == .init(opened: 2, notOpened: 0, restarts: 0))
        #expect(serverName(reader.outcome) == "example.com")
    }

    @Test("the client moves to the server's connection ID: same keys, no restart")
    func switchedConnectionID() {
        let one = Sealer.seal(dcid: dcid, packetNumber: 0, frames: Sealer.crypto(0, hello[0..<120]), padTo: 1_162)
        let keys = QUICInitialKeys(version: .v1, destinationConnectionID: dcid)!
        let two = Sealer.seal(dcid: [9, 9, 9, 9], keys: keys, packetNumber: 1, frames: Sealer.crypto(120, hello[120...]), padTo: 100)
        var reader = QUICNameReader(now: 0)
        _ = read(&reader, one)
        #expect(read(&reader, two) == .init(opened: 1, notOpened: 0, restarts: 0))
        #expect(serverName(reader.outcome) == "example.com")
    }

    @Test("after a Retry the client's Initials use keys of the new DCID: the read starts over and counts it")
    func retry() {
        let one = Sealer.seal(dcid: dcid, packetNumber: 0, frames: Sealer.crypto(0, hello[0..<120]), padTo: 1_162)
        let again = Sealer.seal(dcid: [7, 7, 7, 7, 7, 7, 7, 7], token: [1, 2, 3], packetNumber: 1, frames: Sealer.crypto(0, hello[0...]), padTo: 1_162)
        var reader = QUICNameReader(now: 0)
        _ = read(&reader, one)
        #expect(read(&reader, again) == .init(opened: 1, notOpened: 0, restarts: 1))
        #expect(serverName(reader.outcome) == "example.com")
    }

    @Test("an Initial-looking datagram no key opens is counted; past the packet limit the read gives up")
    func notQUIC() {
        var garbage = QUICVectors.v1.bytes("client_protected_packet")
        for i in 30..<garbage.count { garbage[i] = UInt8(truncatingIfNeeded: i * 7) }
        var reader = QUICNameReader(now: 0, limits: .init(packets: 2))
        #expect(read(&reader, garbage) == .init(opened: 0, notOpened: 1, restarts: 0))
        _ = read(&reader, garbage)
        #expect(reader.outcome == .reading)
        _ = read(&reader, garbage)
        #expect(reader.outcome == .failed(.tooManyPackets))
        // A finished read takes nothing more.
        #expect(read(&reader, QUICVectors.v1.bytes("client_protected_packet")) == .init())
    }

    @Test("time runs out: on the next datagram, or at housekeeping")
    func timeout() {
        let one = Sealer.seal(dcid: dcid, packetNumber: 0, frames: Sealer.crypto(0, hello[0..<120]), padTo: 1_162)
        var reader = QUICNameReader(now: 0, limits: .init(nanos: 1_000))
        _ = read(&reader, one, now: 10)
        reader.expire(now: 999)
        #expect(reader.outcome == .reading)
        _ = read(&reader, one, now: 1_000)
        #expect(reader.outcome == .failed(.timedOut))
        var idle = QUICNameReader(now: 0, limits: .init(nanos: 1_000))
        idle.expire(now: 1_000)
        #expect(idle.outcome == .failed(.timedOut))
    }

    @Test("a CRYPTO stream past the byte bound, and a frame Initials may not carry, end the read with the RFC's words")
    func malformed() {
        let far = Sealer.seal(dcid: dcid, packetNumber: 0, frames: Sealer.crypto(20_000, hello[0..<10]), padTo: 1_162)
        var reader = QUICNameReader(now: 0)
        _ = read(&reader, far)
        #expect(reader.outcome == .failed(.malformed("The client's CRYPTO stream reaches offset 20010, past the 16384 bytes tv reads of it (RFC 9000 §19.6).")))
        let stream = Sealer.seal(dcid: dcid, packetNumber: 0, frames: [0x08, 0, 0, 0], padTo: 1_162)  // STREAM
        var other = QUICNameReader(now: 0)
        _ = read(&other, stream)
        #expect(other.outcome == .failed(.malformed("An Initial packet carries a frame of type 0x8, which RFC 9000 §12.4 does not allow there.")))
    }

    @Test("an ECH ClientHello: the outer name, said as such on the flow, with origin QUIC")
    func ech() throws {
        let ech = withExtension(hello, type: 0xFE0D, data: [0, 0, 1, 0, 1, 0x20] + [UInt8](repeating: 7, count: 32) + [0, 4, 1, 2, 3, 4])
        var reader = QUICNameReader(now: 0)
        _ = read(&reader, Sealer.seal(dcid: dcid, packetNumber: 0, frames: Sealer.crypto(0, ech[...]), padTo: 1_162))
        guard case .finished(let found) = reader.outcome else { Issue.record("\(reader.outcome)"); return }
        #expect(found.carriesEncryptedClientHello)
        var facts = FlowFacts(id: 1, startMicros: 0, client: Endpoint(address: "10.0.0.1", port: 5000))
        facts.transport = .udp
        facts.nameFromDNS(["cdn.example", "other.example"])
        facts.noteQUIC(found)
        #expect(facts.host == "example.com" && facts.hostOrigin == .quic && facts.hostIsECHPublicName)
        #expect(facts.offeredALPN == ["alpn"] && facts.status == .encrypted)
        // The names looked up for the address stay beside the announced one (none of them).
        #expect(facts.otherHosts == ["cdn.example", "other.example"] && facts.otherHostsOrigin == .lookupsNotAnnounced)
        // Without the extension the name is not an outer one.
        var plain = FlowFacts(id: 2, startMicros: 0, client: Endpoint(address: "10.0.0.1", port: 5000))
        plain.noteQUIC(try ClientHello(message: hello))
        #expect(plain.hostOrigin == .quic && !plain.hostIsECHPublicName)
    }
}
