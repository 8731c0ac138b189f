import FlowTerms
import TVHome

/// One flow for a HAR export: the facts HAR wants about the connection, and what was said on
/// it: its kept conversation, or (when no content was kept) its exchange rows.
public struct HARFlow: Sendable {
    /// The flow's id (HAR `connection`).
    public var id: Int64
    /// When the flow began, µs since the epoch (entry times are this plus the message offsets).
    public var startTime: Int64
    /// `https` for an inspected TLS flow, `http` for a plain one.
    public var scheme: String
    /// The server's name when known (SNI, CONNECT), used when a request names no host.
    public var host: String?
    /// The server's IP address (HAR `serverIPAddress`).
    public var serverAddress: String
    /// The server's port.
    public var serverPort: Int
    /// The flow's turns read as HTTP (empty when no content was kept).
    public var conversation: HTTPConversation
    /// Exchange rows written as entries (`HARRowEntry`): all of them when the flow's content was
    /// not kept; beside `conversation`, the rows of requests the kept content lacks (the flow's
    /// recording budget ran out before them). `rowsSource` says which.
    public var rows: [ExchangeRecord]
    /// Why `rows` are written from their rows rather than from kept content (`source(of:)`
    /// says it of each: a row made before a deleted start is said as deleted).
    public var rowsSource: HARRowEntry.Source = .contentNotKept
    /// The start of the flow's kept content was deleted (`conversation.deletedStart`, or the
    /// reason its turns could not be read); nil when what is kept begins with the connection.
    public var deletedStart: DeletedStart?
    /// Each of `conversation.exchanges`' exchange rows (nil where there is none, and for an
    /// exchange without a request), set by `pairRows` and kept aligned when exchanges are
    /// filtered: an entry whose response the content lacks (the recording budget ran out), or
    /// whose body it cut, takes its status, sizes and times from its row, which the data path
    /// read whole; `tv requests` and the HAR then say the same.
    public var exchangeRows: [ExchangeRecord?] = []
    /// The program behind the flow as `tv flow --json` gives it (`known`, `pid`, `command`,
    /// `executable`, `user` …, or why it is not known), written on each entry as `_program` (a
    /// custom field, HAR 1.2 §"Custom Fields"); nil when it was not looked up.
    public var program: JSONValue?

    public init(id: Int64, startTime: Int64, scheme: String, host: String?, serverAddress: String, serverPort: Int,
                conversation: HTTPConversation, rows: [ExchangeRecord] = []) {
        self.id = id
        self.startTime = startTime
        self.scheme = scheme
        self.host = host
        self.serverAddress = serverAddress
        self.serverPort = serverPort
        self.conversation = conversation
        self.rows = rows
    }

    /// The authority a request that named none is sent to: the flow's name (else its server
    /// address) and its port unless it is `scheme`'s default.
    func authority(scheme: String) -> String {
        let defaultPort = (scheme == "https" && serverPort == 443) || (scheme == "http" && serverPort == 80)
        return (host ?? serverAddress) + (defaultPort ? "" : ":\(serverPort)")
    }

    /// Pairs `rows` (the flow's exchange rows) with `conversation.exchanges` (`ExchangeRowMatch`:
    /// HTTP/2 by stream, pushed ones too; HTTP/1 in order by the time and target of each kept
    /// request, so a kept content whose start was deleted pairs with the rows it really holds).
    /// An exchange without a request gets none here (`addRowsLackingRequests` sees to those).
    public mutating func pairRows(_ rows: [ExchangeRecord]) {
        let pairs = ExchangeRowMatch.pair(conversation.exchanges, rows: rows, flowStart: startTime)
        exchangeRows = zip(conversation.exchanges, pairs).map { exchange, index in
            guard exchange.request != nil, let index else { return nil }
            return rows[index]
        }
    }

    /// Keeps the exchanges (and their rows) `isIncluded` accepts.
    public mutating func filterExchanges(_ isIncluded: (HTTPExchange, ExchangeRecord?) -> Bool) {
        let rows = exchangeRows.count == conversation.exchanges.count ? exchangeRows : Array(repeating: nil, count: conversation.exchanges.count)
        let kept = zip(conversation.exchanges, rows).filter { isIncluded($0.0, $0.1) }
        conversation.exchanges = kept.map(\.0)
        exchangeRows = kept.map(\.1)
    }

    /// Gives `rows` the exchange rows `pairRows` paired with no kept request (the kept content
    /// ends before them: the recording budget ran out), and leaves out as many of the responses
    /// kept without their request, which are theirs: HTTP/1 answers in order, and an HTTP/2
    /// stream whose request was not kept is a row the streams' pairing did not take. Called after
    /// `pairRows` with the same rows; a response beyond the rows stays (counted as left out).
    public mutating func addRowsLackingRequests(_ all: [ExchangeRecord]) {
        let paired = Set(exchangeRows.compactMap { $0?.id })
        let lacking = all.filter { !paired.contains($0.id) }
        guard !lacking.isEmpty else { return }
        rows = lacking
        rowsSource = .requestNotKept
        // Rows made before a deleted start have no response kept either.
        var dropping = lacking.count { source(of: $0) == .requestNotKept }
        let aligned = exchangeRows.count == conversation.exchanges.count ? exchangeRows : Array(repeating: nil, count: conversation.exchanges.count)
        let kept = zip(conversation.exchanges, aligned).filter { exchange, _ in
            guard exchange.request == nil, dropping > 0 else { return true }
            dropping -= 1
            return false
        }
        conversation.exchanges = kept.map(\.0)
        exchangeRows = kept.map(\.1)
    }

    /// Why `row` (one of `rows`) is written from its row: `rowsSource`, except that a row made
    /// before the deleted start of what is kept went with it (`DeletedStart.precedes`) — not the
    /// budget's doing, nor content never kept (a trial's HAR said both of such rows).
    public func source(of row: ExchangeRecord) -> HARRowEntry.Source {
        guard let deletedStart, deletedStart.precedes(row, flowStart: startTime) else { return rowsSource }
        return .contentDeleted(deletedStart)
    }

    /// The row paired with `conversation.exchanges[position]`, if any.
    func row(at position: Int) -> ExchangeRecord? {
        position < exchangeRows.count ? exchangeRows[position] : nil
    }
}
