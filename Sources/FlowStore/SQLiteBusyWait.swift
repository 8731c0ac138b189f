import CSQLite
#if canImport(Glibc)
import Glibc
#endif

/// How a connection waits for another connection's lock on the database (`SQLITE_BUSY`): short
/// sleeps first, so a wait for a transaction of a few milliseconds ends within a fraction of a
/// millisecond of its commit, then longer ones, up to the connection's timeout (pure: the
/// schedule; `install` hands it to SQLite as the connection's busy handler).
///
/// SQLite's own `sqlite3_busy_timeout` sleeps 1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50 and then
/// 100 ms between tries (`sqliteDefaultBusyCallback`). Measured (strace of a `tv run` while 16
/// clients kept 700 connections' content, 687 MiB in ~4 s, over a 512 MiB ceiling): the content
/// writer slept 95 times for 0.62 s in those sleeps waiting for the flow writer's commits, the
/// flow writer in them too, and the content queue (16 MiB, ~80 ms of that stream) dropped 4,864
/// chunks while it slept. With this schedule, the same burst: 63 sleeps, 0.024 s.
public enum SQLiteBusyWait {
    /// Microseconds to sleep before try `attempt + 1` (SQLite counts the tries already made from
    /// 0), nil to give up (the statement then fails with `SQLITE_BUSY`): 100 µs for the first 20
    /// tries (2 ms), 500 µs for the next 36 (18 ms more: 20 ms in all), then 2 ms, until the
    /// sleeps would pass `timeoutMilliseconds` (≤ 0 gives up at once).
    public static func delayMicros(attempt: Int, timeoutMilliseconds: Int) -> Int? {
        let delay = attempt < 20 ? 100 : attempt < 56 ? 500 : 2_000
        return sleptMicros(before: attempt) + delay <= timeoutMilliseconds * 1_000 ? delay : nil
    }

    /// Microseconds slept before try `attempt` by `delayMicros`'s schedule.
    static func sleptMicros(before attempt: Int) -> Int {
        let short = min(attempt, 20), middle = min(max(attempt - 20, 0), 36), long = max(attempt - 56, 0)
        return short * 100 + middle * 500 + long * 2_000
    }

    /// Makes `db` wait by this schedule, for at most `timeoutMilliseconds` (0: no waiting, as
    /// `sqlite3_busy_timeout(db, 0)`).
    static func install(on db: OpaquePointer, timeoutMilliseconds: Int32) {
        guard timeoutMilliseconds > 0 else {
            sqlite3_busy_handler(db, nil, nil)
            return
        }
        // The timeout travels as the context pointer's value: nothing to keep alive or free.
        sqlite3_busy_handler(db, { context, attempt in
            let timeout = Int(bitPattern: context)
            guard let delay = SQLiteBusyWait.delayMicros(attempt: Int(attempt), timeoutMilliseconds: timeout) else { return 0 }
            usleep(useconds_t(delay))
            return 1
        }, UnsafeMutableRawPointer(bitPattern: Int(timeoutMilliseconds)))
    }
}
