import FlowStore
import ProgramLookup
import Proxy

/// The proxy's flow events into the flow database: each is mapped and enqueued on the single
/// batched writer, which never blocks (a full queue drops the event and counts it). A new flow is
/// also handed to the program lookup (a bounded queue of its own; never waited for), whose answer
/// reaches the writer as `FlowEvent.program`.
public final class FlowStoreSink: FlowSink {
    private let writer: FlowWriter
    private let programs: ProgramLookup?

    public init(writer: FlowWriter, programs: ProgramLookup? = nil) {
        self.writer = writer
        self.programs = programs
    }

    public func flowOpened(_ facts: FlowFacts) {
        _ = writer.enqueue(.opened(FlowRecordMapping.record(facts)))
        programs?.lookUp(ProgramLookupRequest(flowID: Int64(facts.id), clientAddress: facts.client.address, clientPort: facts.client.port,
                                              serverAddress: facts.server?.address, serverPort: facts.server?.port ?? facts.port,
                                              transport: facts.transport))
    }
    public func flowUpdated(_ facts: FlowFacts) { _ = writer.enqueue(.updated(FlowRecordMapping.record(facts))) }
    public func flowClosed(_ facts: FlowFacts) { _ = writer.enqueue(.closed(FlowRecordMapping.record(facts))) }
}
