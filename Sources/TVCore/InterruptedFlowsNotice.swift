/// The one line a starting session says when it closed flows an earlier session left open (that
/// session was killed, crashed or lost power, so it never wrote their end).
public enum InterruptedFlowsNotice {
    /// The sentence, or nil when nothing was closed.
    /// - Parameter found: writers found dead and the open flows they left, now `interrupted`.
    public static func sentence(_ found: (writers: Int, flows: Int)) -> String? {
        guard found.flows > 0 else { return nil }
        let flows = found.flows == 1 ? "1 flow" : "\(found.flows) flows"
        let sessions = found.writers == 1 ? "an earlier tv session" : "\(found.writers) earlier tv sessions"
        return "\(flows) left open by \(sessions) that ended without stopping (killed or crashed) \(found.flows == 1 ? "is" : "are") now closed as interrupted, at \(found.flows == 1 ? "its" : "their") last recorded activity (tv flows --status interrupted)."
    }
}
