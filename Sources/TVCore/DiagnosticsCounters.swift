import Proxy
import Recording

/// The control-socket values a live session adds to its `status` answer for `tv diag` and
/// `tv top` (keys are added, never renamed):
/// - `offered.total` and `offered.KEY`: closed connections offered for inspection, by
///   `InspectionOutcome.key` (`offered.inspected`, `offered.failed.server.certificate`, …);
/// - `ca`: `loaded` or `missing` (whether the session can make certificates now);
/// - `content.turnsKept`, `content.bytesKept`, `content.chunksDropped`, `content.queueEvents`,
///   `content.queueBytes`: decrypted content written, dropped, waiting;
/// - `startedAt`: when the session was made (µs since the epoch);
/// - `SessionTally.values`: the last errors, names from connections, the busiest hosts.
public enum DiagnosticsCounters {
    /// The values, as decimal text.
    public static func values(proxy c: ProxyCounters, caLoaded: Bool, content: ContentCounters,
                              tally: SessionTally, startedAtMicros: Int64) -> [String: String] {
        var values = tally.values
        var offered: UInt64 = 0
        for (key, n) in c.inspection {
            values["offered." + key] = String(n)
            offered &+= n
        }
        values["offered.total"] = String(offered)
        values["ca"] = caLoaded ? "loaded" : "missing"
        values["content.turnsKept"] = String(content.turnsWritten)
        values["content.bytesKept"] = String(content.bytesWritten)
        values["content.chunksDropped"] = String(content.chunksDropped)
        values["content.queueEvents"] = String(content.pendingEvents)
        values["content.queueBytes"] = String(content.pendingBytes)
        values["startedAt"] = String(startedAtMicros)
        return values
    }
}
