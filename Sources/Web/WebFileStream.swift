#if canImport(Glibc)
import Glibc
#endif

/// A file sent as a response body, 64 KiB at a time (a capture can be hundreds of megabytes;
/// it is never read into memory whole).
///
/// `@unchecked Sendable`: libmicrohttpd calls `next` only from the one thread serving the
/// connection, one call at a time; the descriptor is touched by nothing else.
public final class WebFileStream: WebStream, @unchecked Sendable {
    private var fd: Int32

    /// Opens `path` for reading; nil when it cannot be opened.
    public init?(path: String) {
        fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 { return nil }
    }

    deinit { if fd >= 0 { close(fd) } }

    public func next() -> [UInt8]? {
        guard fd >= 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                close(fd)
                fd = -1
                return nil
            }
            return Array(buffer.prefix(n))
        }
    }
}
