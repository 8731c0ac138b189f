#if canImport(Glibc)
import Glibc
#endif

/// The process's file-descriptor limit (RLIMIT_NOFILE), read and raised as `DescriptorBudget`
/// says; the I/O half of it.
enum DescriptorLimit {
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
