import Foundation
@testable import Tunnel

/// One packet captured with tcpdump (Scripts/fixtures/capture_tunnel_packets.sh): tcpdump's own
/// reading of it and its IP bytes.
struct CapturedPacket {
    let summary: String
    let bytes: [UInt8]

    init(_ summary: String, _ hex: String) {
        self.summary = summary
        var out: [UInt8] = []
        var chars = hex.utf8.makeIterator()
        func nibble(_ c: UInt8) -> UInt8 { c <= 57 ? c - 48 : (c | 0x20) - 87 }
        while let hi = chars.next(), let lo = chars.next() { out.append(nibble(hi) << 4 | nibble(lo)) }
        bytes = out
    }
}

extension CapturedPackets {
    /// The first packet whose tcpdump reading contains every one of `parts`.
    static func first(_ parts: String...) -> CapturedPacket {
        guard let found = all.first(where: { p in parts.allSatisfy { p.summary.contains($0) } }) else {
            fatalError("no captured packet matches \(parts)")
        }
        return found
    }

    static func every(_ parts: String...) -> [CapturedPacket] {
        all.filter { p in parts.allSatisfy { p.summary.contains($0) } }
    }
}

func parse(_ bytes: [UInt8]) -> IPPacket? {
    if case .success(let p) = PacketParser.parse(bytes) { return p }
    return nil
}

func tcp(_ bytes: [UInt8], verify: Bool = true) -> Result<TCPHeader, PacketDrop>? {
    guard let p = parse(bytes) else { return nil }
    return bytes.withUnsafeBytes { TCPHeader.parse($0, p, verifyChecksum: verify) }
}

func udp(_ bytes: [UInt8], verify: Bool = true) -> Result<UDPHeader, PacketDrop>? {
    guard let p = parse(bytes) else { return nil }
    return bytes.withUnsafeBytes { UDPHeader.parse($0, p, verifyChecksum: verify) }
}

func hex(_ text: String) -> [UInt8] { CapturedPacket("", String(text.filter(\.isHexDigit))).bytes }

func endpoint(_ text: String, _ port: UInt16) -> PacketEndpoint { PacketEndpoint(PacketAddress(text)!, port) }

/// The 3,000-byte (or 100-byte) payload the capture script sent: byte i is (i × 7 + 3) mod 256.
func capturePattern(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 * 7 + 3) } }
