/// The last minute of a session's byte totals, sampled by `tv top`, as rates per second: what
/// clients received (bytes from servers) and sent (bytes from clients). Pure.
public struct RateHistory: Sendable, Equatable {
    /// One reading of the session's totals.
    public struct Sample: Sendable, Equatable {
        /// When (µs since the epoch).
        public var atMicros: Int64
        /// `bytesFromServers`: what clients received so far.
        public var received: UInt64
        /// `bytesFromClients`: what clients sent so far.
        public var sent: UInt64
        public init(atMicros: Int64, received: UInt64, sent: UInt64) {
            self.atMicros = atMicros
            self.received = received
            self.sent = sent
        }
    }

    /// A rate between two samples, bytes per second.
    public struct Rate: Sendable, Equatable {
        public var received: Int64
        public var sent: Int64
        public init(received: Int64, sent: Int64) {
            self.received = received
            self.sent = sent
        }
    }

    /// How many samples are kept (a minute of one-second rates needs 61).
    public static let capacity = 61

    public private(set) var samples: [Sample] = []

    public init() {}

    /// Adds a sample. A sample not after the last, or with totals lower than it (a new session),
    /// starts the history again.
    public mutating func add(_ sample: Sample) {
        if let last = samples.last, sample.atMicros <= last.atMicros || sample.received < last.received || sample.sent < last.sent {
            samples.removeAll()
        }
        samples.append(sample)
        if samples.count > RateHistory.capacity { samples.removeFirst(samples.count - RateHistory.capacity) }
    }

    /// The rate over each interval between consecutive samples, oldest first (rounded down).
    public var rates: [Rate] {
        guard samples.count > 1 else { return [] }
        return (1..<samples.count).map { i in
            let a = samples[i - 1], b = samples[i]
            let micros = b.atMicros - a.atMicros
            return Rate(received: Int64((b.received - a.received) * 1_000_000 / UInt64(micros)),
                        sent: Int64((b.sent - a.sent) * 1_000_000 / UInt64(micros)))
        }
    }

    /// The newest rate; nil before two samples.
    public var current: Rate? { rates.last }

    /// A one-line chart of `values` in `width` cells (the newest at the right; fewer values leave
    /// the left blank): a space for 0, else one of eight blocks scaled to the largest.
    public static func chart(_ values: [Int64], width: Int) -> String {
        let shown = values.suffix(max(0, width))
        let top = shown.max() ?? 0
        let cells = shown.map { ActivityReport.block($0, top: top) }
        return String(repeating: " ", count: max(0, width - cells.count)) + String(cells)
    }
}
