import FlowStore
import FlowTerms
import Proxy

/// The proxy's flow events into the flow database: each is mapped and enqueued on the single
/// batched writer, which never blocks (a full queue drops the event and counts it).
public final class FlowStoreSink: FlowSink {
    private let writer: FlowWriter
    /// Told of every closed flow (`tv diag`, `tv top`); nil: nobody asks.
    private let tally: SessionTally?
    /// Prints finished exchanges (`tv run --log requests`), when asked.
    private let requestLog: RequestLog?

    public init(writer: FlowWriter, tally: SessionTally? = nil, requestLog: RequestLog? = nil) {
        self.writer = writer
        self.tally = tally
        self.requestLog = requestLog
    }

    public func flowOpened(_ facts: FlowFacts) { _ = writer.enqueue(.opened(FlowRecordMapping.record(facts))) }
    public func flowUpdated(_ facts: FlowFacts) { _ = writer.enqueue(.updated(FlowRecordMapping.record(facts))) }
    public func flowClosed(_ facts: FlowFacts) {
        tally?.closed(facts, atMicros: facts.startMicros + (facts.durationMicros ?? 0))
        _ = writer.enqueue(.closed(FlowRecordMapping.record(facts)))
    }
    public func exchangeChanged(_ exchange: ExchangeRecord) {
        _ = writer.enqueue(.exchange(exchange))
        if exchange.state != .open { requestLog?.finished(exchange) }
    }
}
