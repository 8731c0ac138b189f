import CTVShims
#if canImport(Glibc)
import Glibc
#endif
import FlowTerms

/// Small wrappers over the socket calls the loops make; all non-blocking.
public enum Socket {
    /// The local address of `fd`.
    public static func localAddress(_ fd: Int32) -> SocketAddress? {
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
        startConnect(to: address, mark: mark).mapError { $0.errno }
    }

    /// A connect that could not start, by step.
    public enum ConnectFailure: Error, Equatable, Sendable {
        /// socket(2) failed.
        case socket(Errno)
        /// SO_MARK could not be set (no CAP_NET_ADMIN).
        case mark(Errno)
        /// connect(2) failed at once (not EINPROGRESS).
        case connect(Errno)

        /// The errno, whatever the step.
        public var errno: Errno {
            switch self {
            case .socket(let e), .mark(let e), .connect(let e): return e
            }
        }
    }

    /// `connect(to:mark:)` with the failing step kept: a TCP socket (non-blocking, close-on-exec,
    /// TCP_NODELAY), marked when `mark` is given, connecting to `address`.
    public static func startConnect(to address: SocketAddress, mark: UInt32? = nil) -> Result<(fd: Int32, done: Bool), ConnectFailure> {
        let fd = tv_socket_stream(address.family)
        guard fd >= 0 else { return .failure(.socket(Errno(Glibc.errno))) }
        _ = tv_set_nodelay(fd)
        if let mark {
            let rc = tv_set_mark(fd, mark)
            if rc != 0 {
                close(fd)
                return .failure(.mark(Errno(-rc)))
            }
        }
        let rc = address.withSockAddr { Glibc.connect(fd, $0, $1) }
        if rc == 0 { return .success((fd, true)) }
        let err = Glibc.errno
        if err == EINPROGRESS { return .success((fd, false)) }
        close(fd)
        return .failure(.connect(Errno(err)))
    }

    /// Closes with a reset (SO_LINGER 0) instead of a FIN.
    public static func reset(_ fd: Int32) {
        _ = tv_set_linger_zero(fd)
        close(fd)
    }
}
