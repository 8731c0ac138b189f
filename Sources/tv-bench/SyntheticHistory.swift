import FlowStore
import FlowTerms

/// A deterministic stand-in for weeks of a machine's traffic, for the FlowStore benchmark: the
/// same seed gives the same flows, so two runs (or two commits) fill identical stores.
///
/// Shapes (chosen to look like a desktop's history, not to flatter an index):
/// - start times spread evenly over `days` days up to `end`, each jittered within its slot, so ids
///   follow time only roughly (as a `tv exec` beside a `tv run` makes them);
/// - 2,000 host names, a few very popular (the rank is drawn as u³: the first 1 % of names carry
///   about a fifth of the flows); announced by SNI (70 %), the explicit proxy (10 %), QUIC (5 %),
///   inferred from DNS with other names of the address (10 %), or none (5 %, the address only);
/// - 40 clients (127.0.0.1 and 10.0.0.x), ports from the ephemeral range; IPv6 servers for 1 host in 8;
/// - statuses: encrypted 60 %, inspected 25 %, not encrypted 8 %, kept private 3 %, failed 3 %,
///   interrupted 1 %;
/// - programs: not known for 20 % (another machine, or gone before tv looked), else one of ten command names, curl and firefox the most
///   common, ssh rare;
/// - exchanges: 1 to 3 HTTP requests for each inspected or plain flow.
struct SyntheticHistory {
    /// Flows started per host rank follow u³; `hostCount` names.
    static let hostCount = 2_000
    static let programs = ["firefox", "curl", "firefox", "curl", "chrome", "python3", "node", "git", "apt", "ssh"]
    static let words = ["api", "cdn", "www", "static", "img", "login", "auth", "edge", "update", "telemetry", "mail", "push"]
    static let domains = ["example", "github", "googleapis", "akamaized", "cloudfront", "debian", "mozilla", "slack",
                          "fastly", "microsoft", "apple", "office", "twimg", "fbcdn", "wikipedia", "ubuntu"]
    static let tlds = ["com", "net", "org", "io", "de", "co.uk"]

    let flows: Int
    let end: Int64
    let days: Int64
    private var random: SplitMix64
    let hosts: [(name: String, address: String)]

    /// - Parameters: `flows` in all, over `days` days ending at `end` (µs since the epoch).
    init(flows: Int, end: Int64, days: Int64 = 28, seed: UInt64 = 0x7476_6265_6e63_6821) {
        self.flows = flows
        self.end = end
        self.days = days
        random = SplitMix64(seed: seed)
        var names: [(String, String)] = []
        var r = SplitMix64(seed: seed ^ 0x5bd1_e995)
        for i in 0..<SyntheticHistory.hostCount {
            let word = SyntheticHistory.words[Int(r.next() % UInt64(SyntheticHistory.words.count))]
            let domain = SyntheticHistory.domains[Int(r.next() % UInt64(SyntheticHistory.domains.count))]
            let tld = SyntheticHistory.tlds[Int(r.next() % UInt64(SyntheticHistory.tlds.count))]
            let name = "\(word)\(i % 7 == 0 ? "" : String(i)).\(domain).\(tld)"
            let address = i % 8 == 0 ? "2001:db8:\(i % 251):\(i / 251)::\(i % 97 + 1)"
                                     : "\(23 + i % 180).\(i / 180 % 250).\(i % 250).\(i % 253 + 1)"
            names.append((name, address))
        }
        hosts = names
    }

    /// The start of the history (µs since the epoch).
    var start: Int64 { end - days * 86_400_000_000 }

    /// The `i`th flow (ids are the writer's), its program and its exchanges.
    mutating func flow(_ i: Int, id: Int64) -> (FlowRecord, FlowProgram, [ExchangeRecord]) {
        let slot = (end - start) / Int64(flows)
        let startTime = start + Int64(i) * slot + Int64(random.next() % UInt64(max(slot, 1)))
        let u = Double(random.next() % 1_000_000) / 1_000_000
        let rank = min(Int(u * u * u * Double(SyntheticHistory.hostCount)), SyntheticHistory.hostCount - 1)
        let host = hosts[rank]
        let roll = random.next() % 100
        let status: FlowStatus = roll < 60 ? .encrypted : roll < 85 ? .inspected : roll < 93 ? .notEncrypted
            : roll < 96 ? .keptPrivate : roll < 99 ? .failed : .interrupted
        let originRoll = random.next() % 100
        let origin: HostOrigin = originRoll < 70 ? .sni : originRoll < 80 ? .connect : originRoll < 85 ? .quic
            : originRoll < 95 ? .dns : .none
        let client = Int(random.next() % 40)
        var flow = FlowRecord(
            id: id, startTime: startTime, clientAddress: client == 0 ? "127.0.0.1" : "10.0.0.\(client + 1)",
            clientPort: 32_768 + Int(random.next() % 28_000), serverAddress: host.address,
            serverPort: status == .notEncrypted ? 80 : 443, transport: origin == .quic ? .udp : .tcp,
            host: origin == .none ? nil : host.name, hostOrigin: origin,
            alpn: status == .notEncrypted ? nil : (origin == .quic ? "h3" : "h2"),
            tlsVersion: status == .notEncrypted ? nil : "TLSv1.3", status: status,
            failureReason: status == .failed ? "upstream_certificate" : nil,
            bytesUp: Int64(200 + random.next() % 5_000), bytesDown: Int64(500 + random.next() % 200_000),
            duration: Int64(1_000 + random.next() % 30_000_000),
            error: status == .failed ? "the server's certificate does not verify" : nil,
            clientVersions: ["TLSv1.3", "TLSv1.2"], clientALPN: ["h2", "http/1.1"])
        flow.lastActivityTime = startTime + (flow.duration ?? 0)
        if origin == .dns {
            flow.otherHosts = [hosts[(rank + 1) % hosts.count].name, hosts[(rank + 7) % hosts.count].name]
        }
        let programRoll = Int(random.next() % 100)
        let program: FlowProgram
        if programRoll < 20 {
            program = .notKnown(programRoll < 10 ? .otherMachine : ProgramUnknown.allCases.last!)
        } else {
            let command = SyntheticHistory.programs[programRoll >= 98 ? 9 : (programRoll - 20) % 9]
            program = .known(ProgramIdentity(pid: Int32(1_000 + programRoll), command: command, executable: "/usr/bin/" + command,
                                             uid: 1_000, user: "user"))
        }
        var exchanges: [ExchangeRecord] = []
        if status == .inspected || status == .notEncrypted {
            for seq in 1...Int(1 + random.next() % 3) {
                let time = startTime + Int64(seq) * 10_000
                exchanges.append(ExchangeRecord(
                    flowID: id, sequence: seq, httpVersion: "HTTP/2", method: seq == 1 ? "GET" : "POST",
                    scheme: status == .inspected ? "https" : "http", authority: host.name,
                    path: "/v\(seq)/items/\(random.next() % 10_000)", queryRemoved: seq == 2,
                    status: random.next() % 10 == 0 ? 404 : 200, requestBodyBytes: seq == 1 ? 0 : 512,
                    responseBodyBytes: 4_096, contentType: "application/json", requestTime: time,
                    responseTime: time + 2_000, endTime: time + 5_000, state: .complete))
            }
        }
        return (flow, program, exchanges)
    }
}

/// SplitMix64 (Steele, Lea, Flood 2014): a small, fast, fixed generator, so the synthetic
/// history is the same on every machine.
struct SplitMix64 {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}
