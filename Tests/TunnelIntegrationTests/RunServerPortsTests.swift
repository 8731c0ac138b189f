import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `tv run --mode tun --server-ports` in a namespace standing in for the host: a UDP server bound
/// in the ephemeral range (WireGuard's 51820), asked by a client beyond the host's LAN (the
/// origin's 10.205.0.2, reached through the default route). Never the real host's routing.
@Suite("tv run --mode tun --server-ports in namespaces", .serialized, .enabled(if: LabRequirements.met, "needs root, nginx, dnsmasq"))
final class RunServerPortsTests {
    let lab: OriginLab

    init() throws { lab = try OriginLab() }
    deinit { lab.close() }

    /// Starts `tv run ARGS…` in the host stand-in, its output in `log`; waits until it runs.
    func startTV(_ arguments: [String], log: String) throws -> Daemon {
        let daemon = try Daemon(["ip", "netns", "exec", lab.host, TVBinary.path!, "--data-dir", lab.dataDir, "run"] + arguments, log: log)
        for _ in 0..<300 where !daemon.output.contains("tv is running") { usleep(50_000) }
        guard daemon.output.contains("tv is running") else {
            daemon.stop()
            throw LabError("tv run did not come up: \(daemon.output)")
        }
        return daemon
    }

    /// The host stand-in's policy rules in `family`.
    func rules(_ family: String) -> String { Sh.run(["ip", "-n", lab.host, family, "rule"]).out }

    /// Starts a UDP echo on `port` in the host stand-in (0.0.0.0 and ::), waited for.
    func udpServer(_ script: String, port: Int) throws -> Daemon {
        let server = try Daemon(["ip", "netns", "exec", lab.host, "python3", script, String(port)], log: lab.dir + "/udp-\(port).log")
        for _ in 0..<100 where Sh.run(["ip", "netns", "exec", lab.host, "ss", "-ulnH", "sport", "= :\(port)"]).out.split(separator: "\n").count < 2 {
            usleep(50_000)
        }
        return server
    }

    @Test("tun: a UDP server bound in the ephemeral range is reachable from beyond the LAN with --server-ports (bound before tv or after, gone and back: its rule stays all session), and not without; said in the banner and tv status; the rules go with tv")
    func ephemeralUDPServerReachable() throws {
        let host = lab.host
        try Sh.must(["ip", "-n", host, "route", "add", "default", "via", "10.203.0.2"])
        try Sh.must(["ip", "-n", host, "-6", "route", "add", "default", "via", "fd03::2"])
        let rulesBefore = rules("-4") + rules("-6")
        // The stand-in's ephemeral range is the kernel's default: 51820 and 60500 are in it.
        #expect(Sh.run(["ip", "netns", "exec", host, "sysctl", "-n", "net.ipv4.ip_local_port_range"]).out == "32768\t60999\n")
        let server = try lab.script("udp-echo.py", """
            import socket, sys, threading
            def serve(family, address):
                s = socket.socket(family, socket.SOCK_DGRAM)
                if family == socket.AF_INET6: s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                s.bind((address, int(sys.argv[1])))
                while True:
                    d, peer = s.recvfrom(100); s.sendto(d, peer)
            threading.Thread(target=serve, args=(socket.AF_INET6, "::"), daemon=True).start()
            serve(socket.AF_INET, "0.0.0.0")
            """)
        // Connected, as a WireGuard or mosh client is: only the server's own address and port
        // answer it (tv relaying the reply from a socket of its own is not an answer).
        let client = try lab.script("far-udp.py", """
            import socket, sys
            source, target, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
            s = socket.socket(socket.AF_INET6 if ":" in target else socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(3)
            s.bind((source, 0)); s.connect((target, port)); s.send(b"datagram")
            try: print(s.recv(100).decode())
            except OSError as e: print(type(e).__name__)
            """)
        func far(_ target: String, _ port: Int) -> String {
            let source = target.contains(":") ? "fd05::2" : "10.205.0.2"
            return Sh.run(["ip", "netns", "exec", lab.origin, "python3", client, source, target, String(port)], timeout: 20).out
        }
        var wireguard = try udpServer(server, port: 51_820)
        defer { wireguard.stop() }
        #expect(far("10.203.0.1", 51_820) == "datagram\n")

        // Without the option: given no rule (a client's socket looks the same), its replies go
        // into the TUN, and the client hears nothing; the banner names the port and the option.
        let without = try startTV(["--mode", "tun", "--yes"], log: lab.dir + "/tv-without.log")
        #expect(without.output.contains("UDP sockets bound in the ephemeral range (51820) are taken for clients' and given no rule: a server among them (WireGuard, mosh) "
                                        + "is not reachable from beyond the LAN while tv runs; name the servers' ports among them when tv starts to keep them reachable: "
                                        + "--server-ports udp:51820."), "\(without.output)")
        #expect(!rules("-4").contains("sport 51820"), "\(rules("-4"))")
        #expect(far("10.203.0.1", 51_820) == "TimeoutError\n")
        without.stop(signal: SIGINT)
        _ = without.wait(timeout: 10)

        // With it: a rule per family for each range named, made with the session's other rules.
        let tv = try startTV(["--mode", "tun", "--yes", "--server-ports", "udp:51820,udp:60000-61000"], log: lab.dir + "/tv-with.log")
        defer { tv.stop() }
        #expect(tv.output.contains("--server-ports UDP 51820, 60000-61000: what this host sends from these ports leaves through table 29815 for the whole session, "
                                   + "whether or not a server is bound there, unseen by tv; 1001 of them are in the ephemeral range (32768-60999), "
                                   + "so a client's UDP socket the kernel gives one of those ports goes around tv too.")
                && !tv.output.contains("UDP sockets bound in the ephemeral range"), "\(tv.output)")
        for family in ["-4", "-6"] {
            #expect(rules(family).contains("ipproto udp sport 51820 lookup 29815") && rules(family).contains("ipproto udp sport 60000-61000 lookup 29815"), "\(rules(family))")
        }
        #expect(far("10.203.0.1", 51_820) == "datagram\n")
        #expect(far("fd03::1", 51_820) == "datagram\n")
        let status = Sh.run([TVBinary.path!, "--data-dir", lab.dataDir, "status"]).out
        #expect(status.contains("routing: what this host sends from its servers' ports (UDP 51820, 60000-61000) leaves through table 29815 too")
                && status.contains("\n  routing: --server-ports UDP 51820, 60000-61000: what this host sends from these ports leaves through table 29815 for the whole session")
                && !status.contains("ephemeral range (51820)"), "\(status)")
        // A server that starts in a named range after tv (mosh) is answered at once.
        let mosh = try udpServer(server, port: 60_500)
        defer { mosh.stop() }
        #expect(far("10.203.0.1", 60_500) == "datagram\n")
        // WireGuard stopped: its rule outlives the readings of the sockets (every 2 s), so it is
        // answered again as soon as it is back.
        wireguard.stop()
        usleep(5_000_000)
        #expect(rules("-4").contains("ipproto udp sport 51820 lookup 29815"), "\(rules("-4"))")
        wireguard = try udpServer(server, port: 51_820)
        #expect(far("10.203.0.1", 51_820) == "datagram\n")
        tv.stop(signal: SIGINT)
        _ = tv.wait(timeout: 10)
        #expect(rules("-4") + rules("-6") == rulesBefore)
    }
}
