import LocalCA
import Synchronization

/// What every loop of one server reads: the configuration, the TLS contexts, the policy inputs,
/// the sinks, and the few counters that must be global (open connections for the cap, flow ids).
///
/// Sendable: every stored property is immutable, Sendable, or an atomic.
final class ProxyShared: Sendable {
    let configuration: ProxyConfiguration
    let contexts: TLSContexts
    let leafCache: LeafCache?
    let ignoreHosts: [HostPattern]
    let allowHosts: [HostPattern]
    let inspection: Atomic<Bool>
    let openConnections = Atomic<Int>(0)
    let refusedByCap = Atomic<UInt64>(0)
    /// Transparent mode: connections refused because no redirect rule sent them (no original
    /// destination, or the destination is the listener itself).
    let notRedirected = Atomic<UInt64>(0)
    private let nextFlowID: Atomic<UInt64>
    let resolver: Resolver
    let sink: (any FlowSink)?
    let recorder: (any ChunkRecorder)?
    let pinning: any PinningMemory
    let pinningEvidence: PinningEvidence

    init(configuration: ProxyConfiguration) throws {
        self.configuration = configuration
        ignoreHosts = try configuration.ignoreHosts.map(HostPattern.init)
        allowHosts = try configuration.allowHosts.map(HostPattern.init)
        contexts = try TLSContexts(configuration: configuration, sessionCache: UpstreamSessionCache())
        leafCache = configuration.leafCache ?? configuration.authority.map { LeafCache(authority: $0) }
        inspection = Atomic(configuration.inspectionEnabled)
        nextFlowID = Atomic(configuration.firstFlowID)
        resolver = Resolver(threads: configuration.resolverThreads)
        sink = configuration.flowSink
        recorder = configuration.chunkRecorder
        pinning = configuration.pinningMemory
        pinningEvidence = PinningEvidence(rule: configuration.pinningEvidence)
    }

    func newFlowID() -> UInt64 { nextFlowID.wrappingAdd(1, ordering: .relaxed).oldValue }

    /// Takes `count` consecutive ids out of the sequence; returns the first.
    func reserveFlowIDs(_ count: UInt64) -> UInt64 { nextFlowID.wrappingAdd(count, ordering: .relaxed).oldValue }

    /// The policy as it stands now (inspection may be switched live).
    var policy: InterceptionPolicy {
        InterceptionPolicy(inspectionEnabled: inspection.load(ordering: .relaxed),
                           caAvailable: configuration.authority != nil && leafCache != nil,
                           ignoreHosts: ignoreHosts, allowHosts: allowHosts)
    }
}
