import Capture
import Testing
import Wire
@testable import Tunnel

/// `IPDatagramLayout` (Wire), the one reading of the IP layer behind the capture's packet rows
/// (`PacketSummary`) and `tv packet` (`PacketDissector`), on real packets (tcpdump captures:
/// `CapturedPackets`), with tcpdump's reading quoted in each packet's summary.
@Suite("IPDatagramLayout: one IP reading for packet rows and the header grid")
struct IPDatagramLayoutTests {
    static func layout(_ bytes: [UInt8]) -> IPDatagramLayout? {
        if case .success(let layout) = IPDatagramLayout.read(bytes) { return layout }
        return nil
    }

    @Test("IPv6 fragments: frag (0x07a5afcd:0|1448) carries UDP's header, (…:1448|1448) and (…:2896|112) do not")
    func ipv6Fragments() throws {
        let first = try #require(Self.layout(CapturedPackets.first("frag (0x07a5afcd:0|1448)").bytes))
        #expect(first == IPDatagramLayout(version: 6, transportOffset: 48, transportProtocol: IPProtocolNumber.udp, end: 1496,
                                          extensionHeaders: [IPProtocolNumber.fragment],
                                          fragment: IPv6Fragment(identification: 0x07a5_afcd, offset: 0, moreFragments: true)))
        #expect(first.carriesTransportHeader)
        let middle = try #require(Self.layout(CapturedPackets.first("frag (0x07a5afcd:1448|1448)").bytes))
        #expect(middle == IPDatagramLayout(version: 6, transportOffset: 48, transportProtocol: IPProtocolNumber.udp, end: 1496,
                                           extensionHeaders: [IPProtocolNumber.fragment],
                                           fragment: IPv6Fragment(identification: 0x07a5_afcd, offset: 1448, moreFragments: true),
                                           fragmentOffset: 1448))
        #expect(!middle.carriesTransportHeader)
        let last = try #require(Self.layout(CapturedPackets.first("frag (0x07a5afcd:2896|112)").bytes))
        #expect(last.fragment == IPv6Fragment(identification: 0x07a5_afcd, offset: 2896, moreFragments: false))
        #expect(last.end == 40 + 120)
        // The rows' reading of the same packets: tcpdump's "|1448" and "|112" are the payloads.
        let rows = ["frag (0x07a5afcd:1448|1448)", "frag (0x07a5afcd:2896|112)"].map { part in
            CapturedPackets.first(part).bytes.withUnsafeBytes { PacketSummary.read($0, originalLength: $0.count) }
        }
        #expect(rows == [PacketSummary(transport: 17, tcpFlags: nil, payloadLength: 1448),
                         PacketSummary(transport: 17, tcpFlags: nil, payloadLength: 112)])
    }

    @Test("A hop-by-hop header then ICMPv6 (an MLD report: next-header Options (0) payload length: 56)")
    func hopByHop() throws {
        let mld = try #require(Self.layout(CapturedPackets.first("multicast listener report v2").bytes))
        #expect(mld == IPDatagramLayout(version: 6, transportOffset: 48, transportProtocol: IPProtocolNumber.icmpv6, end: 96,
                                        extensionHeaders: [IPProtocolNumber.hopByHop]))
    }

    @Test("Cut inside the extension headers, and what is not IP")
    func cutAndUnreadable() throws {
        let mld = CapturedPackets.first("multicast listener report v2").bytes
        let cut = try #require(Self.layout(Array(mld.prefix(41))))
        #expect(cut.headersCut && cut.extensionHeaders.isEmpty && cut.transportProtocol == IPProtocolNumber.hopByHop)
        #expect(IPDatagramLayout.read([0x45, 0, 0]) == .failure(.tooShortForIP(count: 3)))
        #expect(IPDatagramLayout.read([0x10]) == .failure(.notIP(version: 1)))
        #expect(IPDatagramLayout.read([0x44] + [UInt8](repeating: 0, count: 19)) == .failure(.badHeaderLength(16)))
    }

    @Test("Every captured packet: the packet row and `tv packet` read the same protocol, flags and payload length")
    func rowsAgreeWithTheDissector() throws {
        var compared = 0
        for packet in CapturedPackets.all + CapturedDNSAnswers.all {
            let row = packet.bytes.withUnsafeBytes { PacketSummary.read($0, originalLength: $0.count) }
            guard case .success(let dissection) = PacketDissector.dissect(packet.bytes) else {
                #expect(row.transport == nil, "\(packet.summary)")
                continue
            }
            #expect(row.transport == dissection.ip.transportProtocol, "\(packet.summary)")
            switch dissection.transport {
            case .tcp(let tcp)?:
                #expect(row.tcpFlags == tcp.flags && row.payloadLength == tcp.payloadLength, "\(packet.summary)")
            case .udp(let udp)?:
                // A first fragment's UDP length counts the whole datagram; the row counts this packet.
                let fragmented: Bool
                switch dissection.ip {
                case .v4(let ip): fragmented = ip.moreFragments || ip.fragmentOffset != 0
                case .v6(let ip): fragmented = ip.fragment != nil
                }
                #expect(row.tcpFlags == nil && (fragmented || row.payloadLength == Int(udp.length) - 8), "\(packet.summary)")
            default:
                #expect(row.tcpFlags == nil, "\(packet.summary)")
            }
            compared += 1
        }
        #expect(compared == CapturedPackets.all.count + CapturedDNSAnswers.all.count)
    }
}
