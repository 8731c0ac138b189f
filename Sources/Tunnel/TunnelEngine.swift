import CTVShims
import FlowTerms
import Foundation
import Proxy
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What one TUN engine needs besides the device: where its listeners are, how upstream sockets
/// are made, the limits.
public struct TunnelEngineConfiguration: Sendable {
    public var plan: TunnelAddressPlan
    /// The listener sockets (bound to `plan.address4` / `address6`, listening) and their ports:
    /// the `L` of the rewrite rules, per family.
    public var listener4: (fd: Int32, port: UInt16)
    public var listener6: (fd: Int32, port: UInt16)?
    /// SO_MARK for every upstream socket (`--mode tun`), nil for none (`tv exec`: upstream
    /// sockets live outside the namespace anyway).
    public var mark: UInt32?
    /// Whether queries to `plan.dns4`/`dns6` port 53 are answered (forwarded to `resolvers`).
    public var servesDNSAddress = true
    /// Whether connections and datagrams to the TUN's own networks are refused (`--mode tun`,
    /// where tv's upstream sockets share the TUN's namespace: `PacketDrop.tunnelNetwork`); in
    /// `tv exec` they live outside it, and such an address is an ordinary destination there.
    public var refusesTunnelNetwork = false
    /// Where DNS queries to the DNS address go (the host's resolv.conf nameservers).
    public var resolvers: [SocketAddress] = []
    /// Whether the engine stops because a command ended (`tv exec`), not because tv was
    /// stopped (`--mode tun`): a connect still going then says so (`.stillConnecting`).
    public var endsWithCommand = false
    /// Responses the proxy's relays read from DNS over TCP (`ProxyConfiguration.dnsAnswers`, the
    /// same object), whose names the engine learns as it does UDP answers'; nil: none.
    public var tcpDNSAnswers: TCPDNSAnswers?
    /// Seconds for an upstream TCP connect before tv gives up (the program is then answered
    /// nothing, as the network answered tv: `FailedConnectAnswer.nothing`); nil, the default:
    /// none of tv's own. tv's kernel then gives up as the program's does (ETIMEDOUT after its SYN
    /// retries, 133 s on Linux 6.18 with its defaults), and tv gives up sooner when the program
    /// stops resending its SYN (`SYNRetrySchedule`), so a server that answers late is reached
    /// as without tv (it was 10 s, the explicit proxy's: a server answering at 12 s was not).
    public var connectTimeout: Double?
    /// Seconds without a datagram before a UDP flow is closed.
    public var udpIdleTimeout: Double = 60
    /// Seconds to wait for a DNS answer.
    public var dnsTimeout: Double = 5
    /// Limits: NAT entries, UDP flows (each holds a socket), fragments being reassembled.
    public var maximumTCPEntries = 65_536
    public var maximumUDPFlows = 4_096
    public var fragmentDatagrams = 256
    public var fragmentBytes = 4 << 20
    /// Verify TCP/UDP checksums of packets read (a wrong one is dropped and counted). TCP
    /// segments the engine only forwards are left to the kernel's own check (`TCPChecksumPolicy`).
    public var verifyChecksums = true

    public init(plan: TunnelAddressPlan, listener4: (fd: Int32, port: UInt16), listener6: (fd: Int32, port: UInt16)?) {
        self.plan = plan
        self.listener4 = listener4
        self.listener6 = listener6
    }
}

/// Receives the names DNS answers gave (for the `host_names` table), on the engine thread:
/// return at once.
public typealias DNSAnswerObserver = @Sendable (_ answers: [DNSResolvedAddress], _ atMicros: Int64) -> Void

/// The TUN engine: one dedicated thread that reads every packet from the TUN and
/// - rewrites TCP so the kernel's own stack terminates it on our listener (tun-nat.md rules 1
///   and 2, connect-first), accepts there and hands each connection with its pre-connected
///   upstream socket to the proxy (`ProxyServer.adopt`), which inspects or passes it through;
/// - forwards UDP through one connected socket per flow and crafts the replies back;
/// - answers DNS at the tunnel's DNS address through the host's resolvers, one flow per query;
/// - reassembles fragments, counts and drops everything else.
///
/// Upstream sockets are created on the engine thread, so they belong to the namespace the thread
/// started in (the host's); the TUN fd and the listeners may belong to another one.
public final class TunnelEngine: Sendable {
    public let counters = TunnelCounters()
    public let configuration: TunnelEngineConfiguration
    private let tunFD: Int32
    /// How the TUN was opened (virtio-net header and offloads, or plain).
    public let offload: TUNOffload
    private let proxy: ProxyServer
    private let sink: (any FlowSink)?
    private let dnsObserver: DNSAnswerObserver?
    /// Where every packet read from or written to a program goes (the capture), if anywhere.
    private let recorder: (any PacketRecorder)?
    /// The engine thread's inbox: `stop` posts the stop there.
    private let inbox = LoopInbox<EngineLoop>()
    private let finished = DispatchSemaphore(value: 0)
    private let started = Mutex(false)
    /// Why the engine stopped by itself (the TUN went away), if it did.
    private let failure = Mutex<String?>(nil)

    /// - Parameters:
    ///   - tunFD: the TUN (non-blocking, IFF_TUN | IFF_NO_PI); not closed by the engine.
    ///   - offload: how `tunFD` was opened (`TUNDevice.open`): with a virtio-net header before
    ///     every packet (IFF_VNET_HDR) or plain (`.off`).
    ///   - proxy: a running server (adopt-only is fine) that takes the TCP connections.
    ///   - sink: where UDP / DNS / refused-connect flows go (the proxy reports TCP flows itself).
    ///   - recorder: the packet capture: every packet the programs sent and received, with its
    ///     flow id (nil: none).
    public init(configuration: TunnelEngineConfiguration, tunFD: Int32, offload: TUNOffload, proxy: ProxyServer,
                sink: (any FlowSink)?, dnsObserver: DNSAnswerObserver?, recorder: (any PacketRecorder)? = nil) {
        self.configuration = configuration
        self.tunFD = tunFD
        self.offload = offload
        counters.tunOffloads.store(UInt64(offload.headerSize == 0 ? 0 : offload.offloads), ordering: .relaxed)
        counters.tunOffloadUnavailable.store(offload.unavailableReason == nil ? 0 : 1, ordering: .relaxed)
        self.proxy = proxy
        self.sink = sink
        self.dnsObserver = dnsObserver
        self.recorder = recorder
    }

    /// Starts the engine thread.
    /// - Throws: `TunnelError.cannotListen` when the event loop cannot be made.
    public func start() throws {
        let ready = DispatchSemaphore(value: 0)
        let setupError = Mutex<String?>(nil)
        let thread = Thread { [self] in
            // The kernel's name for the thread (Foundation's `name` does not set it here), so
            // /proc/PID/task/*/comm, top -H and perf tell the engine from the proxy's loops.
            _ = tv_set_thread_name("tv-tunnel")
            let loop: EngineLoop
            do {
                loop = try EngineLoop(configuration: configuration, tunFD: tunFD, offload: offload, inbox: inbox, proxy: proxy, sink: sink,
                                      dnsObserver: dnsObserver, recorder: recorder, counters: counters)
            } catch {
                setupError.withLock { $0 = "\(error)" }
                ready.signal()
                finished.signal()
                return
            }
            ready.signal()
            let reason = loop.run()
            failure.withLock { $0 = reason }
            loop.shutdown()
            finished.signal()
        }
        thread.name = "tv-tunnel"
        thread.start()
        ready.wait()
        if let error = setupError.withLock({ $0 }) { throw TunnelError.cannotListen(reason: error) }
        started.withLock { $0 = true }
    }

    /// Stops the thread: closes every upstream socket it still owns and the UDP flows (their
    /// flows are reported closed). Safe to call twice; waits for the thread.
    public func stop() {
        guard started.withLock({ s -> Bool in let was = s; s = false; return was }) else { return }
        inbox.post { $0.stop() }
        finished.wait()
        // The relays' DNS-over-TCP counts as they are at the end (housekeeping copies them).
        if let tcp = configuration.tcpDNSAnswers { counters.noteTCPDNS(tcp) }
    }

    /// Why the engine stopped on its own (e.g. "the TUN device went away"), or nil.
    public var stopReason: String? { failure.withLock { $0 } }
}
