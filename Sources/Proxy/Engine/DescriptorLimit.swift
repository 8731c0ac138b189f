import CTVShims
#if canImport(Glibc)
import Glibc
#endif

/// The process's file-descriptor limit (RLIMIT_NOFILE), read and raised as `DescriptorBudget`
/// says; the I/O half of it.
public enum DescriptorLimit {
    /// The first thing `tv run` and `tv exec` do once their command line is read: raise the soft
    /// limit to the hard one (said nowhere: it is what servers do), and refuse when even that
    /// leaves too few to start and take `DescriptorBudget.minimumConnections` connections, before
    /// anything is said or made. Under `ulimit -n 24` tv died of SIGILL (libdispatch traps when
    /// it cannot make its epoll instance), under 28 it printed its banner and then exited, under
    /// 32 its first retention pass failed (a new-user trial).
    /// - Parameter workers: `--workers` (nil: one event loop per core, as `ProxyServer.start`).
    /// - Throws: `ProxyError.descriptorLimitTooLow`.
    public static func prepareSession(workers: Int?) throws {
        let limits = raise()
        let loops = max(1, workers ?? Int(tv_cpu_count()))
        let decision = DescriptorBudget.start(configured: ProxyConfiguration().maxConnections, limit: limits.soft,
                                              inUse: inUse(), loops: loops)
        if case .refuse(let needed) = decision {
            throw ProxyError.descriptorLimitTooLow(limit: limits.soft, needed: needed,
                                                   connections: DescriptorBudget.minimumConnections)
        }
    }

    /// Raises the soft limit to the hard one (`DescriptorBudget.raisedSoftLimit`) and returns
    /// both as they are afterwards. A refused raise leaves the limit as it was.
    static func raise() -> (soft: UInt64, hard: UInt64) {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return (0, 0) }
        if let wanted = DescriptorBudget.raisedSoftLimit(soft: UInt64(limit.rlim_cur), hard: UInt64(limit.rlim_max)) {
            var raised = limit
            raised.rlim_cur = rlim_t(wanted)
            if setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return (UInt64(limit.rlim_cur), UInt64(limit.rlim_max))
    }

    /// The limits now ((0, 0) when they cannot be read).
    static func current() -> (soft: UInt64, hard: UInt64) {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return (0, 0) }
        return (UInt64(limit.rlim_cur), UInt64(limit.rlim_max))
    }

    /// Descriptors open now (the entries of /proc/self/fd; 0 when it cannot be read).
    static func inUse() -> Int {
        guard let dir = opendir("/proc/self/fd") else { return 0 }
        defer { closedir(dir) }
        var count = -1   // the directory's own descriptor
        while let entry = readdir(dir) {
            let name = entry.pointee.d_name
            let dot = withUnsafeBytes(of: name) { $0[0] == UInt8(ascii: ".") }
            if !dot { count += 1 }
        }
        return max(0, count)
    }
}
