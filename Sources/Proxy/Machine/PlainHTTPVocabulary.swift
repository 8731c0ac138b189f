import FlowTerms

/// What goes into `PlainHTTPMachine` (events) and what comes out (commands).
extension PlainHTTPMachine {
    struct Settings: Equatable {
        /// The time a request head may take from its first byte (`HeadDeadline`).
        var headTimeoutMillis = 10_000
        var connectTimeoutNanos: UInt64 = 10_000_000_000
        /// The relay closes after this long without traffic (ns), said in seconds.
        var idleNanos: UInt64 = 300_000_000_000
        var idleTimeoutSeconds = 300
        /// A recorder is configured: flows' bytes are offered to it.
        var recording = false
        /// After the client ends its side with a response awaited and not begun, how long tv
        /// still waits for it (ns): a client that only half-closed gets it, and one that left
        /// (curl --max-time) no longer holds the connection for the idle timeout, to be answered
        /// a 504 nobody reads (a trial's row read `504 by tv … 10 min`).
        var abandonedWaitNanos: UInt64 = 30_000_000_000
    }

    /// A moment: monotonic ns (deadlines) and wall-clock µs since 1970 (flow times).
    struct Instant: Equatable {
        var nanos: UInt64
        var micros: Int64
    }

    /// Where bytes are recorded: the flow and the offset from its start (µs).
    struct Recording: Equatable {
        var flow: UInt64
        var offsetMicros: Int64
    }

    enum Event {
        case start
        /// Bytes read (consumed) from the client.
        case clientBytes(UnsafeRawBufferPointer)
        /// The client finished sending (EOF).
        case clientEnded
        case clientFailed(reset: Bool, LegFailure)
        /// Bytes read from the server.
        case serverBytes(UnsafeRawBufferPointer)
        case serverEnded
        case serverFailed(reset: Bool, LegFailure)
        /// Writing to a side failed.
        case sendFailed(to: ConnectionFailure.Side, LegFailure)
        /// The answer to `.resolve` for upstream `attempt` (older attempts are ignored).
        case resolved([SocketAddress], attempt: Int)
        case resolveFailed(String, attempt: Int)
        /// The last `.connect` succeeded.
        case connected
        case connectFailed(Errno)
        /// The deadline of `.armTimer` passed.
        case timer
        /// The driver finished a pass over both legs.
        case passDone(clientReadClosed: Bool, clientUnsent: Bool)
        /// After `.shutdownClientWrite(finishWhenSent: true)`: everything reached the client.
        case clientSent
        /// Flow `flow`'s reader has counted this many requests without rows so far, past its
        /// `RequestRowAllowance` (the flow says how many; its next report carries it).
        case requestRowsLeftOut(flow: UInt64, count: Int)
        /// tv is stopping. `holdsNothing`: the driver sent everything it held for either leg (one
        /// try, just before): a connection between exchanges then closes with FINs, so the client
        /// still reads what its socket holds of the last response (a reset would discard it).
        case shutdown(holdsNothing: Bool)
    }

    enum Command: Equatable {
        /// A new flow (a request for another host:port after the first).
        case openFlow(FlowFacts)
        case updateFlow(FlowFacts)
        /// The flow is over: count it, report it, end its recording if `recorded`.
        case closeFlow(FlowFacts, recorded: Bool)
        /// A new server leg, not yet connected: what is sent to it waits in its queue.
        case newServerLeg
        case resolve(host: String, port: UInt16, attempt: Int)
        /// Connect the server leg (closing a previous attempt's socket); answer `.connected` or
        /// `.connectFailed`.
        case connect(SocketAddress)
        /// The server leg is connected: drive it.
        case serverReady
        case closeServer(reset: Bool)
        /// Send these bytes to the server (count them as the client's; record them).
        case sendServer([UInt8], record: Recording?)
        /// Send this range of the event's chunk to the server (count, record).
        case forwardToServer(Range<Int>, record: Recording?)
        /// Count (and record, as what the server said) this many bytes of the event's chunk as
        /// the server's.
        case tallyFromServer(Int, record: Recording?)
        /// Write this range of the event's chunk to the client. The request rows read what
        /// reaches the client (`record`'s flow), so a head tv never passed on is not read as a
        /// response: tv's answer in its place is.
        case writeClient(Range<Int>, record: Recording?)
        /// Write these bytes to the client, read as `writeClient`'s are: the start of a response
        /// head read in an earlier chunk, held by the machine until the head was whole.
        case sendClient([UInt8], record: Recording?)
        /// Answer the client with tv's own response, after what is still waiting for it (whole
        /// responses: the machine answers only between them); `linger`: let it arrive (shut down writing, drain) before the close.
        case answerClient([UInt8], linger: Bool)
        case shutdownServerWrite
        /// Half-close toward the client; `finishWhenSent`: answer `.clientSent` once nothing is
        /// left to send.
        case shutdownClientWrite(finishWhenSent: Bool)
        /// Deliver `.timer` at this monotonic time (ns); an earlier one wins.
        case armTimer(at: UInt64)
        case countHeadTimeout
        /// Run another pass over both legs soon.
        case runAgain
        case close(reset: Bool)
        /// The server's leg failed while reading: deliver to the client what tv holds for it (as
        /// `ConnectionMachine.Command.deliverThenClose`), then close as `.close(reset:)` does.
        case deliverThenClose(reset: Bool)

        /// Commands that must run even after an I/O failure cut the batch short.
        var isBookkeeping: Bool {
            switch self {
            case .openFlow, .updateFlow, .closeFlow, .closeServer, .close, .deliverThenClose: return true
            default: return false
            }
        }
    }
}
