import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Name resolution off the loops: getaddrinfo(3) blocks, so a few threads run it and post the
/// answer back to the asking loop. A numeric host never comes here (the caller parses it).
final class Resolver: Sendable {
    typealias Completion = @Sendable (Result<[SocketAddress], ResolveFailure>) -> Void

    struct ResolveFailure: Error, Sendable, Equatable {
        let message: String
    }

    private struct Request: Sendable {
        let host: String
        let port: UInt16
        let completion: Completion
    }

    private struct State {
        var queue: [Request] = []
        var head = 0
        var stopping = false
    }

    private let state = Mutex(State())
    private let available = DispatchSemaphore(value: 0)
    private let threadCount: Int

    init(threads: Int) {
        threadCount = max(1, threads)
        for i in 0..<threadCount {
            let thread = Thread { [self] in self.work() }
            thread.name = "tv-resolver-\(i)"
            thread.stackSize = 256 * 1024
            thread.start()
        }
    }

    /// Resolves `host` for TCP on `port`; `completion` runs on a resolver thread.
    func resolve(host: String, port: UInt16, completion: @escaping Completion) {
        let accepted = state.withLock { s -> Bool in
            guard !s.stopping else { return false }
            s.queue.append(Request(host: host, port: port, completion: completion))
            return true
        }
        if accepted { available.signal() } else { completion(.failure(ResolveFailure(message: "tv is stopping"))) }
    }

    /// Lets the threads finish: each exits after its current lookup (not joined: a lookup can
    /// take as long as the system resolver's timeout, and it holds nothing of ours).
    func stop() {
        state.withLock { $0.stopping = true }
        for _ in 0..<threadCount { available.signal() }
    }

    private func work() {
        while true {
            available.wait()
            let next = state.withLock { s -> Request?? in
                if s.head < s.queue.count {
                    let r = s.queue[s.head]
                    s.head += 1
                    if s.head > 64 && s.head * 2 > s.queue.count {
                        s.queue.removeFirst(s.head)
                        s.head = 0
                    }
                    return .some(r)
                }
                return s.stopping ? .none : .some(nil)
            }
            guard let maybe = next else { return }
            guard let request = maybe else { continue }
            request.completion(Resolver.lookup(request.host, request.port))
        }
    }

    static func lookup(_ host: String, _ port: UInt16) -> Result<[SocketAddress], ResolveFailure> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_protocol = Int32(IPPROTO_TCP)
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let first = list else {
            let text = rc == EAI_NONAME ? "the name is unknown" : String(cString: gai_strerror(rc))
            return .failure(ResolveFailure(message: "\(host) could not be resolved (\(text))"))
        }
        defer { freeaddrinfo(first) }
        var out: [SocketAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let ai = cursor {
            if let sa = ai.pointee.ai_addr, let address = SocketAddress(storage: UnsafeRawPointer(sa)), !out.contains(address) {
                out.append(address)
            }
            cursor = ai.pointee.ai_next
        }
        if out.isEmpty { return .failure(ResolveFailure(message: "\(host) has no address")) }
        // IPv4 first: loopback services in tests and many local servers listen on IPv4 only.
        return .success(out.filter { $0.ip.isIPv4 } + out.filter { !$0.ip.isIPv4 })
    }
}
