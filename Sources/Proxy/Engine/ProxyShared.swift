import LocalCA
import Synchronization
import FlowTerms

/// What every loop of one server reads: the configuration, the TLS contexts, the policy inputs,
/// the sinks, and the few counters that must be global (open connections for the cap, flow ids).
///
/// Sendable: every stored property is immutable, Sendable, or an atomic.
final class ProxyShared: Sendable {
    let configuration: ProxyConfiguration
    let contexts: TLSContexts
    /// The CA leaves are minted from, its cache and its key-type plan, swapped whole when a
    /// live session's CA is made or remade (`setAuthority`); connections already past their
    /// handshake keep theirs.
    private let caMaterial: Mutex<CAMaterial>
    /// The leaf cache in force now (nil: no CA, nothing can be inspected).
    var leafCache: LeafCache? { caMaterial.withLock { $0.leafCache } }
    /// Which leaf key types a client leg presents (the CA's leaf key type, and the other
    /// algorithm's for a client that cannot use it).
    var leafKeys: LeafKeyPlan { caMaterial.withLock { $0.leafKeys } }
    /// tv listens on every address (`0.0.0.0`, `::`): each accepted socket's own address is
    /// noted on its flow (`FlowFacts.reached`).
    let listensOnEveryAddress: Bool
    let ignoreHosts: [HostPattern]
    let allowHosts: [HostPattern]
    let inspection: Atomic<Bool>
    let openConnections = Atomic<Int>(0)
    let refusedByCap = Atomic<UInt64>(0)
    /// The cap in force: `configuration.maxConnections`, lowered to what the descriptors allow.
    let connectionCap: Int
    /// The soft RLIMIT_NOFILE after start (0: unknown).
    let descriptorLimit: UInt64
    /// Open connections per client address (`ClientAddressLimit`), shared by the loops.
    let clientAddresses: Mutex<ClientAddressLimit>
    let refusedPerClient = Atomic<UInt64>(0)
    /// accept(2) failures for lack of descriptors (EMFILE, ENFILE).
    let acceptsFailedForDescriptors = Atomic<UInt64>(0)
    /// One notice a minute about the cap, and one about descriptors.
    let capNotices = Mutex(NoticeThrottle())
    /// One notice a minute about SYNs a front end dropped at the cap (`synDroppedAtCap`).
    let synCapNotices = Mutex(NoticeThrottle())
    let descriptorNotices = Mutex(NoticeThrottle())
    let notRedirectedNotices = Mutex(NoticeThrottle())
    /// Flows a front end closed itself, never handed to a loop (the TUN's refused or abandoned
    /// connects), by status: counted with the loops' closed flows (`ProxyServer.frontEndClosed`).
    let frontEndClosed = Mutex<[FlowStatus: UInt64]>([:])
    /// Transparent mode: connections refused because no redirect rule sent them (no original
    /// destination, or the destination is the listener itself).
    let notRedirected = Atomic<UInt64>(0)
    private let flowIDs: FlowIDSequence
    let resolver: Resolver
    let sink: (any FlowSink)?
    let recorder: (any ChunkRecorder)?
    let pinning: any PinningMemory
    let pinningEvidence: PinningEvidence
    /// What every connection's machine recalls about a pin key (`ConnectionMachine.init`'s
    /// `recall`): one closure for all of them, not a context allocated per connection.
    let recall: @Sendable (PinKey, Int64) -> PinningRecall?

    /// - Parameters:
    ///   - connectionCap: the cap in force (nil: `configuration.maxConnections`).
    ///   - descriptorLimit: the soft descriptor limit it was sized from (0: unknown).
    init(configuration: ProxyConfiguration, connectionCap: Int? = nil, descriptorLimit: UInt64 = 0) throws {
        self.configuration = configuration
        listensOnEveryAddress = IPAddress(configuration.listenHost).map { $0.bytes.allSatisfy { $0 == 0 } } ?? false
        let cap = connectionCap ?? configuration.maxConnections
        self.connectionCap = cap
        self.descriptorLimit = descriptorLimit
        clientAddresses = Mutex(ClientAddressLimit(
            maximum: configuration.maxConnectionsPerClient ?? ClientAddressLimit.defaultMaximum(connectionCap: cap)))
        ignoreHosts = try configuration.ignoreHosts.map(HostPattern.init)
        allowHosts = try configuration.allowHosts.map(HostPattern.init)
        contexts = try TLSContexts(configuration: configuration, sessionCache: UpstreamSessionCache())
        caMaterial = Mutex(CAMaterial(authority: configuration.authority,
                                      leafCache: configuration.leafCache ?? configuration.authority.map { LeafCache(authority: $0) },
                                      suites: contexts.serverSuiteKeys))
        inspection = Atomic(configuration.inspectionEnabled)
        flowIDs = configuration.flowIDs
        resolver = Resolver(threads: configuration.resolverThreads)
        sink = configuration.flowSink
        recorder = configuration.chunkRecorder
        pinning = configuration.pinningMemory
        pinningEvidence = PinningEvidence(rule: configuration.pinningEvidence)
        let pinning = pinning, evidence = pinningEvidence
        recall = { key, start in
            pinning.recall(key) ?? (pinning.learns && evidence.retry(key, connectionStart: start) ? .retry : nil)
        }
    }

    func newFlowID() -> UInt64 { UInt64(flowIDs.next()) }

    /// The CA in force now.
    var authority: CertificateAuthority? { caMaterial.withLock { $0.authority } }

    /// Mints from `authority` for handshakes started from now on (nil: none; nothing is inspected),
    /// and trusts its root when verifying servers too, as the first CA's is; the root it replaces
    /// no longer verifies servers (`TLSContexts.untrustUpstream`).
    func setAuthority(_ authority: CertificateAuthority?) {
        let suites = contexts.serverSuiteKeys
        let previous = caMaterial.withLock { material -> CertificateAuthority? in
            let previous = material.authority
            material = CAMaterial(authority: authority, leafCache: authority.map { LeafCache(authority: $0) }, suites: suites)
            return previous
        }
        if let previous, previous.root.sha256 != authority?.root.sha256 { contexts.untrustUpstream(previous.root) }
        if let authority { contexts.trustUpstream(authority.root) }
    }

    /// The policy as it stands now (inspection and the CA may be switched live).
    var policy: InterceptionPolicy {
        InterceptionPolicy(inspectionEnabled: inspection.load(ordering: .relaxed),
                           caAvailable: leafCache != nil,
                           ignoreHosts: ignoreHosts, allowHosts: allowHosts)
    }
}

/// A CA, the cache of leaves minted from it and the key types its leaves come in, swapped together.
struct CAMaterial: Sendable {
    let authority: CertificateAuthority?
    let leafCache: LeafCache?
    let leafKeys: LeafKeyPlan

    init(authority: CertificateAuthority?, leafCache: LeafCache?, suites: LeafKeyPlan.CipherSuiteKeys) {
        self.authority = authority
        self.leafCache = leafCache
        leafKeys = LeafKeyPlan(primary: authority?.leafKeyType ?? .ecdsaP256, suites: suites)
    }
}
