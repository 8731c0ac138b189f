#if canImport(Glibc)
import Glibc
#endif

/// `tv web`'s listening socket and the names it answers to.
public struct WebListener: Sendable {
    /// The listening socket (bound, listening, close-on-exec).
    public let socket: Int32
    /// The numeric address (`127.0.0.1`, `::1`).
    public let address: String
    /// The port bound (the kernel's choice when 0 was asked).
    public let port: UInt16

    /// Opens a TCP socket on `address` (numeric, or `localhost` for 127.0.0.1) and `port`.
    /// - Throws: `WebListenerError`.
    public static func open(address: String, port: UInt16) throws -> WebListener {
        let numeric = address.lowercased() == "localhost" ? "127.0.0.1" : address
        var v4 = sockaddr_in()
        var v6 = sockaddr_in6()
        let isV6: Bool
        if inet_pton(AF_INET, numeric, &v4.sin_addr) == 1 {
            isV6 = false
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
        } else if inet_pton(AF_INET6, numeric, &v6.sin6_addr) == 1 {
            isV6 = true
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
        } else {
            throw WebListenerError.notAnAddress(address)
        }
        let fd = Glibc.socket(isV6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw WebListenerError.bind(address: address, port: port, errno: errno) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if isV6 { setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size)) }
        let bound: Int32 = isV6
            ? withUnsafePointer(to: &v6) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) } }
            : withUnsafePointer(to: &v4) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0, listen(fd, 64) == 0 else {
            let e = errno
            close(fd)
            throw WebListenerError.bind(address: address, port: port, errno: e)
        }
        var actual = sockaddr_in6()
        var length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        _ = withUnsafeMutablePointer(to: &actual) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        // sin_port and sin6_port sit at the same offset.
        return WebListener(socket: fd, address: numeric, port: UInt16(bigEndian: actual.sin6_port))
    }

    /// `127.0.0.1:8081` or `[::1]:8081`.
    public var authority: String { Self.authority(of: address, port: port) }

    /// Whether it listens on every address of its family (`0.0.0.0`, `::`).
    public var isWildcard: Bool { address == "0.0.0.0" || address == "::" }

    /// The `Host` values this server answers to: its address with the port, and `localhost`
    /// with the port when the address is loopback (what a person types); on every address
    /// (`0.0.0.0`, `::`), each of the machine's addresses of that family instead
    /// (`interfaceAddresses`, read now). Any other name, a rebinding attacker's included, is
    /// refused: no name but `localhost` is answered to, only the numeric addresses.
    public var hostNames: Set<String> {
        Self.hostNames(address: address, port: port, interfaceAddresses: isWildcard ? Self.interfaceAddresses() : [])
    }

    /// `hostNames` for `address` and `port`, given the machine's addresses for a wildcard (pure).
    public static func hostNames(address: String, port: UInt16, interfaceAddresses: [String]) -> Set<String> {
        let wildcard = address == "0.0.0.0" || address == "::"
        let family = wildcard ? interfaceAddresses.filter { $0.contains(":") == address.contains(":") } : [address]
        var names = Set(family.map { authority(of: $0, port: port) })
        if family.contains(where: { $0.hasPrefix("127.") || $0 == "::1" }) { names.insert("localhost:\(port)") }
        return names
    }

    /// `address:port`, an IPv6 address in brackets.
    public static func authority(of address: String, port: UInt16) -> String {
        address.contains(":") ? "[\(address)]:\(port)" : "\(address):\(port)"
    }

    /// The numeric addresses of the machine's interfaces (getifaddrs(3)), IPv4 and IPv6 (link
    /// scoped ones without their zone).
    public static func interfaceAddresses() -> [String] {
        var first: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&first) == 0 else { return [] }
        defer { freeifaddrs(first) }
        var out: [String] = []
        var cursor = first
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            guard let sa = entry.pointee.ifa_addr else { continue }
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            switch Int32(sa.pointee.sa_family) {
            case AF_INET:
                var a = sa.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                guard inet_ntop(AF_INET, &a, &text, socklen_t(text.count)) != nil else { continue }
            case AF_INET6:
                var a = sa.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                guard inet_ntop(AF_INET6, &a, &text, socklen_t(text.count)) != nil else { continue }
            default:
                continue
            }
            let address = String(cString: text)
            if !out.contains(address) { out.append(address) }
        }
        return out
    }
}

/// Why `tv web` could not listen.
public enum WebListenerError: Error, Equatable {
    /// `ADDRESS:PORT`, an IPv6 address in brackets (`[::2]:18485`, RFC 3986 §3.2.2).
    static func hostPort(_ address: String, _ port: UInt16) -> String {
        address.contains(":") ? "[\(address)]:\(port)" : "\(address):\(port)"
    }

    case notAnAddress(String)
    case bind(address: String, port: UInt16, errno: Int32)

    /// One sentence: what happened and what to do.
    public var message: String { message(option: "--listen") }

    /// The sentence naming `option`, the option that gave the address (`tv run --web`'s is
    /// `--web-listen`; a trial was told to change `--listen`, the proxy's).
    public func message(option: String) -> String {
        switch self {
        case .notAnAddress(let text):
            return "'\(text)' is not an address to listen on; give \(option) a numeric one such as 127.0.0.1:8081 or [::1]:8081."
        case .bind(let address, let port, let e) where e == EADDRNOTAVAIL:
            // The address, not the port (a trial was told to choose another port).
            return "Could not listen on \(Self.hostPort(address, port)): \(address) is not an address of this machine; give \(option) one of its own, such as 127.0.0.1:\(port)."
        case .bind(let address, let port, let e):
            return "Could not listen on \(Self.hostPort(address, port)) (\(String(cString: strerror(e)))); choose another port with \(option) 127.0.0.1:PORT."
        }
    }
}
