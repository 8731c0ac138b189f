import Capture
import Foundation
import Testing

/// A TCP packet (IPv4, or IPv6 when `v6`) from 10.0.0.1:40000 to 10.0.0.2:443 carrying `payload`.
func tcpPacket(_ payload: [UInt8], v6: Bool = false) -> [UInt8] {
    let tcp: [UInt8] = [0x9c, 0x40, 0x01, 0xbb, 0, 0, 0, 1, 0, 0, 0, 1, 0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0]
    let body = tcp + payload
    if v6 {
        var ip: [UInt8] = [0x60, 0, 0, 0, UInt8(body.count >> 8), UInt8(body.count & 0xff), 6, 64]
        ip += [UInt8](repeating: 0, count: 15) + [1] + [UInt8](repeating: 0, count: 15) + [2]
        return ip + body
    }
    let total = 20 + body.count
    return [0x45, 0, UInt8(total >> 8), UInt8(total & 0xff), 0, 0, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2] + body
}

/// The start of a TLS record holding a ClientHello (type `type`) whose random is 0x00…0x1f.
func clientHelloStart(type: UInt8 = 1) -> [UInt8] {
    [22, 3, 1, 0x02, 0x00, type, 0, 0x01, 0xfc, 3, 3] + (0..<32).map { UInt8($0) } + [32] + [UInt8](repeating: 0xee, count: 32)
}

@Suite("TLSClientRandom: a ClientHello's random in a captured packet, and in key log lines")
struct TLSClientRandomTests {
    let expected = (0..<32).map { UInt8($0) }.withUnsafeBytes { TLSClientRandom($0)! }

    func read(_ packet: [UInt8]) -> TLSClientRandom? { packet.withUnsafeBytes { TLSClientRandom.ofClientHello(in: $0) } }

    @Test("IPv4 and IPv6: the 32 bytes after legacy_version; not a ServerHello, not application data, not cut before the random's end")
    func clientHello() {
        #expect(read(tcpPacket(clientHelloStart())) == expected)
        #expect(read(tcpPacket(clientHelloStart(), v6: true)) == expected)
        #expect(read(tcpPacket(clientHelloStart(type: 2))) == nil)
        var data = clientHelloStart()
        data[0] = 23
        #expect(read(tcpPacket(data)) == nil)
        #expect(read(tcpPacket(Array(clientHelloStart().prefix(43)))) == expected)
        #expect(read(tcpPacket(Array(clientHelloStart().prefix(42)))) == nil)
        // Captured bytes cut by the snap length inside the random.
        #expect(read(Array(tcpPacket(clientHelloStart()).prefix(80))) == nil)
    }

    @Test("Key log lines: CLIENT_TRAFFIC_SECRET_0 and CLIENT_RANDOM name their randoms, in order; other labels and bad lines do not")
    func keyLog() {
        let hex = (0..<32).map { String(format: "%02x", $0) }.joined()
        let other = String(repeating: "AB", count: 32)
        let lines = "SERVER_TRAFFIC_SECRET_0 \(hex) 00\n" + "CLIENT_TRAFFIC_SECRET_0 \(hex) 1122\n" + "CLIENT_RANDOM \(other) 33\n"
            + "CLIENT_RANDOM \(hex.dropLast()) 44\n" + "CLIENT_RANDOM \(hex)ff 55\n" + "CLIENT_HANDSHAKE_TRAFFIC_SECRET \(hex) 66\n"
        let found = Array(lines.utf8).withUnsafeBytes { TLSClientRandom.clientFinishedSecrets(inKeyLog: $0) }
        #expect(found == [expected, random(0xab)])
        // The four words, big-endian; upper-case hex reads the same; a line without its line feed.
        #expect(expected.words == (0x0001_0203_0405_0607, 0x0809_0a0b_0c0d_0e0f, 0x1011_1213_1415_1617, 0x1819_1a1b_1c1d_1e1f))
        let upper = Array("CLIENT_RANDOM \(hex.uppercased()) 99".utf8)
        #expect(upper.withUnsafeBytes { TLSClientRandom.clientFinishedSecrets(inKeyLog: $0) } == [expected])
        // A label that only starts like one, and a random with a non-hex digit, name nothing.
        let near = Array("CLIENT_TRAFFIC_SECRET_01 \(hex) 1\nCLIENT_RANDOM \(hex.dropLast())g 2\n".utf8)
        #expect(near.withUnsafeBytes { TLSClientRandom.clientFinishedSecrets(inKeyLog: $0) } == [])
    }
}
