import CTVShims
#if canImport(Glibc)
import Glibc
#endif

/// Small wrappers over the socket calls the loops make; all non-blocking.
enum Socket {
    /// The local address of `fd`.
    static func localAddress(_ fd: Int32) -> SocketAddress? {
        var storage = sockaddr_storage()
        var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let ok = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        guard ok == 0 else { return nil }
        return withUnsafeBytes(of: &storage) { SocketAddress(storage: $0.baseAddress!) }
    }

    /// Starts a non-blocking connect. Returns the fd and whether it already completed, or errno.
    /// - Parameter mark: SO_MARK to set before connecting (policy routing); a failure to set it is
    ///   a failure to connect, since an unmarked socket would loop back into the TUN.
    static func connect(to address: SocketAddress, mark: UInt32? = nil) -> Result<(fd: Int32, done: Bool), Errno> {
        let fd = tv_socket_stream(address.family)
        guard fd >= 0 else { return .failure(Errno(errno)) }
        _ = tv_set_nodelay(fd)
        if let mark, tv_set_mark(fd, mark) != 0 {
            let err = errno
            close(fd)
            return .failure(Errno(err))
        }
        let rc = address.withSockAddr { Glibc.connect(fd, $0, $1) }
        if rc == 0 { return .success((fd, true)) }
        let err = errno
        if err == EINPROGRESS { return .success((fd, false)) }
        close(fd)
        return .failure(Errno(err))
    }

    /// Closes with a reset (SO_LINGER 0) instead of a FIN.
    static func reset(_ fd: Int32) {
        _ = tv_set_linger_zero(fd)
        close(fd)
    }
}

/// An errno value with its text.
struct Errno: Error, Equatable, CustomStringConvertible {
    let code: Int32
    init(_ code: Int32) { self.code = code }
    var description: String { String(cString: strerror(code)) }
    /// Lowercase first letter, for inside a sentence ("connection refused").
    var phrase: String {
        let text = description
        guard let first = text.first else { return text }
        return first.lowercased() + text.dropFirst()
    }
}
