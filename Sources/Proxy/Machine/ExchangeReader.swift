import FlowTerms
import Wire

/// Reads the HTTP exchanges of one connection from its plaintext as the relay passes it on, both
/// directions, without copying the stream: HTTP/1 with `Wire`'s head parser and body framing
/// (`HTTP1ExchangeReading`), HTTP/2 with `Wire`'s frame scanner and one nghttp2 HPACK inflater
/// per direction (`HTTP2ExchangeReading`; no HTTP/2 session of its own). Pure: bytes and times
/// in, `ExchangeRecord`s out (each exchange once when its request head is read, as `.open`, and
/// once when it ends, `.complete` or `.incomplete`; between, `.open` again at its response head
/// when the body streams past that burst, and every 2 s or more while its bytes move).
///
/// Bounded per connection: heads up to 64 KiB, header blocks up to 256 KiB, at most
/// `Settings.maxOpen` exchanges waiting at once (HTTP/2 streams past it are read on without
/// rows, counted), and rows as `RequestRowAllowance` allows (the rest read on, counted; both
/// counts are `requestsLeftOut`). HTTP/1 bytes tv cannot follow are refused
/// (`Stop.refused`, `ExchangeRefusal`: not forwarded, answered where an answer fits, the
/// connection closed), so no request passes without its row; so is HTTP/2 that breaks the
/// rules or floods (`HTTP2ConnectionError`: GOAWAYs in its place). Either way what is open
/// becomes `.incomplete` and `stop` says why.
final class ExchangeReader {
    /// What the reader knows of the connection.
    struct Settings: Equatable {
        /// The flow the exchanges belong to.
        var flowID: Int64
        /// `https` (inspected TLS) or `http` (plain), for HTTP/1 requests whose target has none.
        var scheme: String
        /// Content is kept: paths keep their query strings.
        var keepsQuery: Bool
        /// ALPN chose h2: the connection is HTTP/2 from its first byte.
        var http2: Bool
        /// ALPN chose http/1.1: the connection is HTTP/1 from its first byte.
        var http1 = false
        /// Most exchanges (HTTP/1 requests waiting for responses, HTTP/2 streams) open at once.
        var maxOpen = RequestRowAllowance.streamsFollowed
        /// Reverse mode: every request goes to this target (its scheme and `host:port`); nil
        /// elsewhere. A row takes its scheme (the server got the request over it, RFC 9110 §7.1)
        /// and its authority only when the request names none: the URL's host is the request's
        /// own Host or :authority, as in every mode, and the target is where it was sent
        /// (`RequestDestination`: `sentTo`, `--curl --connect-to`). Recorded as the target's, a
        /// trial's `Host: b.test` was not said (and `--curl` dropped it); recorded as the client's
        /// without `sentTo`, an earlier trial's `--curl` replayed to `other.invalid:9`.
        var target: (scheme: String, authority: String)?
        /// How many of the connection's requests get rows (the rest are counted).
        var requestRows = RequestRowAllowance.standard

        /// tv knows the stream is HTTP before its first byte: ALPN chose h2 or http/1.1, or tv
        /// is the HTTP front end of an http:// or https:// server (reverse mode). Its bytes are
        /// then read as HTTP whatever they are: a first request that does not begin like one is
        /// a broken request, refused (`ExchangeRefusal`: not forwarded, tv's 400, the close, as
        /// nginx answers it), and server bytes before any request are bytes no request asked
        /// for. Elsewhere (TLS without ALPN to an arbitrary port, a plain relay) such first
        /// bytes are another protocol, relayed unread (`Stop.notHTTP`). Relayed so on an ALPN
        /// http/1.1 connection and in reverse mode, a trial's `\x00GET /first`, `G\x01T /`, a
        /// junk first line and a TAB after the method reached a lax server, and so did the
        /// request after each, with no row.
        var knowsHTTP: Bool { http1 || http2 || target != nil }

        static func == (a: Settings, b: Settings) -> Bool {
            a.flowID == b.flowID && a.scheme == b.scheme && a.keepsQuery == b.keepsQuery && a.http2 == b.http2 && a.http1 == b.http1
                && a.maxOpen == b.maxOpen && a.target?.scheme == b.target?.scheme && a.target?.authority == b.target?.authority
                && a.requestRows == b.requestRows
        }
    }

    /// Why reading stopped.
    enum Stop: Equatable {
        /// The connection does not speak HTTP: its first bytes are something else, where tv
        /// cannot know it is HTTP (`Settings.knowsHTTP`); they go on, unread, and an inspected
        /// flow says so (`ConnectionFailure.notReadAsHTTP`).
        case notHTTP(NotHTTPStart)
        /// An upgrade (101) or CONNECT turned the connection into a tunnel of something else.
        case tunnel
        /// tv could not start an HPACK decoder (one sentence): the reading stops, the bytes go on
        /// (`ConnectionMachine.Event.readingNote`). HTTP/2 that breaks the rules is refused
        /// (`refused`, `HTTP2ConnectionError`).
        case malformed(String)
        /// HTTP/1 bytes tv cannot follow, from a client or a server: a head another party could
        /// read otherwise (one that breaks the rules, obs-fold, Content-Length beside
        /// Transfer-Encoding, the request-smuggling and response-splitting risks of RFC 9112
        /// §6.1, §6.3), a chunked body whose end cannot be found, bytes no request asked for,
        /// more requests waiting than `Settings.maxOpen`. The driver holds the burst back from
        /// `ExchangeRefusal.passing` on and the machine answers or closes
        /// (`ConnectionMachine.Event.exchangeRefused`); where earlier requests still wait for
        /// their responses, the client's bytes were refused before (`takeHold`) and this comes
        /// once those responses went on. Forwarded unread, such requests reached
        /// the server while the rows said something else or nothing (trials: one POST through a
        /// tunnel recorded as a POST and a GET; a `GET /hidden-…` after a valid 16-digit chunk
        /// size served by nginx with no row).
        /// (Boxed: the reader of every read connection holds its `stop`.)
        indirect case refused(ExchangeRefusal)
        /// The connection ended.
        case ended
    }

    let settings: Settings
    /// Why reading stopped; nil while it goes on.
    private(set) var stop: Stop?
    private var http1: HTTP1ExchangeReading?
    private var http2: HTTP2ExchangeReading?
    /// The connection is read as HTTP/1: a reader released while idle (`releaseIdle`) is made
    /// again at the next byte without looking for the HTTP/2 preface.
    private var readsHTTP1 = false
    /// The HTTP/1 exchanges read before the reader was last released (their numbering goes on).
    private var http1Sequence = 0

    /// Which requests get rows: the records of the others are not told (`requestsLeftOut`).
    private var rows: RequestRowAllowance

    /// Requests read and counted without a row: past `Settings.requestRows`, and HTTP/2 streams
    /// opened while `Settings.maxOpen` were followed (`HTTP2ExchangeReading.streamsLeftOut`).
    var requestsLeftOut: Int { rows.leftOut + streamsLeftOut + (http2?.streamsLeftOut ?? 0) }
    /// The HTTP/2 half's `streamsLeftOut` when reading stopped (the half is gone then).
    private var streamsLeftOut = 0

    init(_ settings: Settings) {
        self.settings = settings
        rows = settings.requestRows
        if settings.http2 { http2 = HTTP2ExchangeReading(settings) }
    }

    /// Reads `bytes` that went `direction` at `micros` (µs since the epoch), telling `emit`
    /// each exchange that started or ended, in order.
    func feed(_ bytes: UnsafeRawBufferPointer, _ direction: Direction, at micros: Int64, emit: (ExchangeRecord) -> Void) {
        guard stop == nil, !bytes.isEmpty else { return }
        if http1 == nil && http2 == nil {
            // A client that starts with the HTTP/2 preface speaks h2 with prior knowledge ("PRI "
            // begins no HTTP/1 request: RFC 9113 §3.4 reserves the method).
            if !readsHTTP1, direction == .clientToServer, HTTP2FrameScanner.opensWithPreface(bytes) {
                http2 = HTTP2ExchangeReading(settings)
            } else {
                http1 = HTTP1ExchangeReading(settings, sequence: http1Sequence)
                readsHTTP1 = true
            }
        }
        var due = false
        if progress == nil { progress = FlowProgressReport(startMicros: micros) } else { due = progress!.isDue(atMicros: micros) }
        let found: Stop?
        if due {
            // A burst that told rows itself (a head, an end) tells no open row again.
            var told = false
            found = read(bytes, direction, at: micros) { told = true; emit($0) }
            if found == nil, !told {
                func pass(_ record: ExchangeRecord) { if rows.passes(record, at: micros) { emit(record) } }
                if let http2 { http2.eachOpen(pass) } else { http1?.eachOpen(pass) }
            }
        } else {
            found = read(bytes, direction, at: micros, emit: emit)
        }
        if let found { halt(found, at: micros, emit: emit) }
    }

    /// Reads a burst; `emit` hears the records of the requests that get rows (`rows`).
    private func read(_ bytes: UnsafeRawBufferPointer, _ direction: Direction, at micros: Int64, emit: (ExchangeRecord) -> Void) -> Stop? {
        func pass(_ record: ExchangeRecord) { if rows.passes(record, at: micros) { emit(record) } }
        if let http2 { return http2.feed(bytes, direction, at: micros, emit: pass) }
        return http1!.feed(bytes, direction, at: micros, emit: pass)
    }

    /// While bytes move, the open exchanges are told again at most every
    /// `FlowProgressReport.intervalMicros` (in a burst that told none itself), so a download or
    /// upload that streams for minutes shows its sizes growing in `tv requests` (its row kept
    /// the sizes of its head until it ended: a trial). Nil until the first burst.
    private var progress: FlowProgressReport?

    /// An HTTP/1 request head is part way: its first byte came and its empty line did not (the
    /// driver's `HeadDeadline` runs meanwhile, as on the plain path; a slowloris client trickling
    /// one header line a second inside inspected TLS was never closed: a trial). False over
    /// HTTP/2 and once reading stopped.
    var readsRequestHead: Bool { requestHeadStartedAt != nil }

    /// When the HTTP/1 request head part way began (the µs its first burst was fed at); nil when
    /// none is (`readsRequestHead`).
    var requestHeadStartedAt: Int64? {
        // Reading stopped, the HTTP/1 half is gone (`halt`): no look at `stop` needed.
        http1?.requestHeadStartedAt
    }

    /// Where, in the burst just fed, the HTTP/1 head still part way at its end began (0: in an
    /// earlier burst): the driver holds the bytes from there back until the head is whole, so a
    /// head tv refuses at its end (past `HTTP1HeadParser.defaultMaxHeadBytes`, or broken) reaches
    /// the other side in no part, as the plain path holds one (a 1.29 MB request head went
    /// through an inspected tunnel, a trial). Nil when no head is part way, over HTTP/2, once
    /// reading stopped, and for the connection's first client bytes where tv cannot know the
    /// stream is HTTP (`Settings.knowsHTTP`: another protocol's first line waits for its answer).
    var heldHeadStart: Int? {
        http1?.heldHeadStart
    }

    /// An HTTP/1 head is part way `direction` and its bytes are held (`heldHeadStart`): false
    /// once reading stopped, so what the driver held then goes on.
    func holdsHead(_ direction: Direction) -> Bool {
        http1?.holdsHead(direction) ?? false
    }

    /// No earlier request waits for its response and none is part way: tv's answer to the head
    /// being read (a 408) would be read as its own.
    var requestHeadAnswerable: Bool {
        http1?.isIdleButForHead ?? false
    }

    /// Whether an HTTP/1 request head ended in what was fed since the last call with its body
    /// still to come (`HTTP1ExchangeReading.takeBodyWait`): the driver acknowledges the head at
    /// once (TCP_QUICKACK), so a client whose Nagle's algorithm holds a small body back until
    /// then does not wait out the delayed ACK (Python's `requests` through tv: 44 ms a POST).
    func takeRequestBodyWait() -> Bool {
        http1?.takeBodyWait() ?? false
    }

    /// The client's bytes refused while earlier requests wait for their responses
    /// (`ExchangeRefusal.awaitsResponses`), once, after the burst that refused them: the driver
    /// passes on what came before them (`passing`), the machine holds the client, and the
    /// reading goes on with the server's bytes until `stop` is that refusal's answer. Nil over
    /// HTTP/2 and otherwise.
    func takeHold() -> ExchangeRefusal? {
        http1?.takeHold()
    }

    /// tv is about to answer the request waiting for its response itself and close: a held
    /// refusal's answer never comes, and its row ends refused and unanswered
    /// (`HTTP1ExchangeReading.abandonHold`).
    func abandonHold(at micros: Int64, emit: (ExchangeRecord) -> Void) {
        guard stop == nil else { return }
        http1?.abandonHold(at: micros) { if rows.passes($0, at: micros) { emit($0) } }
    }

    /// The first GOAWAY with an error code either side of HTTP/2 sent, once
    /// (`HTTP2ExchangeReading.takeGoAway`); nil over HTTP/1.
    func takeGoAway() -> HTTP2GoAway? {
        http2?.takeGoAway()
    }

    /// The first malformed HTTP/2 request read, once (`HTTP2ExchangeReading.takeMalformed`);
    /// nil over HTTP/1.
    func takeMalformedRequest() -> HTTP2MalformedRequest? {
        http2?.takeMalformed()
    }

    /// HTTP/2 streams the client reset wait for their response heads: the driver calls `settle`
    /// once `HTTP2ExchangeReading.cancelledWaitMicros` passed, bytes moving or not.
    var awaitsCancelledResponses: Bool { (http2?.cancelledWaiting ?? 0) > 0 }

    /// Ends the HTTP/2 streams the client reset whose wait for their response head is over at
    /// `micros` (`cancelled`, without a status), telling `emit` the records that get rows.
    func settle(at micros: Int64, emit: (ExchangeRecord) -> Void) {
        guard stop == nil, let http2 else { return }
        http2.settle(at: micros) { record in if rows.passes(record, at: micros) { emit(record) } }
    }

    /// Where to write the server's last burst apart, once (`HTTP2ExchangeReading.takeSplit`).
    func takeResponseSplit() -> Int? {
        http2?.takeSplit()
    }

    /// No exchange is open and nothing of one is half read (HTTP/1: no head or body part way;
    /// HTTP/2: no stream open), so closing the connection now cuts no request or response;
    /// false once reading stopped (what the stream holds is not known then).
    var isBetweenExchanges: Bool {
        guard stop == nil else { return false }
        if let http2 { return http2.isBetweenExchanges }
        return http1?.isBetweenExchanges ?? true
    }

    /// An HTTP/1 request was read whole and no byte of any response has come since: an answer
    /// sent to the client now would be read as its response. False over HTTP/2 (a stream's
    /// answer would need frames of its own) and once reading stopped.
    var awaitsResponse: Bool {
        guard stop == nil, http2 == nil else { return false }
        return http1?.awaitsResponse ?? false
    }

    /// The connection went quiet (the relay's idle-buffer timer, `IdleBufferPolicy`): the HTTP/1
    /// reader is dropped when no exchange is open and no head or body is half read, keeping only
    /// its count of exchanges; the next byte makes a new one, so an idle keep-alive connection
    /// holds no reader (~1 KiB: the reader, its heads' and bodies' scanners, its queue). HTTP/2
    /// keeps its reader: its HPACK tables must outlive the quiet. Returns true when released.
    @discardableResult
    func releaseIdle() -> Bool {
        guard let reader = http1, reader.isBetweenExchanges else { return false }
        http1Sequence = reader.sequence
        http1 = nil
        return true
    }

    /// The connection ended at `micros`: every exchange still open ends with it (a response
    /// delimited by the close is complete; anything else is incomplete).
    func end(at micros: Int64, emit: (ExchangeRecord) -> Void) {
        if stop == nil { halt(.ended, at: micros, emit: emit) }
    }

    private func halt(_ reason: Stop, at micros: Int64, emit: (ExchangeRecord) -> Void) {
        stop = reason
        func pass(_ record: ExchangeRecord) { if rows.passes(record, at: micros) { emit(record) } }
        http1?.end(at: micros, emit: pass)
        http2?.end(at: micros, emit: pass)
        streamsLeftOut += http2?.streamsLeftOut ?? 0
        http1 = nil
        http2 = nil
    }
}
