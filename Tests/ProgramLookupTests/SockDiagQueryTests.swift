import FlowTerms
import Testing
@testable import ProgramLookup
#if canImport(Glibc)
import Glibc
#endif

@Suite("SockDiagQuery: a flow's socket asked by its four-tuple where its server is its peer, else by a dump")
struct SockDiagQueryTests {
    static let app: (family: UInt8, bytes: [UInt8]) = (2, [10, 0, 0, 2])
    static let remote: (family: UInt8, bytes: [UInt8]) = (2, [93, 184, 216, 34])
    static let remote6: (family: UInt8, bytes: [UInt8]) = (10, [0x20, 0x01, 0x0D, 0xB8] + [UInt8](repeating: 0, count: 11) + [1])

    @Test("TCP with a known server of the client's family, where peers are servers: exact; otherwise a dump")
    func plan() {
        #expect(SockDiagQuery.plan(transport: .tcp, client: Self.app, clientPort: 54_321, server: Self.remote, serverPort: 443,
                                   peersAreServers: true)
                == .exact(family: 2, source: [10, 0, 0, 2], sourcePort: 54_321, destination: [93, 184, 216, 34], destinationPort: 443))
        // The explicit proxy's client talks to tv's listener, not to the server.
        #expect(SockDiagQuery.plan(transport: .tcp, client: Self.app, clientPort: 54_321, server: Self.remote, serverPort: 443,
                                   peersAreServers: false) == .dump)
        // A UDP socket may be unconnected: its peer is not a key.
        #expect(SockDiagQuery.plan(transport: .udp, client: Self.app, clientPort: 5353, server: Self.remote, serverPort: 53,
                                   peersAreServers: true) == .dump)
        #expect(SockDiagQuery.plan(transport: .tcp, client: Self.app, clientPort: 54_321, server: nil, serverPort: 443,
                                   peersAreServers: true) == .dump)
        #expect(SockDiagQuery.plan(transport: .tcp, client: Self.app, clientPort: 54_321, server: Self.remote6, serverPort: 443,
                                   peersAreServers: true) == .dump)
        #expect(SockDiagQuery.plan(transport: .tcp, client: Self.app, clientPort: 54_321, server: Self.remote, serverPort: 0,
                                   peersAreServers: true) == .dump)
        #expect(SockDiagQuery.plan(transport: .tcp, client: Self.app, clientPort: 0, server: Self.remote, serverPort: 443,
                                   peersAreServers: true) == .dump)
    }

    @Test("clients of tv's listener (explicit proxy, SOCKS5, reverse mode): exact to the listener when it is one address of the client's family, to the client's own address when it is bound to every address; none: a dump")
    func planToTheListener() {
        let loopback: (family: UInt8, bytes: [UInt8]) = (2, [127, 0, 0, 1])
        let loopback6: (family: UInt8, bytes: [UInt8]) = (10, [UInt8](repeating: 0, count: 15) + [1])
        let listener: (family: UInt8, bytes: [UInt8], port: UInt16) = (2, [127, 0, 0, 1], 8080)
        #expect(SockDiagQuery.plan(transport: .tcp, client: loopback, clientPort: 54_321, server: Self.remote, serverPort: 443,
                                   peersAreServers: false, listener: listener)
                == .exact(family: 2, source: [127, 0, 0, 1], sourcePort: 54_321, destination: [127, 0, 0, 1], destinationPort: 8080))
        #expect(SockDiagQuery.plan(transport: .tcp, client: loopback6, clientPort: 54_321, server: nil, serverPort: 0,
                                   peersAreServers: false, listener: (10, loopback6.bytes, 8080))
                == .exact(family: 10, source: loopback6.bytes, sourcePort: 54_321, destination: loopback6.bytes, destinationPort: 8080))
        // Bound to every address: the client's own address is the peer (what a local client
        // reached, unless it bound another), in either family (`::` takes IPv4 clients too).
        let lan: (family: UInt8, bytes: [UInt8]) = (2, [192, 168, 1, 5])
        #expect(SockDiagQuery.plan(transport: .tcp, client: loopback, clientPort: 54_321, server: Self.remote, serverPort: 443,
                                   peersAreServers: false, listener: (2, [0, 0, 0, 0], 8080))
                == .exact(family: 2, source: [127, 0, 0, 1], sourcePort: 54_321, destination: [127, 0, 0, 1], destinationPort: 8080))
        #expect(SockDiagQuery.plan(transport: .tcp, client: lan, clientPort: 40_000, server: nil, serverPort: 0,
                                   peersAreServers: false, listener: (10, [UInt8](repeating: 0, count: 16), 8080))
                == .exact(family: 2, source: [192, 168, 1, 5], sourcePort: 40_000, destination: [192, 168, 1, 5], destinationPort: 8080))
        #expect(SockDiagQuery.plan(transport: .tcp, client: loopback6, clientPort: 54_321, server: nil, serverPort: 0,
                                   peersAreServers: false, listener: (10, [UInt8](repeating: 0, count: 16), 8080))
                == .exact(family: 10, source: loopback6.bytes, sourcePort: 54_321, destination: loopback6.bytes, destinationPort: 8080))
        #expect(SockDiagQuery.plan(transport: .tcp, client: loopback, clientPort: 54_321, server: nil, serverPort: 0,
                                   peersAreServers: false, listener: (2, [0, 0, 0, 0], 0)) == .dump)
        // No listener known, another family, no port, UDP, no client port: a dump.
        #expect(SockDiagQuery.plan(transport: .tcp, client: loopback, clientPort: 54_321, server: Self.remote, serverPort: 443,
                                   peersAreServers: false, listener: nil) == .dump)
        #expect(SockDiagQuery.plan(transport: .tcp, client: loopback6, clientPort: 54_321, server: nil, serverPort: 0,
                                   peersAreServers: false, listener: listener) == .dump)
        #expect(SockDiagQuery.plan(transport: .tcp, client: loopback, clientPort: 54_321, server: nil, serverPort: 0,
                                   peersAreServers: false, listener: (2, [127, 0, 0, 1], 0)) == .dump)
        #expect(SockDiagQuery.plan(transport: .udp, client: loopback, clientPort: 54_321, server: nil, serverPort: 0,
                                   peersAreServers: false, listener: listener) == .dump)
        #expect(SockDiagQuery.plan(transport: .tcp, client: loopback, clientPort: 0, server: nil, serverPort: 0,
                                   peersAreServers: false, listener: listener) == .dump)
        // Where peers are servers, the server is the peer and the listener plays no part.
        #expect(SockDiagQuery.plan(transport: .tcp, client: Self.app, clientPort: 54_321, server: Self.remote, serverPort: 443,
                                   peersAreServers: true, listener: listener)
                == .exact(family: 2, source: [10, 0, 0, 2], sourcePort: 54_321, destination: [93, 184, 216, 34], destinationPort: 443))
        #expect(SockDiagQuery.plan(transport: .tcp, client: Self.app, clientPort: 54_321, server: nil, serverPort: 443,
                                   peersAreServers: true, listener: listener) == .dump)
    }

    @Test("the exact answer: a connection is the answer, a listener never; ENOENT or only a listener is gone only where a miss is conclusive; any other failure asks by a dump")
    func outcome() {
        let socket = DiagSocket(family: 2, state: 1, source: [10, 0, 0, 2], sourcePort: 54_321, destination: [93, 184, 216, 34],
                                destinationPort: 443, uid: 0, inode: 77)
        #expect(SockDiagQuery.outcome(.success([socket]), missIsConclusive: false) == .sockets([socket]))
        #expect(SockDiagQuery.outcome(.success([socket]), missIsConclusive: true) == .sockets([socket]))
        #expect(SockDiagQuery.outcome(.failure(.kernel(errno: ENOENT)), missIsConclusive: true) == .sockets([]))
        #expect(SockDiagQuery.outcome(.failure(.kernel(errno: ENOENT)), missIsConclusive: false) == .dump)
        #expect(SockDiagQuery.outcome(.failure(.kernel(errno: EINVAL)), missIsConclusive: true) == .dump)
        #expect(SockDiagQuery.outcome(.failure(.kernel(errno: EAGAIN)), missIsConclusive: true) == .dump)
        #expect(SockDiagQuery.outcome(.failure(.malformed(offset: 0)), missIsConclusive: true) == .dump)
        #expect(SockDiagQuery.outcome(.success([]), missIsConclusive: true) == .dump)
        // A listener the kernel's lookup fell back to is never the client.
        var listener = socket
        listener.state = 10
        #expect(SockDiagQuery.outcome(.success([listener]), missIsConclusive: true) == .sockets([]))
        #expect(SockDiagQuery.outcome(.success([listener]), missIsConclusive: false) == .dump)
        #expect(SockDiagQuery.outcome(.success([listener, socket]), missIsConclusive: false) == .sockets([socket]))
    }

    @Test("a miss is conclusive where the four-tuple asked is the socket's own: local clients, servers as peers, a listener on one address; not a wildcard listener's guess")
    func missIsConclusive() {
        let one: (family: UInt8, bytes: [UInt8], port: UInt16) = (2, [127, 0, 0, 1], 8080)
        let any4: (family: UInt8, bytes: [UInt8], port: UInt16) = (2, [0, 0, 0, 0], 8080)
        let any6: (family: UInt8, bytes: [UInt8], port: UInt16) = (10, Array(repeating: 0, count: 16), 8080)
        #expect(SockDiagQuery.missIsConclusive(clientsAreLocal: true, peersAreServers: false, listener: nil))
        #expect(SockDiagQuery.missIsConclusive(clientsAreLocal: false, peersAreServers: true, listener: nil))
        #expect(SockDiagQuery.missIsConclusive(clientsAreLocal: false, peersAreServers: false, listener: one))
        #expect(!SockDiagQuery.missIsConclusive(clientsAreLocal: false, peersAreServers: false, listener: any4))
        #expect(!SockDiagQuery.missIsConclusive(clientsAreLocal: false, peersAreServers: false, listener: any6))
        #expect(!SockDiagQuery.missIsConclusive(clientsAreLocal: false, peersAreServers: false, listener: nil))
    }
}
