import Wire

/// The server → client half of `PlainHTTPMachine`: which responses are still awaited and where
/// each one ends, read from their framing as the bytes pass (RFC 9112 §6.3), and the start of a
/// response head held back until it is whole. Pure: it never emits; `read` says how much of a
/// chunk goes on and what, if anything, ends reading, and the machine acts on that.
///
/// A response head goes on only once it is whole (bounded by `HTTP1HeadParser`'s limit), so a
/// head tv cannot read, or one the server never finishes, can still be answered with tv's 502
/// (mitmproxy answers both the same way).
struct PlainHTTPResponses {
    /// A request whose response is still expected: its method (HEAD and CONNECT frame the
    /// response), and its Upgrade and Sec-WebSocket-Key, which a 101 must answer
    /// (`SwitchingProtocols`; nil without them, the usual request).
    struct Awaited: Equatable {
        var method: String
        var upgrade: String? = nil
        var webSocketKey: String? = nil
    }

    /// The requests whose responses are still expected, oldest first.
    private(set) var outstanding: [Awaited] = []
    /// The body being read (nil between responses).
    private(set) var body: HTTPBodyScanner?
    /// A 101 response switched the connection to another protocol: bytes flow raw both ways.
    private(set) var upgraded = false
    private var head = HTTPResponseHeadScanner()
    /// The start of a response head read in an earlier chunk, not passed on until it is whole.
    private var heldHead: [UInt8] = []

    /// What `read` found in one chunk from the server.
    struct Reading: Equatable {
        /// A head that began in an earlier chunk and ended in this one: it goes to the client
        /// before the chunk's `passing` bytes.
        var heldHeadFirst: [UInt8] = []
        /// The chunk's first `passing` bytes go on to the client now.
        var passing = 0
        /// A response said the server closes after it (RFC 9112 §9.6).
        var serverCloses = false
        /// Why reading ended in this chunk; nil when it goes on.
        var stop: Stop?
        /// Empty lines after the last awaited response, not passed on (after `passing`).
        var dropped = 0
    }

    enum Stop: Equatable {
        /// A head tv cannot read (one sentence with its RFC section); the bytes before it pass.
        case headUnreadable(String)
        /// A chunked body cannot be read on (`problem`: malformed, or past a bound of tv's): the
        /// bytes from its response's start pass no further. `headPassed`: the response's head
        /// reached the client in an earlier chunk, so it is cut; else none of the response went
        /// on (its head is held until whole) and tv's 502 can take its place after `passing`.
        case bodyRefused(ChunkedBodyProblem, headPassed: Bool)
        /// A 101 response: from here the connection is a tunnel (the whole chunk passes).
        case upgraded
        /// A 101 its request did not ask for (`SwitchingProtocols.check`): none of it passes
        /// (the bytes before it do), and tv's 502 takes its place.
        case switchRefused(SwitchingProtocols.Refusal)
        /// Bytes came when no response was awaited (this many, from `passing` on): none of them
        /// passes. A client reads a response it did not ask for as its next request's (response
        /// queue poisoning), and tv's request rows lost every request after it (a trial); as
        /// mitmproxy does ("Unexpected data from server"), the server's connection is closed.
        case unasked(bytes: Int)
    }

    /// A request went to the server: its response is awaited after those before it; `upgrade`
    /// and `webSocketKey`, its Upgrade and Sec-WebSocket-Key, for a 101 to answer.
    mutating func expect(_ method: String, upgrade: String? = nil, webSocketKey: String? = nil) {
        outstanding.append(Awaited(method: method, upgrade: upgrade, webSocketKey: webSocketKey))
    }

    /// A response head is awaited and none of it has reached the client (the response before
    /// it, if any, is whole): tv can still answer in the server's place.
    var awaitingHead: Bool { !outstanding.isEmpty && body == nil && !upgraded }

    /// No response is awaited or part way, and the connection is not a tunnel.
    var isIdle: Bool { outstanding.isEmpty && body == nil && !upgraded }

    /// A response is awaited or part way.
    var isUnderWay: Bool { !outstanding.isEmpty || body != nil }

    /// Reads the responses' framing in `chunk`: all of it passes but for the start of a head
    /// that is not whole yet, which is held until it is.
    mutating func read(_ chunk: UnsafeRawBufferPointer) -> Reading {
        var reading = Reading()
        var offset = 0
        // Where the response being read began in this chunk (0: its head began in an earlier
        // chunk and was held); nil: its head went on before this chunk.
        var responseStart: Int?
        while offset < chunk.count && !upgraded {
            if var current = body {
                offset += current.consume(UnsafeRawBufferPointer(rebasing: chunk[offset...]))
                if let problem = current.failure {
                    reading.stop = .bodyRefused(problem, headPassed: responseStart == nil)
                    if let responseStart {
                        // None of it went on: tv answers in its place.
                        body = nil
                        reading.heldHeadFirst = []
                        reading.passing = responseStart
                    }
                    return reading
                }
                if current.isDone { body = nil; responseComplete() } else { body = current }
                continue
            }
            guard let awaited = outstanding.first else {
                // Empty lines between responses are let go (RFC 9112 §2.2's leniency for the
                // empty lines before a start line); anything else nobody asked for stops here.
                let rest = UnsafeRawBufferPointer(rebasing: chunk[offset...])
                let blank = rest.prefix { $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\n") }.count
                if blank == rest.count {
                    reading.passing = offset
                    reading.dropped = blank
                    return reading
                }
                reading.passing = offset
                reading.stop = .unasked(bytes: rest.count)
                return reading
            }
            responseStart = heldHead.isEmpty ? offset : 0
            switch head.feed(UnsafeRawBufferPointer(rebasing: chunk[offset...]), requestMethod: awaited.method) {
            case .needMore:
                heldHead.append(contentsOf: chunk[offset...])
                reading.passing = offset
                return reading
            case .malformed(let reason):
                heldHead = []
                reading.passing = offset
                reading.stop = .headUnreadable(reason)
                return reading
            case let .head(parsed, consumed):
                // A 101 its request did not ask for: nothing of it goes on (tv's 502 instead).
                if parsed.status == 101, let refusal = SwitchingProtocols.check(
                    requestUpgrade: awaited.upgrade, webSocketKey: awaited.webSocketKey,
                    upgrade: parsed.upgrade, webSocketAccept: parsed.webSocketAccept) {
                    heldHead = []
                    reading.passing = responseStart ?? offset
                    reading.stop = .switchRefused(refusal)
                    return reading
                }
                // A head begun in an earlier chunk ends at the start of this one (`offset` is 0).
                if !heldHead.isEmpty {
                    reading.heldHeadFirst = heldHead
                    heldHead = []
                }
                offset += consumed
                if parsed.status == 101 {
                    upgraded = true
                    outstanding.removeAll()
                    reading.stop = .upgraded
                    reading.passing = chunk.count
                    return reading
                }
                if (100..<200).contains(parsed.status) { continue }   // informational: the final response follows
                if parsed.closes { reading.serverCloses = true }
                if parsed.framing == .none { responseComplete() } else { body = HTTPBodyScanner(parsed.framing) }
            }
        }
        reading.passing = chunk.count
        return reading
    }

    /// The server ended its side. Returns true when that ended a body delimited by the close
    /// (RFC 9112 §6.3 rule 8): that response is complete.
    mutating func serverEnded() -> Bool {
        guard let current = body, current.framing == .untilClose else { return false }
        body = nil
        responseComplete()
        return true
    }

    /// tv answers in the server's place: what was held of the awaited head never goes on.
    mutating func dropHeldHead() { heldHead = [] }

    private mutating func responseComplete() {
        if !outstanding.isEmpty { outstanding.removeFirst() }
    }
}
