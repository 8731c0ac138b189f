import CTVShims
import Proxy

/// A UDP five-tuple as the app sees it: its socket and the destination it sent to.
struct UDPFlowKey: Hashable {
    var app: PacketEndpoint
    var remote: PacketEndpoint
}

/// One forwarded UDP association: a connected upstream socket and its flow facts; the loop
/// handler of that socket (readable: replies; EPOLLERR: its error queue). Confined to the engine
/// thread.
final class UDPFlow: LoopHandler {
    private unowned let engine: EngineLoop
    /// This flow's token on the engine's loop.
    var token: UInt64 = 0
    let key: UDPFlowKey
    let fd: Int32
    /// Where the socket is connected: the remote, or a resolver for the tunnel's DNS address.
    let upstream: PacketEndpoint
    /// Port 53: every query/answer is its own flow, and answers are read for names.
    let isDNS: Bool
    /// The flow of a non-DNS association (nil for DNS).
    var facts: FlowFacts? { didSet { changed = true } }
    /// The facts changed since they were last reported, and when that was (ns).
    var changed = false
    var reportedAt: UInt64 = 0
    var lastActivity: UInt64
    /// The socket's path-MTU mode: true for PMTUDISC_DO (`UDPPathMTU`), false for the default.
    var forbidsFragmentation = false
    /// The datagrams sent while `forbidsFragmentation` (the flows with an error queue), so an
    /// ICMP error about one is passed on quoting it with its own lengths (`SentDatagrams`).
    var sentDatagrams = SentDatagrams()
    /// A QUIC handshake being read for its name (`EngineQUIC.swift`), nil when none is.
    var quicReader: QUICNameReader?
    /// DNS: the queries waiting for answers, by message id.
    var queries: [UInt16: DNSQueryFlow] = [:]
    /// DNS: the queries answered lately, by message id, their flows as closed: a repeated
    /// answer is theirs (`DNSReplyOwner`).
    var answered = RecentDNSAnswers<DNSQueryFlow>()
    /// The program lookup for this flow has not answered yet (`EngineUDPErrors.swift`).
    var awaitsProgram = false
    /// A port unreachable for the app, held until the lookup answers (the whole ICMP packet),
    /// and the comment its capture keeps (`ICMPErrorNote`).
    var heldUnreachable: (packet: [UInt8], comment: String?)?
    /// DNS: the queries (by flow id) whose program lookup has not answered yet; an answer to one
    /// is held for it (`EngineDNSHold.swift`).
    var queriesAwaitingProgram: Set<UInt64> = []
    /// DNS: answers held for their query's lookup, in the order they came (so, earliest
    /// deadline first).
    var heldAnswers: [HeldDNSAnswer] = []

    init(engine: EngineLoop, key: UDPFlowKey, fd: Int32, upstream: PacketEndpoint, isDNS: Bool, now: UInt64) {
        self.engine = engine
        self.key = key
        self.fd = fd
        self.upstream = upstream
        self.isDNS = isDNS
        lastActivity = now
    }

    func loopEvent(side: Int, events: UInt32) {
        engine.syncClock()
        if events & tv_EPOLLERR != 0 { engine.udpErrorQueue(key) }
        engine.udpReadable(key)
    }

    func loopTimer(deadline: UInt64) {
        engine.syncClock()
        if isDNS { engine.releaseDueAnswers(self) } else { engine.releaseHeldUnreachable(self) }
    }
}

/// A resolver's answer held until its query's program lookup answers: the whole packet for the
/// program, and the moment it goes regardless (engine nanoseconds).
struct HeldDNSAnswer {
    let flow: UInt64
    let packet: [UInt8]
    let deadline: UInt64
    /// The comment its capture keeps (a port unreachable tv passes on: `ICMPErrorNote`).
    var comment: String? = nil
}

/// A DNS query waiting for its answer.
struct DNSQueryFlow {
    var facts: FlowFacts
    let deadline: UInt64
    /// The question asked (nil: the query could not be read), which an answer must repeat
    /// (`DNSAnswerMatch`).
    var question: DNSQuestion?
    /// Datagrams with the query's ID that answered another question (dropped by the program's
    /// resolver; said if no answer comes).
    var otherAnswers = 0
}
