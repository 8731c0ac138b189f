import Capture
import Foundation
import Testing
@testable import TVCore

/// The evidence bundle's packet cut keeps only the secrets of the session's TLS connections when
/// their client_randoms are known (the audit key log's), so a bundle carries no key of a flow
/// outside its session (issue 23).
@Suite struct PcapngCutSecretsTests {
    func dsb(_ text: String) -> [UInt8] { PcapngBlocks.decryptionSecrets(secrets: Array(text.utf8)) }
    let packet: [UInt8] = [0x45, 0, 0, 20] + [UInt8](repeating: 0, count: 16)
    func epb(_ micros: Int64) -> [UInt8] {
        packet.withUnsafeBytes { PcapngBlocks.enhancedPacket(timestampMicros: micros, packet: $0, originalLength: 20) }
    }
    /// A client random's 64 hex digits, every byte `byte`.
    func hex(_ byte: String) -> String { String(repeating: byte, count: 32) }
    func random(_ byte: UInt8) -> TLSClientRandom { [UInt8](repeating: byte, count: 32).withUnsafeBytes { TLSClientRandom($0)! } }
    var aa: String { hex("aa") }
    var bb: String { hex("bb") }
    var cc: String { hex("cc") }
    var dd: String { hex("dd") }
    var file: [UInt8] {
        PcapngBlocks.sectionHeader() + PcapngBlocks.interfaceDescription(snapLength: 0)
            + dsb("CLIENT_TRAFFIC_SECRET_0 \(aa) 01\nCLIENT_TRAFFIC_SECRET_0 \(bb) 02\n") + epb(100)
            + dsb("EXPORTER_SECRET \(cc) 03\n") + epb(150) + dsb("EXPORTER_SECRET \(dd) 04\n") + epb(300)
    }

    @Test("with known client_randoms, a block keeps only their lines (rewritten), a block with none is dropped; keyLog says the same")
    func filtered() throws {
        var cut = PcapngCut(from: 50, to: 200, keepSecrets: true, clientRandoms: [random(0xaa), random(0xcc)], comment: "c")
        try cut.add(file, file: "f")
        #expect(String(decoding: cut.keyLog, as: UTF8.self) == "CLIENT_TRAFFIC_SECRET_0 \(aa) 01\nEXPORTER_SECRET \(cc) 03\n")
        #expect(cut.packets == 2)
        #expect(cut.output == PcapngBlocks.sectionHeader(comment: "c") + PcapngBlocks.interfaceDescription(snapLength: 0)
                + dsb("CLIENT_TRAFFIC_SECRET_0 \(aa) 01\n") + epb(100) + dsb("EXPORTER_SECRET \(cc) 03\n") + epb(150))
    }

    @Test("without known client_randoms every secret from the file start until the first packet past the span is kept as it was (other connections too); --no-keys keeps none")
    func unfiltered() throws {
        var cut = PcapngCut(from: 50, to: 200, keepSecrets: true, comment: "c")
        try cut.add(file, file: "f")
        #expect(String(decoding: cut.keyLog, as: UTF8.self)
                == "CLIENT_TRAFFIC_SECRET_0 \(aa) 01\nCLIENT_TRAFFIC_SECRET_0 \(bb) 02\nEXPORTER_SECRET \(cc) 03\nEXPORTER_SECRET \(dd) 04\n")
        var bare = PcapngCut(from: 50, to: 200, keepSecrets: false, clientRandoms: [random(0xaa)], comment: "c")
        try bare.add(file, file: "f")
        #expect(bare.keyLog.isEmpty)
        #expect(bare.output == PcapngBlocks.sectionHeader(comment: "c") + PcapngBlocks.interfaceDescription(snapLength: 0) + epb(100) + epb(150))
    }

    @Test("the client randoms of a key log: the second field of each three-field line, 64 hex digits in either case")
    func randomsOfAKeyLog() {
        let text = "A \(aa) 1\n\nB \(hex("BB")) 2\nbroken\nD \(hex("dd").dropLast()) 4\nE \(hex("ee")) 5 6\nC \(cc) 3"
        #expect(PcapngCut.clientRandoms(keyLog: Array(text.utf8)) == [random(0xaa), random(0xbb), random(0xcc)])
    }
}
