import Wire
import Capture
import Foundation
import Testing
@testable import Tunnel

/// `PacketDissector` on real packets (tcpdump captures of curl, python3, glibc, dnsmasq and ping:
/// `CapturedPackets`, `CapturedDNSAnswers`), field by field against tshark's reading of the same
/// bytes, and the exact values the header grid is built from.
@Suite("PacketDissector: header fields and DNS answers, as tshark reads them")
struct PacketDissectorTests {
    static var packets: [CapturedPacket] { CapturedDNSAnswers.all + CapturedPackets.all }

    /// tshark's fields, in this order, for every packet (joined with `|`; several values of one
    /// field joined with `,`).
    static let tsharkFields = [
        "ip.src", "ip.dst", "ip.ttl", "ip.id", "ip.flags.df", "ip.flags.mf", "ip.frag_offset",
        "ipv6.src", "ipv6.dst", "ipv6.hlim", "ipv6.flow",
        "tcp.srcport", "tcp.dstport", "tcp.seq_raw", "tcp.ack_raw", "tcp.window_size_value", "tcp.flags",
        "tcp.options.mss_val", "tcp.options.wscale.shift", "tcp.options.timestamp.tsval", "tcp.options.timestamp.tsecr",
        "udp.srcport", "udp.dstport", "udp.length", "icmp.type", "icmp.code", "icmpv6.type", "icmpv6.code",
        "dns.flags.response", "dns.qry.name", "dns.qry.type", "dns.flags.rcode", "dns.a", "dns.aaaa", "dns.cname", "dns.count.answers",
    ]

    /// The same fields from our dissection, written as tshark writes them.
    static func ours(_ d: PacketDissection) -> [String] {
        var f = [String](repeating: "", count: tsharkFields.count)
        func set(_ name: String, _ value: String) { f[tsharkFields.firstIndex(of: name)!] = value }
        func hex(_ v: some BinaryInteger, _ width: Int) -> String {
            let s = String(v, radix: 16)
            return "0x" + String(repeating: "0", count: max(0, width - s.count)) + s
        }
        switch d.ip {
        case .v4(let ip):
            set("ip.src", "\(ip.source)"); set("ip.dst", "\(ip.destination)"); set("ip.ttl", "\(ip.ttl)")
            set("ip.id", hex(ip.identification, 4)); set("ip.flags.df", ip.dontFragment ? "1" : "0")
            set("ip.flags.mf", ip.moreFragments ? "1" : "0"); set("ip.frag_offset", "\(ip.fragmentOffset / 8)")
        case .v6(let ip):
            set("ipv6.src", "\(ip.source)"); set("ipv6.dst", "\(ip.destination)"); set("ipv6.hlim", "\(ip.hopLimit)")
            set("ipv6.flow", hex(ip.flowLabel, 6))
        }
        switch d.transport {
        case .tcp(let t)?:
            set("tcp.srcport", "\(t.sourcePort)"); set("tcp.dstport", "\(t.destinationPort)")
            set("tcp.seq_raw", "\(t.sequenceNumber)"); set("tcp.ack_raw", "\(t.acknowledgmentNumber)")
            set("tcp.window_size_value", "\(t.window)"); set("tcp.flags", hex(t.flags, 4))
            for option in t.options {
                switch option {
                case .maximumSegmentSize(let v): set("tcp.options.mss_val", "\(v)")
                case .windowScale(let v): set("tcp.options.wscale.shift", "\(v)")
                case .timestamps(let v, let e):
                    set("tcp.options.timestamp.tsval", "\(v)"); set("tcp.options.timestamp.tsecr", "\(e)")
                default: break
                }
            }
        case .udp(let u)?:
            set("udp.srcport", "\(u.sourcePort)"); set("udp.dstport", "\(u.destinationPort)"); set("udp.length", "\(u.length)")
        case .icmp(let i)?:
            set(i.isV6 ? "icmpv6.type" : "icmp.type", "\(i.type)"); set(i.isV6 ? "icmpv6.code" : "icmp.code", "\(i.code)")
        case nil: break
        }
        if case .message(let m)? = d.dns {
            set("dns.flags.response", m.isReply ? "1" : "0"); set("dns.qry.name", m.name ?? "")
            set("dns.qry.type", m.recordType.map { "\($0)" } ?? "")
            if let answer = m.answer {
                switch answer.outcome {
                case .answered, .noRecordsOfThatType: set("dns.flags.rcode", "0")
                case .noSuchName: set("dns.flags.rcode", "3")
                case .failed(let code): set("dns.flags.rcode", "\(code)")
                }
                set("dns.a", answer.addresses.filter { !$0.isIPv6 }.map(\.description).joined(separator: ","))
                set("dns.aaaa", answer.addresses.filter(\.isIPv6).map(\.description).joined(separator: ","))
                set("dns.cname", answer.names.joined(separator: ","))
                let count = answer.addresses.count + answer.names.count + answer.otherRecords.reduce(0) { $0 + $1.count }
                set("dns.count.answers", "\(count)")
            } else {
                set("dns.count.answers", "0")
            }
        }
        return f
    }

    @Test("every captured packet: addresses, TTL/hop limit, id, fragment fields, ports, seq/ack, window, flags, options, ICMP type/code, DNS answers equal tshark's")
    func equalsTshark() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tshark"),
              FileManager.default.isExecutableFile(atPath: "/usr/bin/text2pcap") else {
            Issue.record("tshark and text2pcap are needed (Debian package tshark, in Scripts/packages.sh TEST_PACKAGES)")
            return
        }
        let lines = try Self.tshark(Self.packets.map(\.bytes), fields: Self.tsharkFields)
        #expect(lines.count == Self.packets.count)
        for (packet, line) in zip(Self.packets, lines) {
            let dissection = try PacketDissector.dissect(packet.bytes).get()
            #expect(Self.ours(dissection) == line.split(separator: "|", omittingEmptySubsequences: false).map(String.init),
                    "\(packet.summary)")
        }
    }

    @Test("dnsmasq's answers: an address, NODATA, NXDOMAIN, a CNAME chain over IPv6, a TXT record counted by type")
    func dnsOutcomes() throws {
        func answer(_ parts: String...) throws -> DNSFields {
            let packet = try #require(CapturedDNSAnswers.all.first { p in parts.allSatisfy { p.summary.contains($0) } })
            guard case .message(let m)? = try PacketDissector.dissect(packet.bytes).get().dns else {
                Issue.record("no DNS fields"); throw CancellationError()
            }
            return m
        }
        #expect(try answer("q: A? v4only.test. 1/0/0") == DNSFields(
            id: 58848, isReply: true, name: "v4only.test", recordType: 1,
            answer: DNSAnswer(outcome: .answered, addresses: [PacketAddress("10.203.0.7")!])))
        #expect(try answer("q: AAAA? v4only.test. 0/0/0").answer == DNSAnswer(outcome: .noRecordsOfThatType))
        #expect(try answer("NXDomain q: A? missing.test.").answer == DNSAnswer(outcome: .noSuchName))
        #expect(try answer("q: AAAA? alias.test.").answer == DNSAnswer(
            outcome: .answered, addresses: [PacketAddress("fd04::8")!], names: ["both.test"]))
        #expect(try answer("q: TXT? note.test.").answer == DNSAnswer(
            outcome: .answered, otherRecords: [.init(type: 16, count: 1)]))
        let query = try answer("58848+ A? v4only.test.")
        #expect(query == DNSFields(id: 58848, isReply: false, name: "v4only.test", recordType: 1, answer: nil))
    }

    @Test("a SYN's header: every field and its options in order")
    func synFields() throws {
        let syn = CapturedPackets.first("10.203.9.1.59902 > 10.203.9.2.8080: Flags [S],")
        let d = try PacketDissector.dissect(syn.bytes).get()
        #expect(d.cut == nil && d.dns == nil)
        guard case .v4(let ip) = d.ip, case .tcp(let tcp)? = d.transport else { Issue.record("not IPv4/TCP"); return }
        #expect(ip == IPv4Fields(headerLength: 20, trafficClass: 0, totalLength: 60, identification: 53184, dontFragment: true,
                                 moreFragments: false, fragmentOffset: 0, ttl: 64, protocolNumber: 6, headerChecksum: 0x4363,
                                 source: PacketAddress("10.203.9.1")!, destination: PacketAddress("10.203.9.2")!))
        #expect(tcp.options == [.maximumSegmentSize(1460), .sackPermitted, .timestamps(value: 2_712_671_132, echoReply: 0),
                                .noOperation, .windowScale(10)])
        #expect(tcp.options.map(\.description).joined(separator: ",") == "mss 1460,sackOK,TS val 2712671132 ecr 0,nop,wscale 10")
        #expect(TCPFlags.acronyms(tcp.flags) == "SYN")
        #expect(tcp.headerLength == 40 && tcp.payloadLength == 0 && tcp.window == 64240)
        // Cut by a 50-byte snap length inside the timestamps: cut, not malformed (a trial).
        let cut = try PacketDissector.dissect(Array(syn.bytes.prefix(50))).get()
        guard case .tcp(let short)? = cut.transport else { Issue.record("not TCP"); return }
        #expect(short.options == [.maximumSegmentSize(1460), .sackPermitted, .cut(kind: 8)])
        #expect(short.options.last?.description == "kind 8 (cut short by the snap length)")
        // A wrong length byte in bytes that are all there stays malformed.
        #expect(TCPOptionReader.read([8, 1, 0, 0]) == [.malformed(kind: 8)])
        #expect(TCPOptionReader.read([2, 4, 5]) == [.malformed(kind: 2)])
        #expect(TCPOptionReader.read([2, 4, 5], truncated: true) == [.cut(kind: 2)])
    }

    @Test("a packet the snaplen cut: read as far as its bytes go, the layer it ran out in said")
    func cutShort() throws {
        let request = CapturedPackets.first("Flags [P.]", "seq 1:90").bytes
        let inPayload = try PacketDissector.dissect(Array(request.prefix(60))).get()
        #expect(inPayload.cut == .payload)
        guard case .tcp(let tcp)? = inPayload.transport else { Issue.record("no TCP"); return }
        #expect(tcp.payloadLength == 89 && tcp.sourcePort == 59902)
        #expect(try PacketDissector.dissect(Array(request.prefix(30))).get().cut == .transport)
        #expect(try PacketDissector.dissect(Array(request.prefix(30))).get().transport == nil)
        #expect(PacketDissector.dissect(Array(request.prefix(19))) == .failure(.tooShortForIP(count: 19)))
        let dnsReply = CapturedDNSAnswers.all.first { $0.summary.contains("q: A? v4only.test. 1/0/0") }!.bytes
        #expect(try PacketDissector.dissect(Array(dnsReply.prefix(40))).get().dns == .captureKeptTooLittle)
        // A whole datagram on port 53 that is not DNS: the parser's reason.
        let notDNS = PacketBuilder.udp(source: endpoint("10.0.0.1", 5000), destination: endpoint("10.0.0.2", 53), payload: [1, 2, 3])!
        #expect(try PacketDissector.dissect(notDNS).get().dns == .notDNS(reason: "shorter than the 12-byte header"))
        #expect(PacketDissector.dissect([0x50, 0, 0]) == .failure(.notIP(version: 5)))
    }

    /// A router's error as tv now passes it on: the program's 1,428-byte (IPv4) / 1,448-byte
    /// (IPv6) DF datagram 10.77.0.1:40000 → 10.42.3.2:21101, its headers whole and the payload
    /// bytes a router quotes (520 / 1,184), from the router 10.42.1.1 / fd42:1::1.
    static func routerError(v6: Bool) -> [UInt8] {
        let app = PacketEndpoint(PacketAddress(v6 ? "fd77::1" : "10.77.0.1")!, 40000)
        let remote = PacketEndpoint(PacketAddress(v6 ? "fd42:3::2" : "10.42.3.2")!, 21101)
        let datagram = PacketBuilder.udp(source: app, destination: remote, payload: [UInt8](repeating: 0x78, count: 1_400),
                                         dontFragment: true)!
        let quote = Array(datagram.prefix(PacketBuilder.maximumQuote(isIPv6: v6)))
        return PacketBuilder.array(capacity: 2_048) { buffer in
            quote.withUnsafeBytes {
                PacketBuilder.icmpError(into: buffer, action: .pathTooSmall(mtu: 1280), original: $0, originalLength: quote.count,
                                        source: PacketAddress(v6 ? "fd42:1::1" : "10.42.1.1")!) ?? 0
            }
        }
    }

    @Test("fragmentation needed / packet too big: the MTU and the quoted packet's addresses, protocol, ports and lengths, as tshark reads them")
    func icmpErrorQuote() throws {
        let v4 = try PacketDissector.dissect(Self.routerError(v6: false)).get()
        guard case .icmp(let i4)? = v4.transport else { Issue.record("no ICMP"); return }
        #expect(i4.mtu == 1280)
        #expect(i4.quoted == QuotedPacket(source: PacketAddress("10.77.0.1")!, destination: PacketAddress("10.42.3.2")!, protocolNumber: 17,
                                          length: 1_428, sourcePort: 40000, destinationPort: 21101, udpLength: 1_408, bytesQuoted: 548))
        let v6 = try PacketDissector.dissect(Self.routerError(v6: true)).get()
        guard case .icmp(let i6)? = v6.transport else { Issue.record("no ICMPv6"); return }
        #expect(i6.mtu == 1280)
        #expect(i6.quoted == QuotedPacket(source: PacketAddress("fd77::1")!, destination: PacketAddress("fd42:3::2")!, protocolNumber: 17,
                                          length: 1_448, sourcePort: 40000, destinationPort: 21101, udpLength: 1_408, bytesQuoted: 1_232))
        // Not an error: no quote; a port unreachable: a quote and no MTU.
        let echo = try PacketDissector.dissect(CapturedPackets.all.first { $0.summary.contains("ICMP echo request") }!.bytes).get()
        guard case .icmp(let e)? = echo.transport else { Issue.record("no ICMP"); return }
        #expect(e.mtu == nil && e.quoted == nil)
        let refused = try PacketDissector.dissect(UDPErrorQueueTests.portUnreachable4).get()
        guard case .icmp(let r)? = refused.transport else { Issue.record("no ICMP"); return }
        #expect(r.mtu == nil && r.quoted?.udpLength == 28 && r.quoted?.length == 48 && r.quoted?.bytesQuoted == 48)

        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tshark"),
              FileManager.default.isExecutableFile(atPath: "/usr/bin/text2pcap") else {
            Issue.record("tshark and text2pcap are needed (Debian package tshark, in Scripts/packages.sh TEST_PACKAGES)")
            return
        }
        let lines = try Self.tshark([Self.routerError(v6: false), Self.routerError(v6: true)],
                                    fields: ["ip.src", "ip.len", "icmp.mtu", "ipv6.src", "ipv6.plen", "icmpv6.mtu", "udp.srcport", "udp.dstport", "udp.length"])
        #expect(lines == ["10.42.1.1,10.77.0.1|576,1428|1280||||40000|21101|1408",
                          "|||fd42:1::1,fd77::1|1240,1408|1280|40000|21101|1408"])
    }

    @Test("ICMP and ICMPv6 names by type and code")
    func icmpNames() {
        #expect(ICMPNames.name(isV6: false, type: 8, code: 0) == "Echo request")
        #expect(ICMPNames.name(isV6: false, type: 3, code: 4) == "Destination unreachable (fragmentation needed and DF set)")
        #expect(ICMPNames.name(isV6: true, type: 1, code: 4) == "Destination unreachable (port unreachable)")
        #expect(ICMPNames.name(isV6: true, type: 143, code: 0) == "Multicast listener report v2")
        #expect(ICMPNames.name(isV6: false, type: 42, code: 1) == "Type 42 (code 1)")
        #expect(DNSRecordTypeNames.name(28) == "AAAA" && DNSRecordTypeNames.name(999) == "TYPE999")
    }

    /// Writes `packets` as a LINKTYPE_RAW capture with text2pcap and reads `fields` of each with
    /// tshark (IP reassembly off: one line per packet).
    static func tshark(_ packets: [[UInt8]], fields: [String], options: [String] = []) throws -> [String] {
        let dir = NSTemporaryDirectory() + "tv-dissect-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var text = ""
        for bytes in packets {
            for start in stride(from: 0, to: bytes.count, by: 16) {
                text += String(format: "%06x", start) + " "
                    + bytes[start..<min(start + 16, bytes.count)].map { String(format: "%02x", $0) }.joined(separator: " ") + "\n"
            }
        }
        try text.write(toFile: dir + "/in.txt", atomically: true, encoding: .utf8)
        _ = try run(["/usr/bin/text2pcap", "-q", "-l", "101", dir + "/in.txt", dir + "/out.pcap"])
        let out = try run(["/usr/bin/tshark", "-r", dir + "/out.pcap", "-o", "ip.defragment:FALSE", "-o", "ipv6.defragment:FALSE"]
                          + options.flatMap { ["-o", $0] } + [
                           "-T", "fields", "-E", "separator=|"] + fields.flatMap { ["-e", $0] })
        return out.split(separator: "\n").map(String.init)
    }

    static func run(_ arguments: [String]) throws -> String {
        let finished = Child.run(arguments[0], Array(arguments.dropFirst()), environment: ProcessInfo.processInfo.environment, timeout: 120)
        if let failure = finished.startFailure { throw failure }
        return String(decoding: finished.stdout, as: UTF8.self)
    }
}
