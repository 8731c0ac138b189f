import FlowStore
import FlowTerms
import ProgramLookup
import Proxy
import Synchronization

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

    /// Flows opened without their server's address whose program is looked up once it is known
    /// (`lookUpWhenServerKnown`); at most one entry per open flow.
    private let awaitingServer = Mutex(Set<UInt64>())
    private let lookUpWhenServerKnown: Bool

    /// - Parameter lookUpWhenServerKnown: each flow's server is its client socket's peer (the TUN
    ///   and transparent modes), so a flow opened before its server's address is known is looked
    ///   up at its first update with one (the proxy's connect: at once for the TUN's connections,
    ///   which arrive connected), or at its close: the lookup then asks for the one socket
    ///   (`SockDiagQuery.exact`) instead of dumping the kernel's table.
    public init(writer: FlowWriter, requestLog: RequestLog? = nil, programs: ProgramLookup? = nil, tally: SessionTally? = nil,
                lookUpWhenServerKnown: Bool = false) {
        self.writer = writer
        self.requestLog = requestLog
        self.programs = programs
        self.tally = tally
        self.lookUpWhenServerKnown = lookUpWhenServerKnown
    }

    public func flowOpened(_ facts: FlowFacts) { opened(facts, programLookedUp: nil) }

    public func flowOpened(_ facts: FlowFacts, programLookedUp: @escaping @Sendable () -> Void) {
        opened(facts, programLookedUp: programLookedUp)
    }

    private func opened(_ facts: FlowFacts, programLookedUp: (@Sendable () -> Void)?) {
        _ = writer.enqueue(.opened(FlowRecordMapping.record(facts)))
        guard let programs else {
            programLookedUp?()
            return
        }
        if lookUpWhenServerKnown && facts.server == nil {
            awaitingServer.withLock { _ = $0.insert(facts.id) }
            programLookedUp?()
        } else {
            lookUpProgram(facts, programs, whenAnswered: programLookedUp)
        }
    }
    public func flowUpdated(_ facts: FlowFacts) {
        _ = writer.enqueue(.updated(FlowRecordMapping.record(facts)))
        if lookUpWhenServerKnown, facts.server != nil, let programs, awaitingServer.withLock({ $0.remove(facts.id) }) != nil {
            lookUpProgram(facts, programs)
        }
    }
    public func flowClosed(_ facts: FlowFacts) {
        tally?.closed(facts, atMicros: facts.startMicros + (facts.durationMicros ?? 0))
        _ = writer.enqueue(.closed(FlowRecordMapping.record(facts)))
        if lookUpWhenServerKnown, let programs, awaitingServer.withLock({ $0.remove(facts.id) }) != nil {
            lookUpProgram(facts, programs)
        }
    }

    private func lookUpProgram(_ facts: FlowFacts, _ programs: ProgramLookup, whenAnswered: (@Sendable () -> Void)? = nil) {
        programs.lookUp(ProgramLookupRequest(flowID: Int64(facts.id), clientAddress: facts.client.address, clientPort: facts.client.port,
                                             serverAddress: facts.server?.address, serverPort: facts.server?.port ?? facts.port,
                                             transport: facts.transport, reachedAddress: facts.reached?.address,
                                             reachedPort: facts.reached?.port ?? 0), whenAnswered: whenAnswered)
    }
    public func exchangeChanged(_ exchange: ExchangeRecord) {
        _ = writer.enqueue(.exchange(exchange))
        if exchange.state != .open { requestLog?.finished(exchange) }
    }
}
