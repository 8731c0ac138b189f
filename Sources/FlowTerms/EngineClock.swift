#if canImport(Glibc)
import Glibc
#endif

/// Time as the event loops read it: monotonic nanoseconds for deadlines, wall-clock µs for facts.
public enum EngineClock {
    /// CLOCK_MONOTONIC in nanoseconds (clock_gettime(2)): for deadlines and intervals.
    @inlinable
    public static func monotonicNanos() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// CLOCK_REALTIME in µs since 1970-01-01 UTC: for the times a flow records.
    @inlinable
    public static func wallMicros() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec / 1000)
    }
}
