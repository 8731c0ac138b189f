import FlowTerms

/// How many request rows one connection writes (`ExchangeReader`): its first `first`, then
/// `perSecond` more for each second since its first request; each request past that is counted
/// (`leftOut`), never written, and its flow says how many (`FlowFacts.requestsLeftOut`). Pure:
/// the reader hands it each record it reads, with the time, and writes those it passes.
///
/// One HTTP/2 connection of HEADERS each followed by RST_STREAM (CVE-2023-44487's "rapid
/// reset") made 200,000 rows in 20 s from 6.5 MiB (a trial); `tv flow` printed every one and
/// `tv export har` of it wrote 78 MB. A real browser's connection stays far inside the bound:
/// Chromium 156 put a page's 600 images on one connection, 602 requests (nghttpd -v, 127.0.0.1),
/// so one origin's page is one connection's rows; nginx 1.22 (Debian 12) ends an HTTP/2
/// connection after 1,000 requests (`keepalive_requests`; h2load -n 1500 -c 1: 1,000 succeeded,
/// then GOAWAY), so no connection to an nginx site goes past 1,000. 10,000 is ten times that;
/// the 10 a second after it keep a page open for a day that polls every second (86,400 rows) or
/// a single-page app loading 100 requests every 10 s, while a flood of 10,000 requests a second
/// is held to 10 rows a second of it.
public struct RequestRowAllowance: Sendable, Equatable {
    /// The allowance every connection gets: 10,000 rows, then 10 a second.
    public static let standard = RequestRowAllowance(first: 10_000, perSecond: 10)

    /// How many HTTP/2 streams of one connection are followed at once (`ExchangeReader.Settings`'
    /// `maxOpen`): a stream opened while that many wait for their responses gets no row and is
    /// counted with the requests past the allowance (`HTTP2ExchangeReading`). It bounds the
    /// reader's memory (a record a stream), not the client: a server that sets no
    /// SETTINGS_MAX_CONCURRENT_STREAMS lets a client open more without breaking a rule.
    public static let streamsFollowed = 256

    /// Rows a connection writes before its allowance grows with time.
    public let first: Int
    /// Rows added for each whole second since the connection's first request.
    public let perSecond: Int
    /// When the first request was read (µs since the epoch); nil before.
    private(set) var startMicros: Int64?
    /// Requests written.
    private(set) var written = 0
    /// Requests counted and not written.
    private(set) var leftOut = 0
    /// The highest exchange `sequence` decided so far (each exchange is decided at its first record).
    private var decided = 0
    /// Exchanges left out whose reading has not ended: their later records are left out too.
    private var leftOutOpen: Set<Int> = []

    /// An allowance of `first` rows, then `perSecond` more a second; nothing counted yet.
    public init(first: Int, perSecond: Int) {
        self.first = first
        self.perSecond = perSecond
    }

    /// Rows allowed by `micros` (µs since the epoch).
    func allowed(at micros: Int64) -> Int {
        guard let start = startMicros else { return first }
        let seconds = Int(max(0, micros - start) / 1_000_000)
        let (grown, o1) = seconds.multipliedReportingOverflow(by: perSecond)
        let (sum, o2) = first.addingReportingOverflow(grown)
        return o1 || o2 ? Int.max : sum
    }

    /// Whether to write `record`, read at `micros`. An exchange is decided at its first record
    /// (its request's head: a new `sequence`), and every later record of it (its response, its
    /// end) goes the same way.
    mutating func passes(_ record: ExchangeRecord, at micros: Int64) -> Bool {
        if record.sequence > decided {
            decided = record.sequence
            if startMicros == nil { startMicros = micros }
            if written < allowed(at: micros) {
                written += 1
                return true
            }
            leftOut += 1
            if record.state == .open { leftOutOpen.insert(record.sequence) }
            return false
        }
        guard leftOutOpen.contains(record.sequence) else { return true }
        if record.state != .open { leftOutOpen.remove(record.sequence) }
        return false
    }
}
