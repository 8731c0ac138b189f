import Wire
import Foundation
import Proxy
import Testing
@testable import Tunnel
#if canImport(Glibc)
import Glibc
#endif

/// The engine in this process (counters readable), its namespace made by `ExecNamespace`;
/// packets are sent *out* of the TUN interface with an AF_PACKET socket from inside, so the
/// engine reads them exactly as it reads an app's.
@Suite("TunnelEngine: malformed packets written into the TUN are counted and dropped", .serialized,
       .enabled(if: LabRequirements.met, "needs root and /dev/net/tun"))
struct MalformedPacketTests {
    static func hexString(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// A valid IPv4 header (20 bytes) for `payload` with `protocolNumber`, checksummed.
    static func ipv4(_ protocolNumber: UInt8, _ payload: [UInt8], flagsOffset: UInt16 = 0, id: UInt16 = 7) -> [UInt8] {
        var b: [UInt8] = [0x45, 0, UInt8((20 + payload.count) >> 8), UInt8((20 + payload.count) & 0xff), UInt8(id >> 8), UInt8(id & 0xff),
                          UInt8(flagsOffset >> 8), UInt8(flagsOffset & 0xff), 64, protocolNumber, 0, 0, 10, 77, 0, 1, 10, 203, 0, 2]
        let sum = InternetChecksum.finish(InternetChecksum.sum(b))
        b[10] = UInt8(sum >> 8); b[11] = UInt8(sum & 0xff)
        return b + payload
    }

    /// An IPv6 packet (hop limit 255) carrying an ICMPv6 message of `type` with 4 bytes after its
    /// checksum, checksummed over the pseudo-header (RFC 4443 §2.3).
    static func icmpv6(_ type: UInt8, from: String, to: String) -> [UInt8] {
        let source = PacketAddress(from)!, destination = PacketAddress(to)!
        var message: [UInt8] = [type, 0, 0, 0, 0, 0, 0, 0]
        let sum = InternetChecksum.finish(InternetChecksum.sum(message, initial: InternetChecksum.pseudoHeaderSum(
            source: source, destination: destination, protocolNumber: IPProtocolNumber.icmpv6, length: message.count)))
        message[2] = UInt8(sum >> 8); message[3] = UInt8(sum & 0xff)
        return [0x60, 0, 0, 0, 0, UInt8(message.count), IPProtocolNumber.icmpv6, 255] + source.bytes + destination.bytes + message
    }

    /// The engine in this process over a fresh `ExecNamespace`, with a proxy that does not
    /// listen and no resolver (DNS gets SERVFAIL, TCP to the DNS address a reset, at once).
    struct EngineLab {
        let resolv: String
        let namespace: ExecNamespace
        let proxy: ProxyServer
        let engine: TunnelEngine

        init(name: String, offload: Bool) throws {
            resolv = NSTemporaryDirectory() + "tv-\(name)-\(getpid()).resolv.conf"
            try "nameserver 10.77.0.53\n".write(toFile: resolv, atomically: true, encoding: .utf8)
            namespace = try ExecNamespace(plan: TunnelAddressPlan(), resolvConfPath: resolv, offloadWanted: offload)
            var proxyConfiguration = ProxyConfiguration()
            proxyConfiguration.listens = false
            proxyConfiguration.workers = 1
            proxy = ProxyServer(configuration: proxyConfiguration)
            try proxy.start()
            var configuration = TunnelEngineConfiguration(plan: namespace.plan, listener4: namespace.listeners.v4, listener6: namespace.listeners.v6)
            configuration.resolvers = []
            engine = TunnelEngine(configuration: configuration, tunFD: namespace.tunFD, offload: namespace.tunOffload, proxy: proxy, sink: nil, dnsObserver: nil)
            try engine.start()
        }

        func close() {
            engine.stop()
            proxy.stop()
            namespace.close()
            try? FileManager.default.removeItem(atPath: resolv)
        }
    }

    /// Both ways the engine's TUN can be opened: with the virtio-net header and checksum/TSO
    /// offload (the default), and plain (what the engine falls back to when the kernel refuses).
    @Test("truncated headers, bad lengths, bad checksums, unknown protocols, fragment overlaps, long IPv6 chains",
          arguments: [true, false])
    func malformed(offload: Bool) throws {
        let lab = try EngineLab(name: "malformed", offload: offload)
        defer { lab.close() }
        let namespace = lab.namespace, engine = lab.engine
        // This kernel takes IFF_VNET_HDR and checksum/TSO offload: the engine runs with it.
        #expect(namespace.tunOffload == (offload ? TUNOffload(headerSize: 12, offloads: TUNDevice.wantedOffloads) : .off),
                "\(namespace.tunOffload.summary)")
        #expect(engine.counters.snapshot["tunOffloads"] == (offload ? 7 : 0))

        let udp = PacketBuilder.udp(source: PacketEndpoint(PacketAddress("10.77.0.1")!, 5000), destination: PacketEndpoint(PacketAddress("10.203.0.2")!, 7007),
                                    payload: [UInt8](repeating: 0x61, count: 64))!
        let tcpACK = PacketBuilder.array { PacketBuilder.tcp(into: $0, source: PacketEndpoint(PacketAddress("10.77.0.1")!, 5001),
                                                            destination: PacketEndpoint(PacketAddress("10.203.0.2")!, 80),
                                                            sequence: 1, acknowledgment: 1, flags: TCPFlags.ack, window: 100) }
        var cases: [(String, [UInt8], UInt16)] = []   // (what, bytes, ethertype)
        cases.append(("truncated", Array(tcpACK.prefix(12)), 0x0800))
        var b = tcpACK; b[0] = 0x55
        cases.append(("bad version", b, 0x0800))
        b = tcpACK; b[0] = 0x44
        cases.append(("IHL 16", b, 0x0800))
        b = tcpACK; b[3] = 200
        cases.append(("total length past the end", b, 0x0800))
        b = tcpACK; b[8] = 1
        cases.append(("IPv4 header checksum", b, 0x0800))
        b = tcpACK; b[36] ^= 0x55
        cases.append(("TCP checksum", b, 0x0800))
        b = udp; b[25] = 200
        cases.append(("UDP length", b, 0x0800))
        b = udp; b[40] ^= 1
        cases.append(("UDP checksum", b, 0x0800))
        cases.append(("GRE", Self.ipv4(47, [0, 0, 8, 0]), 0x0800))
        cases.append(("fragment 0..<16", Self.ipv4(17, [UInt8](repeating: 1, count: 16), flagsOffset: 0x2000), 0x0800))
        cases.append(("fragment 8..<24 overlaps", Self.ipv4(17, [UInt8](repeating: 2, count: 16), flagsOffset: 0x2001), 0x0800))
        var chain = [UInt8](repeating: 0, count: 40 + 9 * 8)
        chain[0] = 0x60; chain[5] = 72; chain[6] = 0
        chain.replaceSubrange(8..<24, with: PacketAddress("fd77::1")!.bytes)
        chain.replaceSubrange(24..<40, with: PacketAddress("fd03::2")!.bytes)
        cases.append(("nine hop-by-hop headers", chain, 0x86dd))
        cases.append(("TCP ACK for no connection", tcpACK, 0x0800))
        // The kernel's own ICMPv6 (an MLDv2 report, a neighbour solicitation) against a
        // program's (an echo request): link control is not counted as a program's (a trial).
        cases.append(("MLDv2 report", Self.icmpv6(143, from: "fe80::1", to: "ff02::16"), 0x86dd))
        cases.append(("neighbour solicitation", Self.icmpv6(135, from: "fe80::1", to: "ff02::1:ff00:2"), 0x86dd))
        cases.append(("echo request", Self.icmpv6(128, from: "fd77::1", to: "fd03::2"), 0x86dd))
        // The same ACK (another port) as this host's stack hands it over with checksum offload:
        // NEEDS_CSUM, the field holding only the pseudo-header sum. Sent with a virtio-net header
        // (PACKET_VNET_HDR) so the engine reads it CHECKSUM_PARTIAL: not a bad checksum, but a
        // segment for no connection (reset). Without offload on the TUN the kernel finishes the
        // checksum before handing it over: the same outcome.
        var partialACK = PacketBuilder.array { PacketBuilder.tcp(into: $0, source: PacketEndpoint(PacketAddress("10.77.0.1")!, 5002),
                                                                destination: PacketEndpoint(PacketAddress("10.203.0.2")!, 80),
                                                                sequence: 1, acknowledgment: 1, flags: TCPFlags.ack, window: 100) }
        let pseudo = InternetChecksum.pseudoHeaderSum(source: PacketAddress("10.77.0.1")!, destination: PacketAddress("10.203.0.2")!,
                                                      protocolNumber: IPProtocolNumber.tcp, length: 20)
        partialACK[36] = UInt8(pseudo >> 8); partialACK[37] = UInt8(pseudo & 0xff)
        let vnetPartial = VirtioNetHeader(flags: VirtioNetHeader.flagNeedsChecksum, checksumStart: 20, checksumOffset: 16).bytes(size: 10)

        let sender = NSTemporaryDirectory() + "tv-malformed-\(getpid()).py"
        try """
            import socket, sys
            s = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM)
            v = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
            v.setsockopt(263, 15, 1)   # SOL_PACKET, PACKET_VNET_HDR: a virtio_net_hdr before each packet
            for arg in sys.argv[1:]:
                proto, data = arg.split(":")
                if proto.startswith("v"):
                    v.sendto(bytes.fromhex(data), ("tv0", int(proto[1:], 16)))
                else:
                    s.sendto(bytes.fromhex(data), ("tv0", int(proto, 16)))
            # Still alive: a DNS query to the tunnel's address gets an answer (SERVFAIL: no resolver).
            q = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); q.settimeout(5)
            q.sendto(bytes.fromhex("abcd01000001000000000000016103746573740000010001"), ("10.77.0.53", 53))
            reply = q.recv(512)
            print(reply[:2].hex(), reply[3] & 15)
            """.write(toFile: sender, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: sender) }
        let before = engine.counters.dropped
        let outPath = sender + ".out"
        let out = open(outPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer { try? FileManager.default.removeItem(atPath: outPath) }
        let arguments = ["python3", sender] + cases.map { String($0.2, radix: 16) + ":" + Self.hexString($0.1) }
            + ["v800:" + Self.hexString(vnetPartial + partialACK)]
        let environment = ["PATH": (ProcessInfo.processInfo.environment["PATH"] ?? "") + ":/usr/local/bin:/usr/bin:/bin"]
        let pid = try namespace.thread.run { try ChildProcess.spawn(arguments, environment: environment, stdout: out, stderr: out) }
        close(out)
        #expect(ChildProcess.wait(pid) == 0)
        #expect((try? String(contentsOfFile: outPath, encoding: .utf8)) == "abcd 2\n")
        usleep(200_000)
        let after = engine.counters.dropped
        func delta(_ reason: PacketDrop) -> UInt64 { (after[reason] ?? 0) - (before[reason] ?? 0) }
        #expect(delta(.truncated) == 2, "\(after)")          // 12 bytes; total length past the end
        #expect(delta(.badVersion) == 1)
        #expect(delta(.badLength) == 2)                       // IHL; UDP length
        #expect(delta(.badChecksum) == 3)                     // IPv4 header, TCP, UDP
        #expect(delta(.otherProtocol) == 1)
        #expect(delta(.badFragment) == 1)
        #expect(delta(.badExtensionHeaders) == 1)
        #expect(delta(.noConnection) == 2)                    // the plain ACK and the partial-checksum one
        #expect(delta(.linkControl) == 2 && delta(.icmp) == 1, "\(after)")
        #expect(engine.counters.tcpResetsSent.load(ordering: .relaxed) >= 2)
        #expect(engine.stopReason == nil)
    }

    /// A flake of `ExecProgramTests`: a connect failed when ARP gave up (~3 s) while the
    /// program's kernel retransmitted its SYN; the retransmission reached the engine just after
    /// its reset and opened a second flow. Here the connect fails at once (TCP to the DNS
    /// address with no resolver), then the same SYN comes again, then one with another ISN.
    @Test("a SYN retransmitted after its connect failed is refused again, not connected again; another ISN is a new connect")
    func synAfterFailedConnect() throws {
        // No resolver: TCP to the DNS address fails at once, and no network is touched.
        let lab = try EngineLab(name: "synfail", offload: true)
        defer { lab.close() }
        let namespace = lab.namespace, engine = lab.engine

        func syn(isn: UInt32) -> [UInt8] {
            PacketBuilder.array { PacketBuilder.tcp(into: $0, source: PacketEndpoint(PacketAddress("10.77.0.1")!, 5003),
                                                   destination: PacketEndpoint(PacketAddress("10.77.0.53")!, 53),
                                                   sequence: isn, acknowledgment: 0, flags: TCPFlags.syn, window: 64_240) }
        }
        let sender = NSTemporaryDirectory() + "tv-synfail-\(getpid()).py"
        try """
            import socket, sys, time
            s = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM)
            for data in sys.argv[1:]:
                s.sendto(bytes.fromhex(data), ("tv0", 0x0800))
                time.sleep(0.2)
            """.write(toFile: sender, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: sender) }
        let failedBefore = engine.counters.tcpConnectFailed.load(ordering: .relaxed)
        let resetsBefore = engine.counters.tcpResetsSent.load(ordering: .relaxed)
        let before = engine.counters.dropped
        let environment = ["PATH": (ProcessInfo.processInfo.environment["PATH"] ?? "") + ":/usr/local/bin:/usr/bin:/bin"]
        let arguments = ["python3", sender] + [syn(isn: 1000), syn(isn: 1000), syn(isn: 1000), syn(isn: 2000)].map(Self.hexString)
        let pid = try namespace.thread.run { try ChildProcess.spawn(arguments, environment: environment, stdout: -1, stderr: -1) }
        #expect(ChildProcess.wait(pid) == 0)
        usleep(200_000)
        let after = engine.counters.dropped
        // The first SYN and the one with another ISN connect (and fail, each answered with a
        // reset); the two copies between them are answered with a reset each, as the failed flow's.
        #expect(engine.counters.tcpConnectFailed.load(ordering: .relaxed) - failedBefore == 2)
        #expect((after[.synRetransmit] ?? 0) - (before[.synRetransmit] ?? 0) == 2, "\(after)")
        #expect(engine.counters.tcpResetsSent.load(ordering: .relaxed) - resetsBefore == 4)
        #expect(engine.stopReason == nil)
    }
}
