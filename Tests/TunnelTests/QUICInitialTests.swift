import Testing
import Wire
import Proxy
import FlowTerms
@testable import Tunnel

/// QUIC Initial keys and packet protection against RFC 9001 Appendix A (v1) and RFC 9369
/// Appendix A (v2): every key, IV, header-protection key, mask and plaintext exactly.
@Suite("QUIC Initial keys and protection (RFC 9001 App. A, RFC 9369 App. A)")
struct QUICProtectionTests {
    @Test("keys, IVs and header-protection keys of both sides, v1 and v2", arguments: [(QUICVersion.v1, QUICVectors.v1), (.v2, .v2)])
    func keys(_ version: QUICVersion, _ v: QUICVectors) throws {
        let dcid = v.bytes("dcid")
        #expect(QUICInitialKeys.initialSecret(version: version, destinationConnectionID: dcid) == v.bytes("initial_secret"))
        let initial = v.bytes("initial_secret")
        #expect(QUICInitialKeys.expandLabel(secret: initial, label: "client in", length: 32) == v.bytes("client_initial_secret"))
        #expect(QUICInitialKeys.expandLabel(secret: initial, label: "server in", length: 32) == v.bytes("server_initial_secret"))
        #expect(QUICInitialKeys.hkdfLabel("client in", length: 32) == v.bytes("hkdf_label_client_in"))
        let prefix = version == .v2 ? "hkdf_label_quicv2_" : "hkdf_label_quic_"
        let labels = QUICInitialKeys.labels(version)
        #expect(QUICInitialKeys.hkdfLabel(labels.key, length: 16) == v.bytes(prefix + "key"))
        #expect(QUICInitialKeys.hkdfLabel(labels.iv, length: 12) == v.bytes(prefix + "iv"))
        #expect(QUICInitialKeys.hkdfLabel(labels.hp, length: 16) == v.bytes(prefix + "hp"))
        let client = try #require(QUICInitialKeys(version: version, destinationConnectionID: dcid))
        #expect(client.key == v.bytes("client_key") && client.iv == v.bytes("client_iv") && client.headerProtection == v.bytes("client_hp"))
        let server = try #require(QUICInitialKeys(version: version, destinationConnectionID: dcid, server: true))
        #expect(server.key == v.bytes("server_key") && server.iv == v.bytes("server_iv") && server.headerProtection == v.bytes("server_hp"))
    }

    @Test("the client Initial opens: mask, packet number 2, the CRYPTO frame then PADDING", arguments: [(QUICVersion.v1, QUICVectors.v1), (.v2, .v2)])
    func clientInitial(_ version: QUICVersion, _ v: QUICVectors) throws {
        let keys = try #require(QUICInitialKeys(version: version, destinationConnectionID: v.bytes("dcid")))
        #expect(QUICPacketProtection.headerProtectionMask(keys.headerProtection, sample: v.bytes("client_hp_sample")) == v.bytes("client_hp_mask"))
        let packet = v.bytes("client_protected_packet")
        #expect(packet.count == 1200)
        let start = try packet.withUnsafeBytes { try QUICLongHeaderParser.parse($0) }
        guard case .initial(let header) = start else { Issue.record("not an Initial: \(start)"); return }
        let opened = try packet.withUnsafeBytes { try QUICPacketProtection.open($0, header: header, keys: keys, largestPacketNumber: nil).get() }
        #expect(opened.packetNumber == UInt64(v.int("client_packet_number")))
        let frame = v.bytes("client_crypto_frame")
        #expect(opened.payload == frame + [UInt8](repeating: 0, count: v.int("client_payload_length") - frame.count))
    }

    @Test("the server Initial (A.3) opens with the server keys to the RFC's payload", arguments: [(QUICVersion.v1, QUICVectors.v1), (.v2, .v2)])
    func serverInitial(_ version: QUICVersion, _ v: QUICVectors) throws {
        let keys = try #require(QUICInitialKeys(version: version, destinationConnectionID: v.bytes("dcid"), server: true))
        let packet = v.bytes("server_protected_packet")
        guard case .initial(let header) = try packet.withUnsafeBytes({ try QUICLongHeaderParser.parse($0) }) else { Issue.record("not an Initial"); return }
        let opened = try packet.withUnsafeBytes { try QUICPacketProtection.open($0, header: header, keys: keys, largestPacketNumber: nil).get() }
        #expect(opened.packetNumber == 1 && opened.payload == v.bytes("server_payload"))
    }

    @Test("wrong keys, a flipped byte, a packet too short: not opened, with the kind")
    func notOpened() throws {
        let v = QUICVectors.v1
        var packet = v.bytes("client_protected_packet")
        let header = QUICInitialHeader(version: .v1, destinationConnectionID: v.bytes("dcid"), sourceConnectionID: [], tokenLength: 0,
                                       packetNumberOffset: 18, packetLength: 1200)
        let other = try #require(QUICInitialKeys(version: .v1, destinationConnectionID: [1, 2, 3, 4]))
        #expect(packet.withUnsafeBytes { QUICPacketProtection.open($0, header: header, keys: other, largestPacketNumber: nil) } == .failure(.notAuthentic))
        let keys = try #require(QUICInitialKeys(version: .v1, destinationConnectionID: v.bytes("dcid")))
        packet[600] ^= 1
        #expect(packet.withUnsafeBytes { QUICPacketProtection.open($0, header: header, keys: keys, largestPacketNumber: nil) } == .failure(.notAuthentic))
        var short = header
        short.packetLength = 18 + 19
        #expect(packet.withUnsafeBytes { QUICPacketProtection.open($0, header: short, keys: keys, largestPacketNumber: nil) } == .failure(.tooShort))
    }

    @Test("packet numbers expand as RFC 9000 Appendix A.3 says")
    func packetNumbers() {
        #expect(QUICPacketProtection.decodePacketNumber(largest: 0xa82f30ea, truncated: 0x9b32, bits: 16) == 0xa82f9b32)
        #expect(QUICPacketProtection.decodePacketNumber(largest: nil, truncated: 2, bits: 32) == 2)
        #expect(QUICPacketProtection.decodePacketNumber(largest: 255, truncated: 1, bits: 8) == 257)
    }

    @Test("the test sealer reproduces the RFC's protected client Initial byte for byte (v1 and v2)", arguments: [(QUICVersion.v1, QUICVectors.v1), (.v2, .v2)])
    func sealer(_ version: QUICVersion, _ v: QUICVectors) {
        let sealed = InitialSealer.seal(version: version, dcid: v.bytes("dcid"), packetNumber: 2, frames: v.bytes("client_crypto_frame"),
                                        padTo: v.int("client_payload_length"))
        #expect(sealed == v.bytes("client_protected_packet"))
    }
}
