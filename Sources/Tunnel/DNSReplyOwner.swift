/// Which query on a DNS association a datagram from the resolver is the traffic of (pure).
///
/// A program's stub resolver may ask several questions on one socket (glibc's `getaddrinfo`
/// asks A and AAAA at once), so the association's five-tuple does not say which query a reply
/// is for: its DNS ID does (RFC 1035 §4.1.1; the question is checked apart, `DNSAnswerMatch`).
/// A reply whose ID is a query's already answered is a repeat (a path or resolver that
/// duplicates datagrams sends each answer twice) or a late stray of that query: it is that
/// query's, never another's. A trial on a duplicating path filed every repeated A answer under
/// the AAAA query still waiting, whose flow then listed and counted them (176 B = 3 × 41 + 53).
public enum DNSReplyOwner: Equatable, Sendable {
    /// The waiting query with the datagram's ID.
    case waiting(UInt16)
    /// The query with the datagram's ID that was answered before (`RecentDNSAnswers`).
    case answered(UInt16)
    /// No query, waiting or answered, has its ID (or it is too short to have one): the one
    /// query waiting, when exactly one waits (a spoofed or misdirected datagram the program
    /// received while it waited: counted there).
    case onlyWaiting(UInt16)
    /// Nobody's: no query has its ID and none or several wait.
    case none

    /// - Parameters:
    ///   - id: the datagram's DNS ID, nil when it is shorter than 2 bytes.
    ///   - isWaiting: whether a query with that ID waits for its answer.
    ///   - wasAnswered: whether a query with that ID was answered lately.
    ///   - onlyWaiting: the ID of the one query waiting, nil when none or several wait.
    public static func of(id: UInt16?, isWaiting: Bool, wasAnswered: Bool, onlyWaiting: UInt16?) -> DNSReplyOwner {
        if let id, isWaiting { return .waiting(id) }
        if let id, wasAnswered { return .answered(id) }
        return onlyWaiting.map { .onlyWaiting($0) } ?? .none
    }
}

/// The queries of a DNS association answered lately, by DNS ID, so a repeated answer finds its
/// query (`DNSReplyOwner.answered`): at most `capacity`, the oldest forgotten first. An
/// association lives while queries come (`EngineLoop.dnsIdleNanos` after the last), so a repeat
/// seconds late still finds its query; a program asking more than `capacity` questions on one
/// socket has its oldest forgotten.
public struct RecentDNSAnswers<Value>: Sendable where Value: Sendable {
    public let capacity: Int
    private var values: [UInt16: Value] = [:]
    /// IDs in the order they were remembered (an ID remembered again moves to the end).
    private var order: [UInt16] = []

    public init(capacity: Int = 32) {
        self.capacity = max(1, capacity)
    }

    public var count: Int { values.count }

    public subscript(id: UInt16) -> Value? {
        get { values[id] }
        set {
            guard let newValue else { forget(id); return }
            if values.updateValue(newValue, forKey: id) == nil {
                order.append(id)
                if order.count > capacity { values[order.removeFirst()] = nil }
            }
        }
    }

    /// Remembers `value` as the answered query with `id`, the newest.
    public mutating func remember(_ id: UInt16, _ value: Value) {
        forget(id)
        self[id] = value
    }

    /// Forgets the query with `id` (a new query took its ID).
    public mutating func forget(_ id: UInt16) {
        guard values.removeValue(forKey: id) != nil else { return }
        order.removeAll { $0 == id }
    }

    /// The IDs remembered, oldest first.
    public var ids: [UInt16] { order }
}
