import Synchronization
import FlowTerms

/// A snapshot of the engine's counters, readable at any time (`ProxyServer.counters`).
public struct ProxyCounters: Sendable, Hashable {
    /// Client connections open now.
    public var openConnections: Int = 0
    /// Client connections accepted since start (refused ones not included).
    public var accepted: UInt64 = 0
    /// Client connections refused because `maxConnections` were open.
    public var refusedByCap: UInt64 = 0
    /// The connection cap in force (`ProxyConfiguration.maxConnections`, lowered to what the
    /// file-descriptor limit allows: `DescriptorBudget`).
    public var connectionCap: Int = 0
    /// The soft file-descriptor limit (RLIMIT_NOFILE) after start raised it to the hard one.
    public var descriptorLimit: UInt64 = 0
    /// Client connections refused because their address held `maxConnectionsPerClient`.
    public var refusedPerClient: UInt64 = 0
    /// accept(2) failures for lack of file descriptors (EMFILE, ENFILE): those clients waited.
    public var acceptsFailedForDescriptors: UInt64 = 0
    /// Connections closed because a request head was not complete in time (`headTimeout`).
    public var headTimeouts: UInt64 = 0
    /// Transparent mode: connections reset because they were not redirected by a NAT rule (no
    /// original destination, or it was the listener itself, which would loop).
    public var notRedirected: UInt64 = 0
    /// Flows closed, by final status (the five of `FlowStatus.closedByProxy`).
    public var closedByStatus: [FlowStatus: UInt64] = [:]
    /// Bytes read from clients and from servers (plaintext when inspected).
    public var bytesFromClients: UInt64 = 0
    public var bytesFromServers: UInt64 = 0
    /// Times during this run a client was remembered for a host and port (pinned, or lacking
    /// tv's root: `PinKind`). Events, not entries: a client forgotten and remembered again counts
    /// twice; `tv pinned` lists what is remembered now.
    public var pinningDetections: UInt64 = 0
    /// Client legs that ended as each of the three kinds (`ClientLegOutcome`): the client does
    /// not trust tv's root, possible pinning, the client left.
    public var clientLacksRoot: UInt64 = 0
    public var possiblePinning: UInt64 = 0
    public var clientLeft: UInt64 = 0
    /// Upstream TLS handshakes that resumed a session.
    public var upstreamResumptions: UInt64 = 0
    /// Client-leg TLS handshakes that resumed a session (ticket).
    public var clientResumptions: UInt64 = 0
    /// Bytes moved with splice(2) (passed-through TLS, no copy into user space).
    public var splicedBytes: UInt64 = 0
    /// Connections whose HTTP exchanges stopped being read because their stream broke the HTTP
    /// rules (or tv's bounds) after it had been read as HTTP; forwarding went on (issue 16).
    public var exchangeReadingStopped: UInt64 = 0
    /// `--busy-poll`: spins that ended without work (the loop then slept), and spins that found
    /// work, summed over the loops (`BusyPollPolicy`; 0 when off).
    public var busyPollsFoundNothing: UInt64 = 0
    public var busyPollsFoundWork: UInt64 = 0
    /// Leaves taken from the cache vs. minted (from the leaf cache).
    public var leafCacheHits: Int = 0
    public var leafCacheMisses: Int = 0
    /// Closed connections offered for inspection, by `InspectionOutcome.key` (`tv diag`).
    public var inspection: [String: UInt64] = [:]
}

/// Per-loop counters: written only by their loop (relaxed atomics, no contention, no lock on the
/// data path), summed by whoever reads.
final class LoopCounters: Sendable {
    let accepted = Atomic<UInt64>(0)
    let bytesFromClients = Atomic<UInt64>(0)
    let bytesFromServers = Atomic<UInt64>(0)
    let closedNotEncrypted = Atomic<UInt64>(0)
    let closedEncrypted = Atomic<UInt64>(0)
    let closedInspected = Atomic<UInt64>(0)
    let closedKeptPrivate = Atomic<UInt64>(0)
    let closedFailed = Atomic<UInt64>(0)
    let pinned = Atomic<UInt64>(0)
    let upstreamResumptions = Atomic<UInt64>(0)
    let clientResumptions = Atomic<UInt64>(0)
    let splicedBytes = Atomic<UInt64>(0)
    let headTimeouts = Atomic<UInt64>(0)
    let exchangeReadingStopped = Atomic<UInt64>(0)
    let clientLacksRoot = Atomic<UInt64>(0)
    let possiblePinning = Atomic<UInt64>(0)
    let clientLeft = Atomic<UInt64>(0)
    /// `--busy-poll`'s counts, published by the loop's `EpollLoop`.
    let busyPoll = BusyPollCounts()
    /// `InspectionOutcome` counts by key: written at close by this loop only, read by `counters`
    /// (a lock taken once per closed connection, never on the byte path).
    let inspection = Mutex<[String: UInt64]>([:])

    func countInspection(_ outcome: InspectionOutcome) {
        inspection.withLock { $0[outcome.key, default: 0] &+= 1 }
    }

    func countClientOutcome(_ outcome: ClientLegOutcome) {
        switch outcome {
        case .lacksRoot: clientLacksRoot.wrappingAdd(1, ordering: .relaxed)
        case .possiblePinning: possiblePinning.wrappingAdd(1, ordering: .relaxed)
        case .clientLeft: clientLeft.wrappingAdd(1, ordering: .relaxed)
        }
    }

    func countClosed(_ kind: FlowStatus) {
        switch kind {
        case .notEncrypted: closedNotEncrypted.wrappingAdd(1, ordering: .relaxed)
        case .encrypted: closedEncrypted.wrappingAdd(1, ordering: .relaxed)
        case .inspected: closedInspected.wrappingAdd(1, ordering: .relaxed)
        case .keptPrivate: closedKeptPrivate.wrappingAdd(1, ordering: .relaxed)
        case .failed: closedFailed.wrappingAdd(1, ordering: .relaxed)
        case .interrupted: break  // the flow writer's word for a flow never closed; not the proxy's
        }
    }
}

extension LoopCounters {
    func closedCount(_ kind: FlowStatus) -> UInt64 {
        switch kind {
        case .notEncrypted: return closedNotEncrypted.load(ordering: .relaxed)
        case .encrypted: return closedEncrypted.load(ordering: .relaxed)
        case .inspected: return closedInspected.load(ordering: .relaxed)
        case .keptPrivate: return closedKeptPrivate.load(ordering: .relaxed)
        case .failed: return closedFailed.load(ordering: .relaxed)
        case .interrupted: return 0
        }
    }
}
