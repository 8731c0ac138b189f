import FlowStore

/// The line a starting session says when it closed flows an earlier session left open: that
/// session was killed, crashed or lost power, so it never wrote their end, or it stopped unable
/// to write it (its database could not be written: a full disk), which it marked
/// (`FlowWriterRegistry`; trial 43's clean stop on a full disk was called "killed or crashed").
public enum InterruptedFlowsNotice {
    /// The sentence (one for each way the sessions ended), or nil when nothing was closed.
    /// - Parameter found: writers found gone and the open flows they left, now `interrupted`.
    public static func sentence(_ found: FlowWriterRecovery) -> String? {
        var sentences: [String] = []
        if found.interruptedFlows > 0 {
            sentences.append(closed(found.interruptedFlows, by: found.deadWriters, "that ended without stopping (killed or crashed)"))
        }
        if found.stoppedFlows > 0 {
            let its = found.stoppedFlows == 1 ? "its" : "their"
            sentences.append(closed(found.stoppedFlows, by: found.stoppedWriters,
                                    "that stopped unable to save \(its) end (the disk holding the data folder was full, or its database could not be written)"))
        }
        return sentences.isEmpty ? nil : sentences.joined(separator: " ")
    }

    private static func closed(_ count: Int, by writers: Int, _ how: String) -> String {
        let flows = count == 1 ? "1 flow" : "\(count) flows"
        let sessions = writers == 1 ? "an earlier tv session" : "\(writers) earlier tv sessions"
        return "\(flows) left open by \(sessions) \(how) \(count == 1 ? "is" : "are") now closed as interrupted, at \(count == 1 ? "its" : "their") last recorded activity (tv flows --status interrupted)."
    }
}
