import FlowTerms
import Testing
@testable import ProgramLookup

@Suite("which socket is the client's, and whose: ProgramMatch.decide, /proc texts, addresses")
struct ProgramMatchTests {
    static let lo: [UInt8] = [127, 0, 0, 1]
    static let any4: [UInt8] = [0, 0, 0, 0]
    static func socket(_ src: [UInt8], _ sport: UInt16, to dst: [UInt8] = lo, _ dport: UInt16 = 8080, inode: UInt32, uid: UInt32 = 1000) -> DiagSocket {
        DiagSocket(family: 2, state: 1, source: src, sourcePort: sport, destination: dst, destinationPort: dport, uid: uid, inode: inode)
    }
    static func decide(_ sockets: [DiagSocket], _ holders: [UInt64: SocketHolder], server: ([UInt8], UInt16)? = nil,
                       unreadable: Bool = false) -> ProgramMatch.Decision {
        ProgramMatch.decide(sockets: sockets, address: lo, port: 54_321, server: server.map { ($0.0, $0.1) },
                            holders: holders, ownPID: 100, unreadable: unreadable)
    }

    @Test("one socket with the client's address and port, held by pid 4242 fd 3: that one")
    func oneOwner() {
        let s = Self.socket(Self.lo, 54_321, inode: 77)
        #expect(Self.decide([s], [77: SocketHolder(pid: 4242, fd: 3)]) == .owner(s, SocketHolder(pid: 4242, fd: 3)))
    }

    @Test("nothing with that address and port: no socket (another machine, or finished); a different port or address does not match")
    func noSocket() {
        #expect(Self.decide([], [:]) == .noSocket)
        #expect(Self.decide([Self.socket(Self.lo, 54_322, inode: 1), Self.socket([10, 0, 0, 1], 54_321, inode: 2)], [1: SocketHolder(pid: 5, fd: 3), 2: SocketHolder(pid: 6, fd: 3)]) == .noSocket)
    }

    @Test("inode 0 (TIME_WAIT or closed): socket gone; a live socket nobody holds: process gone, or not visible when some processes were unreadable")
    func goneOrHidden() {
        #expect(Self.decide([Self.socket(Self.lo, 54_321, inode: 0)], [:]) == .unknown(.socketGone))
        #expect(Self.decide([Self.socket(Self.lo, 54_321, inode: 9)], [:]) == .unknown(.processGone))
        #expect(Self.decide([Self.socket(Self.lo, 54_321, inode: 9)], [:], unreadable: true) == .unknown(.notVisible))
    }

    @Test("tv's own socket on the same local port is never the client's; an unconnected UDP socket on 0.0.0.0 matches, an exact address wins over it")
    func ownAndWildcard() {
        let mine = Self.socket(Self.lo, 54_321, to: [192, 0, 2, 1], 443, inode: 5)
        let theirs = Self.socket(Self.lo, 54_321, inode: 6)
        let holders: [UInt64: SocketHolder] = [5: SocketHolder(pid: 100, fd: 9), 6: SocketHolder(pid: 4242, fd: 3)]
        #expect(Self.decide([mine, theirs], holders) == .owner(theirs, SocketHolder(pid: 4242, fd: 3)))
        #expect(Self.decide([mine], holders) == .unknown(.socketGone))
        let wild = Self.socket(Self.any4, 54_321, to: Self.any4, 0, inode: 7)
        #expect(Self.decide([wild], [7: SocketHolder(pid: 31, fd: 4)]) == .owner(wild, SocketHolder(pid: 31, fd: 4)))
        #expect(Self.decide([wild, theirs], [7: SocketHolder(pid: 31, fd: 4), 6: SocketHolder(pid: 4242, fd: 3)]) == .owner(theirs, SocketHolder(pid: 4242, fd: 3)))
    }

    @Test("with the client's peer known, a socket on its port connected elsewhere is another program's, never the flow's (a trial's curl was named after sslsplit)")
    func peerMustMatch() {
        let other = Self.socket(Self.lo, 54_321, to: Self.lo, 20_302, inode: 3)
        let client = Self.socket(Self.lo, 54_321, to: Self.lo, 8080, inode: 4)
        let holders: [UInt64: SocketHolder] = [3: SocketHolder(pid: 11, fd: 3), 4: SocketHolder(pid: 12, fd: 5)]
        func decide(_ sockets: [DiagSocket], _ peer: ProgramMatch.Peer?) -> ProgramMatch.Decision {
            ProgramMatch.decide(sockets: sockets, address: Self.lo, port: 54_321, server: nil, holders: holders, ownPID: 100,
                                unreadable: false, peer: peer)
        }
        let listener = ProgramMatch.Peer(address: Self.lo, port: 8080)
        #expect(decide([other], listener) == .unknown(.socketGone))
        #expect(decide([other], nil) == .owner(other, SocketHolder(pid: 11, fd: 3)))
        #expect(decide([other, client], listener) == .owner(client, SocketHolder(pid: 12, fd: 5)))
        // A wildcard listener: any local address, its port.
        #expect(decide([other, client], ProgramMatch.Peer(address: nil, port: 8080)) == .owner(client, SocketHolder(pid: 12, fd: 5)))
        // An IPv6 socket speaking IPv4 is connected to the listener's mapped address.
        let mapped: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 127, 0, 0, 1]
        let six = DiagSocket(family: 10, state: 1, source: mapped, sourcePort: 54_321, destination: mapped, destinationPort: 8080, uid: 0, inode: 4)
        #expect(ProgramMatch.decide(sockets: [six], address: mapped, port: 54_321, server: nil, holders: holders, ownPID: 100,
                                    unreadable: false, peer: listener) == .owner(six, SocketHolder(pid: 12, fd: 5)))
        // An unconnected UDP socket has no peer to compare.
        let wild = Self.socket(Self.any4, 54_321, to: Self.any4, 0, inode: 3)
        #expect(decide([wild], listener) == .owner(wild, SocketHolder(pid: 11, fd: 3)))
    }

    @Test("two processes' sockets on the same address and port: the one connected to the flow's server, else ambiguous")
    func twoProcesses() {
        let a = Self.socket(Self.lo, 54_321, to: [192, 0, 2, 1], 443, inode: 1)
        let b = Self.socket(Self.lo, 54_321, to: [192, 0, 2, 2], 443, inode: 2)
        let holders: [UInt64: SocketHolder] = [1: SocketHolder(pid: 10, fd: 3), 2: SocketHolder(pid: 20, fd: 3)]
        #expect(Self.decide([a, b], holders, server: ([192, 0, 2, 2], 443)) == .owner(b, SocketHolder(pid: 20, fd: 3)))
        #expect(Self.decide([a, b], holders) == .unknown(.ambiguous))
        #expect(Self.decide([a, b], holders, server: ([192, 0, 2, 3], 443)) == .unknown(.ambiguous))
    }

    @Test("a live socket decide could name: the client's address or the wildcard, its port, inode not 0; a TIME_WAIT socket (inode 0), another port or another address is none, so the IPv6 dump is asked")
    func liveSocket() {
        #expect(ProgramMatch.holdsLiveSocket([Self.socket(Self.lo, 54_321, inode: 77)], address: Self.lo, port: 54_321))
        #expect(ProgramMatch.holdsLiveSocket([Self.socket(Self.any4, 54_321, to: Self.any4, 0, inode: 7)], address: Self.lo, port: 54_321))
        #expect(!ProgramMatch.holdsLiveSocket([], address: Self.lo, port: 54_321))
        // A connection to another server that shares the ephemeral port, in TIME_WAIT.
        #expect(!ProgramMatch.holdsLiveSocket([Self.socket(Self.lo, 54_321, to: [127, 0, 0, 1], 443, inode: 0)], address: Self.lo, port: 54_321))
        #expect(!ProgramMatch.holdsLiveSocket([Self.socket(Self.lo, 54_322, inode: 5), Self.socket([10, 0, 0, 1], 54_321, inode: 6)],
                                              address: Self.lo, port: 54_321))
        let mapped: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 127, 0, 0, 1]
        let six = DiagSocket(family: 10, state: 1, source: mapped, sourcePort: 54_321, destination: mapped, destinationPort: 8080, uid: 0, inode: 9)
        #expect(ProgramMatch.holdsLiveSocket([six], address: mapped, port: 54_321))
        #expect(!ProgramMatch.holdsLiveSocket([six], address: Self.lo, port: 54_321))
    }

    @Test("/proc texts as read from a real python3 (readlink of /proc/self/fd/*, /proc/self/comm)")
    func procTexts() {
        #expect(ProcFiles.socketInode(link: "socket:[4522727]") == 4_522_727)
        #expect(ProcFiles.socketInode(link: "pipe:[4522580]") == nil)
        #expect(ProcFiles.socketInode(link: "/dev/null") == nil)
        #expect(ProcFiles.socketInode(link: "socket:[]") == nil)
        #expect(ProcFiles.socketInode(link: "socket:[12x]") == nil)
        #expect(ProcFiles.command(comm: "python3\n") == "python3")
        #expect(ProcFiles.command(comm: "\n") == nil)
        #expect(ProcFiles.pid(entry: "1183") == 1183 && ProcFiles.pid(entry: "self") == nil && ProcFiles.pid(entry: "thread-self") == nil)
    }

    @Test("client addresses: IPv4, IPv6, an IPv4-mapped IPv6 address is the IPv4 socket's, a zone is dropped, a name is none")
    func addresses() {
        #expect(ProgramLookupRequest.addressBytes("127.0.0.1")! == (2, [127, 0, 0, 1]))
        #expect(ProgramLookupRequest.addressBytes("::ffff:127.0.0.1")! == (2, [127, 0, 0, 1]))
        #expect(ProgramLookupRequest.addressBytes("::1")! == (10, [UInt8](repeating: 0, count: 15) + [1]))
        #expect(ProgramLookupRequest.addressBytes("fe80::1%eth0")! == (10, [0xFE, 0x80] + [UInt8](repeating: 0, count: 13) + [1]))
        #expect(ProgramLookupRequest.addressBytes("localhost") == nil)
    }
}
