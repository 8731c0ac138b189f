import FlowStore
import FlowTerms
import ProgramLookup
import Proxy

/// The proxy's flow events into the flow database: each is mapped and enqueued on the single
/// batched writer, which never blocks (a full queue drops the event and counts it). A new flow is
/// also handed to the program lookup (a bounded queue of its own; never waited for), whose answer
/// reaches the writer as `FlowEvent.program`.
public final class FlowStoreSink: FlowSink {
    private let writer: FlowWriter
    /// Prints finished exchanges (`tv run --log requests`), when asked.
    private let requestLog: RequestLog?
    private let programs: ProgramLookup?
    /// Told of every closed flow (`tv diag`, `tv top`); nil: nobody asks.
    private let tally: SessionTally?

    public init(writer: FlowWriter, requestLog: RequestLog? = nil, programs: ProgramLookup? = nil, tally: SessionTally? = nil) {
        self.writer = writer
        self.requestLog = requestLog
        self.programs = programs
        self.tally = tally
    }

    public func flowOpened(_ facts: FlowFacts) {
        _ = writer.enqueue(.opened(FlowRecordMapping.record(facts)))
        programs?.lookUp(ProgramLookupRequest(flowID: Int64(facts.id), clientAddress: facts.client.address, clientPort: facts.client.port,
                                              serverAddress: facts.server?.address, serverPort: facts.server?.port ?? facts.port,
                                              transport: facts.transport))
    }
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
