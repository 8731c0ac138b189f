/// The plain-HTTP machine's deadlines: connect, request head (`HeadDeadline`), the wait for a
/// response after the client ended its side, idle.
extension PlainHTTPMachine {
    mutating func timer() {
        if upstream.connecting && upstream.connectDeadline != 0 && now.nanos >= upstream.connectDeadline {
            keepNumericTarget()
            return fail(.unreachable(target: targetName, .noAnswer(seconds: nil)), status: 504)
        }
        if headDeadline.passed(at: now.nanos) { return headTimedOut() }
        if let ended = abandonedDeadline, now.nanos >= ended {
            // Nobody reads an answer now: closed without one, the exchange left incomplete.
            return finish(reset: false, failure: .clientGone(reset: false, .awaitingResponse))
        }
        if now.nanos >= lastActivity &+ settings.idleNanos {
            // A server that never began its response: tv answers 504 in its place.
            if responses.awaitingHead { return fail(.noResponse(seconds: settings.idleTimeoutSeconds), status: 504) }
            return finish(reset: false, failure: .idle(seconds: settings.idleTimeoutSeconds))
        }
        reportTrailingProgress()
        rearm()
    }

    /// The earliest of the idle, connect and head deadlines, and the trailing progress report's.
    mutating func rearm() {
        var next = lastActivity &+ settings.idleNanos
        if let told = trailingProgressDeadline, told < next { next = told }
        if upstream.connecting && upstream.connectDeadline != 0 && upstream.connectDeadline < next { next = upstream.connectDeadline }
        if let head = headDeadline.deadline, head < next { next = head }
        if let ended = abandonedDeadline, ended < next { next = ended }
        emit(.armTimer(at: next))
    }

    /// When tv stops waiting for a response the client may no longer read: its side ended while
    /// the response had not begun (nil otherwise, also once the response began).
    var abandonedDeadline: UInt64? {
        guard let ended = clientEndedAt, responses.awaitingHead else { return nil }
        return ended &+ settings.abandonedWaitNanos
    }

    /// A request head was not whole in time: 408 unless a response is under way, counted, closed.
    mutating func headTimedOut() {
        emit(.countHeadTimeout)
        let limit = settings.headTimeoutMillis
        if HeadDeadline.ending(responseUnderWay: responses.isUnderWay) == .requestTimeout {
            emit(.answerClient(HeadDeadline.requestTimeoutResponse(limitMillis: limit), linger: true))
        }
        finish(reset: false, failure: .headTimeout(limitMillis: limit))
    }
}
