import Testing
@testable import Tunnel

/// `tv run --mode tun --server-ports` (`DeclaredServerPorts`): what it reads, what it refuses
/// (each refusal's whole sentence), and what it says.
@Suite struct DeclaredServerPortsTests {
    @Test("read: single ports and ranges of both protocols, comma-separated and repeated, any case, spaces around entries; sorted, overlapping and adjacent ranges merged")
    func reads() throws {
        let ports = try DeclaredServerPorts(parsing: ["udp:51820,udp:60000-61000,tcp:8443"])
        #expect(ports.tcp == [8443...8443])
        #expect(ports.udp == [51820...51820, 60000...61000])
        #expect(ports.summary == "TCP 8443; UDP 51820, 60000-61000")
        let merged = try DeclaredServerPorts(parsing: ["UDP:54, tcp:22", "udp:53", "udp:100-200,udp:150-300,udp:301", "tcp:65535,tcp:65534", "tcp:9-9"])
        #expect(merged.tcp == [9...9, 22...22, 65_534...65_535])
        #expect(merged.udp == [53...54, 100...301])
        #expect(try DeclaredServerPorts(parsing: []) == DeclaredServerPorts())
        #expect(DeclaredServerPorts().summary == nil && DeclaredServerPorts().isEmpty)
        #expect(DeclaredServerPorts.merged([1...5, 65_535...65_535, 3...10, 11...11, 65_000...65_534]) == [1...11, 65_000...65_535])
        // 64 ranges of one protocol are taken; 65 are not.
        let sixtyFour = (0..<64).map { "udp:\(1_000 + 2 * $0)" }.joined(separator: ",")
        #expect(try DeclaredServerPorts(parsing: [sixtyFour]).udp.count == 64)
    }

    static let refusals: [(String, String)] = [
        ("", "--server-ports '' has an empty entry; write PROTO:PORT or PROTO:FIRST-LAST, separated by single commas (udp:51820,tcp:8443)."),
        ("udp:51820,", "--server-ports 'udp:51820,' has an empty entry; write PROTO:PORT or PROTO:FIRST-LAST, separated by single commas (udp:51820,tcp:8443)."),
        ("51820", "--server-ports 51820 names no protocol; write udp:51820 or tcp:51820."),
        ("60000-61000", "--server-ports 60000-61000 names no protocol; write udp:60000-61000 or tcp:60000-61000."),
        ("51820/udp", "--server-ports 51820/udp names no protocol; write udp:51820."),
        ("wireguard", "--server-ports wireguard names no protocol; write PROTO:PORT, PROTO tcp or udp (udp:51820)."),
        ("sctp:9899", "--server-ports sctp:9899: the protocol is tcp or udp; write udp:PORT or tcp:PORT (udp:51820)."),
        ("sctp:x", "--server-ports sctp:x: the protocol is tcp or udp; write udp:PORT or tcp:PORT (udp:51820)."),
        ("udp:0", "--server-ports udp:0: port 0 is no server's port; name ports from 1 to 65535."),
        ("tcp:0-100", "--server-ports tcp:0-100: port 0 is no server's port; name ports from 1 to 65535."),
        ("udp:61000-60000", "--server-ports udp:61000-60000: a range goes from its lower port to its higher; write udp:60000-61000."),
        ("UDP:61000-60000", "--server-ports UDP:61000-60000: a range goes from its lower port to its higher; write udp:60000-61000."),
        ("udp:70000", "--server-ports udp:70000: a port is a whole number from 1 to 65535, and a range two of them joined by a dash (udp:60000-61000)."),
        ("udp:", "--server-ports udp:: a port is a whole number from 1 to 65535, and a range two of them joined by a dash (udp:60000-61000)."),
        ("udp:+5", "--server-ports udp:+5: a port is a whole number from 1 to 65535, and a range two of them joined by a dash (udp:60000-61000)."),
        ("udp:1-2-3", "--server-ports udp:1-2-3: a port is a whole number from 1 to 65535, and a range two of them joined by a dash (udp:60000-61000)."),
        ("udp:60000-", "--server-ports udp:60000-: a port is a whole number from 1 to 65535, and a range two of them joined by a dash (udp:60000-61000)."),
        ("udp:\u{1B}[2J", "--server-ports udp:\\x1b[2J: a port is a whole number from 1 to 65535, and a range two of them joined by a dash (udp:60000-61000)."),
    ]

    @Test("refused, each with one sentence saying what was wrong and what to write (exit 2)", arguments: refusals)
    func refuses(_ text: String, _ said: String) {
        do throws(ServerPortsError) {
            _ = try DeclaredServerPorts(parsing: ["tcp:22", text])
            Issue.record("'\(text)' was taken")
        } catch {
            #expect(error.message == said)
            #expect(error.exitCode == 2)
        }
    }

    @Test("more than 64 ranges of one protocol, once merged, are refused")
    func tooMany() throws {
        let many = (0..<65).map { "udp:\(1_000 + 2 * $0)" }.joined(separator: ",")
        #expect(throws: ServerPortsError.tooManyRanges(protocolName: "UDP", count: 65)) { try DeclaredServerPorts(parsing: [many]) }
        #expect(ServerPortsError.tooManyRanges(protocolName: "UDP", count: 65).message
                == "--server-ports names 65 UDP port ranges, and at most 64 per protocol get rules; join neighbouring ports into ranges (udp:60000-61000).")
        // Adjacent ports merge first: 65 entries making one range are one rule.
        let adjacent = (0..<65).map { "udp:\(1_000 + $0)" }.joined(separator: ",")
        #expect(try DeclaredServerPorts(parsing: [adjacent]).udp == [1_000...1_064])
    }

    @Test("the sentence: where what is sent from the ports goes, for how long, and what a UDP range in the ephemeral range takes from clients")
    func sentence() throws {
        let ports = try DeclaredServerPorts(parsing: ["udp:51820,udp:60000-61000,tcp:8443"])
        #expect(ports.udpPortsInRange(32_768...60_999) == 1_001)
        #expect(ports.sentence(copyTable: 29_815, ephemeral: 32_768...60_999)
                == "--server-ports TCP 8443; UDP 51820, 60000-61000: what this host sends from these ports leaves through table 29815 for the whole session, "
                + "whether or not a server is bound there, unseen by tv; 1001 of them are in the ephemeral range (32768-60999), "
                + "so a client's UDP socket the kernel gives one of those ports goes around tv too")
        #expect(try DeclaredServerPorts(parsing: ["udp:51820"]).sentence(copyTable: 29_815, ephemeral: 32_768...60_999)
                == "--server-ports UDP 51820: what this host sends from these ports leaves through table 29815 for the whole session, "
                + "whether or not a server is bound there, unseen by tv; 1 of them is in the ephemeral range (32768-60999), "
                + "so a client's UDP socket the kernel gives that port goes around tv too")
        // TCP ports, and UDP ports below the range, take nothing from clients' unconnected sockets.
        #expect(try DeclaredServerPorts(parsing: ["tcp:40000,udp:1194"]).sentence(copyTable: 29_815, ephemeral: 32_768...60_999)
                == "--server-ports TCP 40000; UDP 1194: what this host sends from these ports leaves through table 29815 for the whole session, "
                + "whether or not a server is bound there, unseen by tv")
        #expect(DeclaredServerPorts().sentence(copyTable: 29_815, ephemeral: 32_768...60_999) == nil)
    }
}
