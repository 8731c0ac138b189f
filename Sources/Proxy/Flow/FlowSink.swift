import FlowTerms

/// Receives flow facts from the event loops.
///
/// Called on a loop thread: an implementation must return at once (enqueue, never write to disk
/// or wait on a lock someone holds for long), or every connection on that loop waits.
public protocol FlowSink: Sendable {
    /// A connection was accepted (or a plain-HTTP upstream opened); `facts.id` is new.
    func flowOpened(_ facts: FlowFacts)
    /// As `flowOpened`, and `programLookedUp` is called (on another thread, at most once) when
    /// the lookup of the flow's program has answered, or at once when there is no lookup. Same
    /// rule: return at once.
    func flowOpened(_ facts: FlowFacts, programLookedUp: @escaping @Sendable () -> Void)
    /// Something worth saving changed: the destination is known, a handshake finished, the status
    /// was decided.
    func flowUpdated(_ facts: FlowFacts)
    /// The flow is over; the facts are final (bytes, duration, status, error).
    func flowClosed(_ facts: FlowFacts)
    /// An HTTP exchange of a flow started (`state` `.open`) or ended (`.complete`,
    /// `.incomplete`); read on the data path by `ExchangeReader`. Same rule: return at once.
    func exchangeChanged(_ exchange: ExchangeRecord)
}

extension FlowSink {
    /// Without a program lookup: told at once.
    public func flowOpened(_ facts: FlowFacts, programLookedUp: @escaping @Sendable () -> Void) {
        flowOpened(facts)
        programLookedUp()
    }

    /// Exchanges are not wanted by default.
    public func exchangeChanged(_ exchange: ExchangeRecord) {}
}
