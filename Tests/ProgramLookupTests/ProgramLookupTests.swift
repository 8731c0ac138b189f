import Foundation
import FlowTerms
import Synchronization
import Testing
@testable import ProgramLookup
#if canImport(Glibc)
import Glibc
#endif

/// The lookup against the real kernel: a python3 child holds a connected socket; the lookup
/// names it with its pid, executable and user; once the child is gone the same flow is "not known".
@Suite("ProgramLookup: the real socket table and /proc", .serialized)
struct ProgramLookupTests {
    final class Answers: Sendable {
        let list = Mutex<[(Int64, FlowProgram)]>([])
        let got = DispatchSemaphore(value: 0)
        func add(_ id: Int64, _ p: FlowProgram) {
            list.withLock { $0.append((id, p)) }
            got.signal()
        }
    }

    @Test("a python3 child's TCP client socket (IPv4 and IPv6) is named python3 with its pid, /usr/bin/python3.x and root (one /proc scan; its second connection found among recent owners without another); after it exits, socket gone")
    func realChild() throws {
        for (family, host) in [(AF_INET, "127.0.0.1"), (AF_INET6, "::1")] {
            let listener = socket(family, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(listener) }
            var port: UInt16 = 0
            if family == AF_INET {
                var a = sockaddr_in(); a.sin_family = sa_family_t(AF_INET); a.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
                _ = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
                var len = socklen_t(MemoryLayout<sockaddr_in>.size)
                _ = withUnsafeMutablePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &len) } }
                port = UInt16(bigEndian: a.sin_port)
            } else {
                var a = sockaddr_in6(); a.sin6_family = sa_family_t(AF_INET6); a.sin6_addr = in6addr_loopback
                _ = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) } }
                var len = socklen_t(MemoryLayout<sockaddr_in6>.size)
                _ = withUnsafeMutablePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &len) } }
                port = UInt16(bigEndian: a.sin6_port)
            }
            #expect(listen(listener, 4) == 0)
            let (child, input, out) = try Self.python("import socket,sys; s=socket.create_connection(('\(host)', \(port))); print(s.getsockname()[1], flush=True); "
                               + "sys.stdin.readline(); t=socket.create_connection(('\(host)', \(port))); print(t.getsockname()[1], flush=True); sys.stdin.read()")
            let clientPort = try #require(UInt16(Self.line(out.fileDescriptor)))

            let answers = Answers()
            let lookup = ProgramLookup { id, p in answers.add(id, p) }
            #expect(lookup.lookUp(ProgramLookupRequest(flowID: 1, clientAddress: host, clientPort: clientPort, serverAddress: nil, serverPort: 0, transport: .tcp)))
            #expect(answers.got.wait(timeout: .now() + 5) == .success)
            let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/usr/bin/python3")
            let first = answers.list.withLock { $0 }
            #expect(first.count == 1 && first[0].0 == 1)
            let python = FlowProgram.known(ProgramIdentity(pid: child.pid, command: "python3",
                                                           executable: "/usr/bin/" + executable, uid: 0, user: "root"))
            #expect(first[0].1 == python, "\(first)")
            #expect(lookup.counters.scans == 1)

            // A second connection of the same program: found among the recent owners, no full scan.
            input.write(Data("go\n".utf8))
            let second = try #require(UInt16(Self.line(out.fileDescriptor)))
            #expect(lookup.lookUp(ProgramLookupRequest(flowID: 3, clientAddress: host, clientPort: second, serverAddress: nil, serverPort: 0, transport: .tcp)))
            #expect(answers.got.wait(timeout: .now() + 5) == .success)
            #expect(answers.list.withLock { $0.last?.0 == 3 && $0.last?.1 == python })
            #expect(lookup.counters.scans == 1)

            try input.close()
            #expect(child.wait(seconds: 10))
            #expect(lookup.lookUp(ProgramLookupRequest(flowID: 2, clientAddress: host, clientPort: clientPort, serverAddress: nil, serverPort: 0, transport: .tcp)))
            #expect(answers.got.wait(timeout: .now() + 5) == .success)
            // Closed by the exit: gone from the table, or left with inode 0 (FIN_WAIT / TIME_WAIT).
            #expect(answers.list.withLock { $0.last?.1 } == .notKnown(.socketGone))
            // A client address this machine does not have (TEST-NET-1): on another machine,
            // counted apart from "not known" (a trial's status called such clients not known).
            #expect(lookup.lookUp(ProgramLookupRequest(flowID: 4, clientAddress: "192.0.2.9", clientPort: 40_000, serverAddress: nil, serverPort: 0, transport: .tcp)))
            #expect(answers.got.wait(timeout: .now() + 5) == .success)
            #expect(answers.list.withLock { $0.last?.1 } == .notKnown(.otherMachine))
            lookup.stop()
            let c = lookup.counters
            #expect(c.lookedUp == 4 && c.found == 2 && c.otherMachine == 1 && c.notKnown == 1 && c.dropped == 0, "\(c)")
        }
    }

    @Test("where peers are servers, a python3 child's TCP socket (IPv4 and IPv6) is found by its four-tuple (no dump): named python3; a wrong server port misses, with no dump, and the socket connected elsewhere is not named; after it exits, socket gone")
    func exactFourTuple() throws {
        for (family, host) in [(AF_INET, "127.0.0.1"), (AF_INET6, "::1")] {
            let (child, input, out) = try Self.python("import socket,sys; l=socket.socket(socket.\(family == AF_INET ? "AF_INET" : "AF_INET6")); l.bind(('\(host)', 0)); l.listen(4); "
                               + "s=socket.create_connection(('\(host)', l.getsockname()[1])); print(s.getsockname()[1], l.getsockname()[1], flush=True); sys.stdin.read()")
            let ports = Self.line(out.fileDescriptor).split(separator: " ").compactMap { UInt16($0) }
            try #require(ports.count == 2)
            let answers = Answers()
            let lookup = ProgramLookup(peersAreServers: true) { id, p in answers.add(id, p) }
            let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/usr/bin/python3")
            let python = FlowProgram.known(ProgramIdentity(pid: child.pid, command: "python3",
                                                           executable: "/usr/bin/" + executable, uid: 0, user: "root"))
            #expect(lookup.lookUp(ProgramLookupRequest(flowID: 1, clientAddress: host, clientPort: ports[0], serverAddress: host,
                                                       serverPort: ports[1], transport: .tcp)))
            #expect(answers.got.wait(timeout: .now() + 5) == .success)
            #expect(answers.list.withLock { $0.last?.1 } == python)
            #expect(lookup.counters.exact == 1)
            // Not its peer: the exact request misses (ENOENT), and that is the answer where the
            // server is the peer (no dump): the socket with that port, connected elsewhere, is
            // another connection's, never named (a trial's flows were named after programs whose
            // sockets merely shared the port).
            #expect(lookup.lookUp(ProgramLookupRequest(flowID: 2, clientAddress: host, clientPort: ports[0], serverAddress: host,
                                                       serverPort: ports[1] &+ 1, transport: .tcp)))
            #expect(answers.got.wait(timeout: .now() + 5) == .success)
            #expect(answers.list.withLock { $0.last?.1 } == .notKnown(.socketGone))
            #expect(lookup.counters.exact == 2)
            #expect(lookup.counters.dumps == 0)
            try input.close()
            #expect(child.wait(seconds: 10))
            #expect(lookup.lookUp(ProgramLookupRequest(flowID: 3, clientAddress: host, clientPort: ports[0], serverAddress: host,
                                                       serverPort: ports[1], transport: .tcp)))
            #expect(answers.got.wait(timeout: .now() + 5) == .success)
            #expect(answers.list.withLock { $0.last?.1 } == .notKnown(.socketGone))
            lookup.stop()
            #expect(lookup.counters.found == 1 && lookup.counters.notKnown == 2)
        }
    }

    @Test("a client of tv's listener (explicit proxy, SOCKS5, reverse mode) is asked by its four-tuple once the listener is known, an IPv6 socket speaking IPv4 (Java's way) too; bound to every address by the client's own address, a client that bound another address by the dump after a miss; all name python3, but for a listener that is not the socket's peer")
    func exactToTheListener() throws {
        // (the listener's family, its address, the client socket's family and the address it connects to)
        let cases = [("AF_INET", "127.0.0.1", "AF_INET", "127.0.0.1"), ("AF_INET6", "::1", "AF_INET6", "::1"),
                     ("AF_INET", "127.0.0.1", "AF_INET6", "::ffff:127.0.0.1")]
        for (listenFamily, host, clientFamily, target) in cases {
            let family = listenFamily == "AF_INET" ? AF_INET : AF_INET6
            // The child holds a listener (tv's, here) and a client connected to it.
            let (child, input, out) = try Self.python("import socket,sys; l=socket.socket(socket.\(listenFamily)); l.bind(('\(host)', 0)); l.listen(4); "
                               + "s=socket.socket(socket.\(clientFamily)); s.connect(('\(target)', l.getsockname()[1])); "
                               + "print(s.getsockname()[1], l.getsockname()[1], flush=True); sys.stdin.read()")
            defer { try? input.close(); _ = child.wait(seconds: 10) }
            let ports = Self.line(out.fileDescriptor).split(separator: " ").compactMap { UInt16($0) }
            try #require(ports.count == 2)
            let answers = Answers()
            let lookup = ProgramLookup { id, p in answers.add(id, p) }
            defer { lookup.stop() }
            let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/usr/bin/python3")
            let python = FlowProgram.known(ProgramIdentity(pid: child.pid, command: "python3",
                                                           executable: "/usr/bin/" + executable, uid: 0, user: "root"))
            // The flow's server is where the proxy went, not the client's peer.
            let request = { (id: Int64) in ProgramLookupRequest(flowID: id, clientAddress: host, clientPort: ports[0],
                                                                 serverAddress: "93.184.216.34", serverPort: 443, transport: .tcp) }
            // Bound to every address (as tv's `--listen 0.0.0.0` / `[::]` is): the client's own
            // address is its peer (it did not bind one): exact, no dump.
            lookup.setListener(address: family == AF_INET ? "0.0.0.0" : "::", port: ports[1])
            #expect(lookup.lookUp(request(1)))
            #expect(answers.got.wait(timeout: .now() + 5) == .success)
            #expect(answers.list.withLock { $0.last?.1 } == python)
            #expect(lookup.counters.exact == 1)
            #expect(lookup.counters.dumps == 0)
            lookup.setListener(address: host, port: ports[1])
            #expect(lookup.lookUp(request(2)))
            #expect(answers.got.wait(timeout: .now() + 5) == .success)
            #expect(answers.list.withLock { $0.last?.1 } == python)
            #expect(lookup.counters.exact == 2)
            #expect(lookup.counters.dumps == 0)
            // A listener on one address that is not the client's peer: the exact request misses,
            // and that is the answer (a client of that listener would have that four-tuple), with
            // no dump: the socket with that port, connected elsewhere, is not the flow's.
            lookup.setListener(address: host, port: ports[1] &+ 1)
            #expect(lookup.lookUp(request(3)))
            #expect(answers.got.wait(timeout: .now() + 5) == .success)
            #expect(answers.list.withLock { $0.last?.1 } == .notKnown(.socketGone))
            #expect(lookup.counters.exact == 3)
            #expect(lookup.counters.dumps == 0)
        }
    }

    @Test("behind a listener bound to every address, the address the client reached (the accepted socket's own) is asked for exactly: named python3 while it lives, and once it closed, socket gone with no dump (the guess's misses walked the whole TCP table)")
    func reachedBehindAWildcardListener() throws {
        // The child: a listener on every address and a client bound to 127.0.0.2 connected to
        // 127.0.0.1 (the guess by the client's own address misses it); it prints both ports.
        let (child, input, out) = try Self.python("import socket,sys; l=socket.socket(); l.bind(('0.0.0.0', 0)); l.listen(4); "
                           + "s=socket.socket(); s.bind(('127.0.0.2', 0)); s.connect(('127.0.0.1', l.getsockname()[1])); "
                           + "print(s.getsockname()[1], l.getsockname()[1], flush=True); sys.stdin.readline(); s.close(); "
                           + "print('closed', flush=True); sys.stdin.read()")
        defer { try? input.close(); _ = child.wait(seconds: 10) }
        let ports = Self.line(out.fileDescriptor).split(separator: " ").compactMap { UInt16($0) }
        try #require(ports.count == 2)
        let answers = Answers()
        let lookup = ProgramLookup { id, p in answers.add(id, p) }
        defer { lookup.stop() }
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/usr/bin/python3")
        let python = FlowProgram.known(ProgramIdentity(pid: child.pid, command: "python3",
                                                       executable: "/usr/bin/" + executable, uid: 0, user: "root"))
        lookup.setListener(address: "0.0.0.0", port: ports[1])
        let request = { (id: Int64) in ProgramLookupRequest(flowID: id, clientAddress: "127.0.0.2", clientPort: ports[0],
                                                             serverAddress: "93.184.216.34", serverPort: 443, transport: .tcp,
                                                             reachedAddress: "127.0.0.1", reachedPort: ports[1]) }
        #expect(lookup.lookUp(request(1)))
        #expect(answers.got.wait(timeout: .now() + 5) == .success)
        #expect(answers.list.withLock { $0.last?.1 } == python)
        input.write(Data("close\n".utf8))
        #expect(Self.line(out.fileDescriptor) == "closed")
        // The client's side of a connection it closed first waits in FIN-WAIT or TIME_WAIT with
        // no file (inode 0), or is gone: either way no process holds it.
        #expect(lookup.lookUp(request(2)))
        #expect(answers.got.wait(timeout: .now() + 5) == .success)
        #expect(answers.list.withLock { $0.last?.1 } == .notKnown(.socketGone))
        #expect(lookup.counters.exact == 2 && lookup.counters.dumps == 0, "\(lookup.counters)")
    }

    @Test("a client that bound another local address than the one it reached on a listener bound to every address: the exact request by its own address misses, the dump names python3")
    func wildcardListenerBoundClient() throws {
        // The child: a listener on 0.0.0.0 and a client bound to 127.0.0.2 connected to 127.0.0.1.
        let (child, input, out) = try Self.python("import socket,sys; l=socket.socket(); l.bind(('0.0.0.0', 0)); l.listen(4); "
                           + "s=socket.socket(); s.bind(('127.0.0.2', 0)); s.connect(('127.0.0.1', l.getsockname()[1])); "
                           + "print(s.getsockname()[1], l.getsockname()[1], flush=True); sys.stdin.read()")
        defer { try? input.close(); _ = child.wait(seconds: 10) }
        let ports = Self.line(out.fileDescriptor).split(separator: " ").compactMap { UInt16($0) }
        try #require(ports.count == 2)
        let answers = Answers()
        let lookup = ProgramLookup { id, p in answers.add(id, p) }
        defer { lookup.stop() }
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/usr/bin/python3")
        let python = FlowProgram.known(ProgramIdentity(pid: child.pid, command: "python3",
                                                       executable: "/usr/bin/" + executable, uid: 0, user: "root"))
        lookup.setListener(address: "0.0.0.0", port: ports[1])
        #expect(lookup.lookUp(ProgramLookupRequest(flowID: 1, clientAddress: "127.0.0.2", clientPort: ports[0],
                                                   serverAddress: "93.184.216.34", serverPort: 443, transport: .tcp)))
        #expect(answers.got.wait(timeout: .now() + 5) == .success)
        #expect(answers.list.withLock { $0.last?.1 } == python)
        #expect(lookup.counters.exact == 0)
        #expect(lookup.counters.dumps >= 1)
    }

    @Test("an IPv6 socket speaking IPv4 (Java's way) whose port a TIME_WAIT IPv4 socket of a connection to another server shares: named python3, not 'socket gone' (the IPv4 dump holds only the dead one)")
    func mappedBesideTimeWait() throws {
        // The child: an IPv4 connection from port P to one listener, closed (TIME_WAIT on the
        // child's side); then an IPv6 socket bound to ::ffff:127.0.0.1:P connected to a dual-stack
        // listener (a proxy), as Java's HttpClient connects; it prints P.
        let (child, input, out) = try Self.python("""
            import socket, sys
            other = socket.socket(); other.bind(('127.0.0.1', 0)); other.listen(4)
            proxy = socket.socket(socket.AF_INET6); proxy.bind(('::', 0)); proxy.listen(4)
            a = socket.socket(); a.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); a.bind(('127.0.0.1', 0))
            port = a.getsockname()[1]
            a.connect(('127.0.0.1', other.getsockname()[1])); peer, _ = other.accept(); a.close(); peer.close()
            s = socket.socket(socket.AF_INET6); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(('::ffff:127.0.0.1', port)); s.connect(('::ffff:127.0.0.1', proxy.getsockname()[1]))
            print(port, flush=True); sys.stdin.read()
            """)
        defer { try? input.close(); _ = child.wait(seconds: 10) }
        let port = try #require(UInt16(Self.line(out.fileDescriptor)))
        // The dead IPv4 socket is there: /proc/net/tcp lists 127.0.0.1:P (0100007F) in TIME_WAIT (06).
        // Read to its end: String(contentsOfFile:) stops after the first 4 KiB of a /proc file
        // (a CI run with many sockets missed the line).
        let table = String(decoding: try #require(FileHandle(forReadingAtPath: "/proc/net/tcp")).readDataToEndOfFile(), as: UTF8.self)
        let local = "0100007F:" + String(format: "%04X", port)
        try #require(table.split(separator: "\n").contains { line in
            let fields = line.split(separator: " ")
            return fields.count > 3 && fields[1] == local && fields[3] == "06"
        }, "no TIME_WAIT socket on \(local): \(table)")

        let answers = Answers()
        let lookup = ProgramLookup { id, p in answers.add(id, p) }
        #expect(lookup.lookUp(ProgramLookupRequest(flowID: 1, clientAddress: "127.0.0.1", clientPort: port, serverAddress: nil, serverPort: 0, transport: .tcp)))
        #expect(answers.got.wait(timeout: .now() + 5) == .success)
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/usr/bin/python3")
        let python = FlowProgram.known(ProgramIdentity(pid: child.pid, command: "python3",
                                                       executable: "/usr/bin/" + executable, uid: 0, user: "root"))
        #expect(answers.list.withLock { $0.last?.1 } == python)
        lookup.stop()
    }

    /// One line the child printed (without its newline), read byte by byte (at most 5 s).
    /// `python3 -c code` with its standard input and output on pipes: the child, the end its input
    /// is written to, the end its output is read from (a `Child`: see there why not Foundation's
    /// `Process`).
    static func python(_ code: String) throws -> (Child, FileHandle, FileHandle) {
        let toChild = try Child.pipe(), fromChild = try Child.pipe()
        defer { close(toChild.read); close(fromChild.write) }
        let child = try Child("/usr/bin/python3", ["-c", code], environment: ProcessInfo.processInfo.environment,
                              stdin: toChild.read, stdout: fromChild.write, stderr: -1)
        return (child, FileHandle(fileDescriptor: toChild.write, closeOnDealloc: true),
                FileHandle(fileDescriptor: fromChild.read, closeOnDealloc: true))
    }

    static func line(_ fd: Int32) -> String {
        var bytes: [UInt8] = []
        let deadline = Date().addingTimeInterval(5)
        var byte: UInt8 = 0
        while Date() < deadline {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 100) > 0 else { continue }
            guard read(fd, &byte, 1) == 1 else { break }
            if byte == 0x0A { break }
            bytes.append(byte)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test("a client address that is not this machine's: another machine (TEST-NET-1)")
    func otherMachine() {
        let answers = Answers()
        let lookup = ProgramLookup { id, p in answers.add(id, p) }
        lookup.lookUp(ProgramLookupRequest(flowID: 9, clientAddress: "192.0.2.77", clientPort: 40_000, serverAddress: nil, serverPort: 0, transport: .tcp))
        #expect(answers.got.wait(timeout: .now() + 5) == .success)
        #expect(answers.list.withLock { $0.first?.1 } == .notKnown(.otherMachine))
        lookup.stop()
    }

    @Test("a UDP client of another machine whose port a local socket bound to 0.0.0.0 holds: another machine, not that socket's program, with no dump of the socket table")
    func otherMachineBesideALocalSocket() throws {
        let (child, input, out) = try Self.python("import socket,sys; u=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(('0.0.0.0', 0)); "
                                                  + "print(u.getsockname()[1], flush=True); sys.stdin.read()")
        defer { try? input.close(); _ = child.wait(seconds: 10) }
        let port = try #require(UInt16(Self.line(out.fileDescriptor)))
        let answers = Answers()
        let lookup = ProgramLookup { id, p in answers.add(id, p) }
        defer { lookup.stop() }
        lookup.lookUp(ProgramLookupRequest(flowID: 9, clientAddress: "192.0.2.77", clientPort: port, serverAddress: nil, serverPort: 0,
                                           transport: .udp))
        #expect(answers.got.wait(timeout: .now() + 5) == .success)
        #expect(answers.list.withLock { $0.first?.1 } == .notKnown(.otherMachine))
        // Not looked for: no walk of the socket table for an address this machine does not have.
        #expect(lookup.counters.dumps == 0)
    }

    @Test("a full queue drops and counts, never waits")
    func fullQueueDrops() {
        let lookup = ProgramLookup(capacity: 1) { _, _ in usleep(200_000) }
        var dropped = 0
        for i in 0..<50 where !lookup.lookUp(ProgramLookupRequest(flowID: Int64(i), clientAddress: "192.0.2.1", clientPort: 1, serverAddress: nil, serverPort: 0, transport: .tcp)) {
            dropped += 1
        }
        #expect(dropped > 0)
        lookup.stop()
        #expect(lookup.counters.dropped == UInt64(dropped))
    }

    @Test("whenAnswered is told after the flow's answer was delivered, once; a dropped request's at once (a held reset waits on it: EngineLoop.failConnect)")
    func whenAnsweredFollowsTheAnswer() {
        let order = Mutex<[String]>([])
        let entered = DispatchSemaphore(value: 0), gate = DispatchSemaphore(value: 0)
        // Request 0 holds the thread in its delivery, so the queue (of one) is known empty, then full.
        let lookup = ProgramLookup(capacity: 1) { id, _ in
            if id == 0 { entered.signal(); gate.wait() } else { order.withLock { $0.append("delivered \(id)") } }
        }
        let told = DispatchSemaphore(value: 0)
        func request(_ id: Int64) -> ProgramLookupRequest {
            ProgramLookupRequest(flowID: id, clientAddress: "192.0.2.1", clientPort: 1, serverAddress: nil, serverPort: 0, transport: .tcp)
        }
        #expect(lookup.lookUp(request(0)))
        #expect(entered.wait(timeout: .now() + 5) == .success)
        #expect(lookup.lookUp(request(1)) { order.withLock { $0.append("told 1") }; told.signal() })
        #expect(!lookup.lookUp(request(2)) { order.withLock { $0.append("told 2") } })
        gate.signal()
        #expect(told.wait(timeout: .now() + 5) == .success)
        lookup.stop()
        #expect(order.withLock { $0 } == ["told 2", "delivered 1", "told 1"])
    }

}
