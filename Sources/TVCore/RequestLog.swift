import Dispatch
import FlowStore
import FlowTerms
import Synchronization

/// `tv run --log requests` (or the `log.requests` setting): one line per finished HTTP exchange
/// (`RequestListPresentation.logLine`), printed on a queue of its own so the loop that read the
/// exchange never waits on the terminal. At most `capacity` lines wait; more are dropped and
/// counted (`dropped`), and the next line printed says how many.
public final class RequestLog: Sendable {
    /// Lines that may wait to be printed before new ones are dropped.
    public static let capacity = 4_096

    private let queue = DispatchQueue(label: "tv request log")
    private let waiting = Atomic<Int>(0)
    private let droppedSinceLast = Atomic<Int>(0)
    private let print: @Sendable (String) -> Void

    /// - Parameter print: writes one line (standard output for `tv run`); called on the log's queue.
    public init(print: @escaping @Sendable (String) -> Void) {
        self.print = print
    }

    /// An exchange ended; never blocks.
    public func finished(_ exchange: ExchangeRecord) {
        guard waiting.wrappingAdd(1, ordering: .relaxed).newValue <= RequestLog.capacity else {
            waiting.wrappingSubtract(1, ordering: .relaxed)
            droppedSinceLast.wrappingAdd(1, ordering: .relaxed)
            return
        }
        let line = RequestListPresentation.logLine(exchange)
        queue.async { [self] in
            let dropped = droppedSinceLast.exchange(0, ordering: .relaxed)
            if dropped > 0 { print("(\(dropped) request line\(dropped == 1 ? "" : "s") not printed: the terminal was too slow)") }
            print(line)
            waiting.wrappingSubtract(1, ordering: .relaxed)
        }
    }

    /// Waits until every line handed over so far is printed.
    public func drain() {
        queue.sync {}
    }
}
