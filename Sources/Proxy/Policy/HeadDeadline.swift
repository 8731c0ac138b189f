/// When a client's request head must be complete, and what tv does when it is not (as nginx's
/// `client_header_timeout` and HAProxy's `timeout http-request`): the clock starts when a head
/// begins (at accept for a connection's first head, with the first byte of every later head on a
/// keep-alive connection) and bytes trickling in do not move it, so a client sending one byte at a
/// time (slowloris) is closed after `limitNanos` whatever the idle timeout says.
///
/// A pure value: the driver says when heads begin and complete, reads `deadline` to arm its
/// timer, and asks `ending` what to do once `passed` says so.
struct HeadDeadline: Sendable, Equatable {
    /// The time one head may take, in monotonic ns.
    let limitNanos: UInt64
    /// When the head under way must be complete (monotonic ns); nil while no head is under way
    /// (between requests, or while a body or a response is being relayed).
    private(set) var deadline: UInt64?

    /// - Parameter limitMillis: the time one head may take (at least 1 ms).
    init(limitMillis: Int) {
        limitNanos = UInt64(max(1, limitMillis)) * 1_000_000
    }

    /// A head began at `now` (its first byte came, or the connection was accepted): starts the
    /// clock unless it already runs for this head.
    mutating func headBegan(at now: UInt64) {
        if deadline == nil { deadline = now &+ limitNanos }
    }

    /// The head is complete: the clock stops until the next head begins.
    mutating func headCompleted() {
        deadline = nil
    }

    /// Whether the head under way is late at `now`.
    func passed(at now: UInt64) -> Bool {
        guard let deadline else { return false }
        return now >= deadline
    }

    /// What the driver does when the deadline passed.
    enum Ending: Sendable, Equatable {
        /// Answer `408 Request Timeout` (`requestTimeoutResponse`), then close.
        case requestTimeout
        /// Close without a word: a response is under way, and a 408 would be read as part of it.
        case close
    }

    /// The 408 goes out only when the client is not in the middle of receiving a response.
    static func ending(responseUnderWay: Bool) -> Ending {
        responseUnderWay ? .close : .requestTimeout
    }

    /// Why the connection was closed, for the flow (`limitMillis` as configured).
    static func reason(limitMillis: Int) -> String {
        "the client sent no complete request head within \(Self.seconds(limitMillis)) (tv closed the connection)"
    }

    /// The whole 408 response (RFC 9110 §15.5.9), `Connection: close`.
    static func requestTimeoutResponse(limitMillis: Int) -> [UInt8] {
        ConnectionMachine.errorResponse(408,
                                        body: "tv: the request head did not arrive within \(Self.seconds(limitMillis)); send it again")
    }

    /// `10 s`, `1.5 s`, `250 ms`.
    static func seconds(_ millis: Int) -> String {
        if millis < 1_000 { return "\(millis) ms" }
        if millis % 1_000 == 0 { return "\(millis / 1_000) s" }
        return "\(Double(millis) / 1_000) s"
    }
}
