import FlowFilter
import FlowStore
import Foundation
import HTTPReading
import Recording
import TVHome

/// `tv export har FLOW… -o FILE` from the stores to the file: each flow's kept turns are read as
/// HTTP (the same reading as `tv turns FLOW --http`); a flow whose kept content gives no HTTP
/// (nothing kept, unreadable, not read as HTTP) is written from its exchange rows (`HARRowEntry`:
/// method, URL without the query, status, sizes, times; no headers or bodies), and a flow with
/// neither is left out with a note saying why. The HAR 1.2 document is written whole or not at
/// all (mode 0600). The command parses its options and hands over its console.
///
/// Memory: the kept turns of the flows are read whole, and held with their HTTP/2 header fields,
/// each flow's within one reading's `HeaderListLimits` (HPACK lets a byte stand for kilobytes);
/// bodies are decoded one at a time through one `BoundedBodyReader`, whose budget bounds the
/// whole command, straight into the file.
public struct HARReading: KeptContentReading {
    /// The flows to export, in order, each once.
    public let flowIDs: [Int64]
    /// The HAR file to write, or standard output (`-o -`).
    public let file: OutputFile
    /// The version of `tv` named as the HAR's creator.
    public let creatorVersion: String
    /// Only the requests this matches are written (nil: every request).
    public let filter: FilterExpression?
    /// Whether each flow left out is named on its own line (flows named one by one), or the
    /// flows left out are counted in one line (ranges, `--all`, times, a filter).
    public let itemized: Bool
    /// Only the requests made within it (µs since the epoch, both ends included; nil: every
    /// request): an audit bundle's span, whatever its flows said before or after it.
    public let span: ClosedRange<Int64>?

    public init(flowIDs: [Int64], file: OutputFile, creatorVersion: String, filter: FilterExpression? = nil, itemized: Bool = true,
                span: ClosedRange<Int64>? = nil) {
        self.flowIDs = flowIDs
        self.file = file
        self.creatorVersion = creatorVersion
        self.filter = filter
        self.itemized = itemized
        self.span = span
    }

    /// Writes the file (or the HAR to `output`'s standard output), then one line saying how many
    /// entries it holds (on standard error when the HAR went to standard output); notes name
    /// damaged turn rows (as each flow is read), the flows left out, and the flows written whose
    /// connections had requests counted without rows (`LeftOutRequestsNotice`, also in the log's
    /// comment), before the file is written.
    /// - Throws: `ContentRefusal.noFlow` for an id with no flow row, `.noHTTP` when no flow
    ///   holds a request, `HARSelectionError.noRequestMatches` when the filter matches none (no
    ///   file is written); `FlowStoreError`, `ContentError` when the stores cannot be read;
    ///   `FileWriteError` when the file cannot be written.
    public func run(flows: FlowStore, content: ContentStore, to output: some CommandOutput) throws {
        var harFlows: [HARFlow] = []
        var skipped: [String] = []
        // Flows written whose connections had requests counted without rows (the log's comment says so).
        var leftOut: [(flow: Int64, count: Int64)] = []
        var matcher = FilterMatcher(filter ?? .term(FilterTerm(.all)))
        // `~b` decodes bodies within its own budget, apart from the one that writes the file.
        let bodies = BoundedBodyReader()
        // Rows are filtered as `tv requests --filter` filters them (no kept content to look in).
        let rowContext = ExchangeFilterContext(store: flows, content: nil)
        for id in flowIDs {
            guard let record = try flows.flow(id: id) else { throw ContentRefusal.noFlow(id) }
            for row in try content.damagedTurns(flow: id) { output.note("tv: " + row.sentence) }
            // A flow whose kept content gives no HTTP (nothing kept, bytes that cannot be read, not
            // read as HTTP) is written from its exchange rows when it has any; else it is left
            // out with the reason, and the other flows are still exported.
            let why: String
            var source = HARRowEntry.Source.contentNotKept
            var deletedStart: DeletedStart?
            switch try keptConversation(id, content: content) {
            case let .success(conversation):
                var flow = HARReading.harFlow(record, id: id, conversation: conversation)
                flow.deletedStart = conversation.deletedStart
                let rows = try flows.exchanges(ofFlow: id).exchanges
                flow.pairRows(rows)
                // Requests past the flow's recording budget are not in its content: their rows
                // are (a trial's keep-alive connection after a 100 KB upload gave 1 entry of 3).
                flow.addRowsLackingRequests(rows)
                if let span {
                    let start = record.startTime
                    flow.filterExchanges { exchange, row in
                        guard let at = row?.requestTime ?? (exchange.request ?? exchange.response).map({ start + $0.offset }) else { return false }
                        return span.contains(at)
                    }
                    flow.rows = flow.rows.filter { span.contains($0.requestTime) }
                    if flow.conversation.exchanges.isEmpty && flow.rows.isEmpty { continue }
                }
                if filter != nil {
                    // An exchange whose response the content lacks is matched on its row, as
                    // `tv requests --filter` matches it (a trial's `~c 204` found it there and
                    // not in the HAR).
                    let subjectFlow = flow
                    flow.filterExchanges { exchange, row in
                        guard exchange.request != nil else { return false }
                        if exchange.response == nil, let row { return matcher.matches(ExchangeRowSubject(row, context: rowContext)) }
                        return matcher.matches(KeptExchangeSubject(flow: subjectFlow, record: record, exchange: exchange, reader: bodies))
                    }
                    flow.rows = flow.rows.filter { matcher.matches(ExchangeRowSubject($0, context: rowContext)) }
                    if flow.conversation.exchanges.isEmpty && flow.rows.isEmpty { continue }
                }
                harFlows.append(flow)
                if let count = record.requestsLeftOut { leftOut.append((id, count)) }
                continue
            case let .failure(reason):
                why = reason.sentence(record: record, id: id)
                switch reason {
                case .unreadable: source = .contentUnreadable
                case let .startDeleted(deleted, http2):
                    source = .unreadableAfterDeletion(deleted, http2: http2)
                    deletedStart = deleted
                case .nothingKept, .notHTTP: break
                }
            }
            let stored = try flows.exchanges(ofFlow: id)
            for damage in stored.damaged { output.note("tv: " + damage.sentence) }
            guard !stored.exchanges.isEmpty else {
                skipped.append("flow \(id): " + why)
                continue
            }
            var flow = HARReading.harFlow(record, id: id, conversation: HTTPConversation(version: stored.exchanges[0].httpVersion))
            flow.rowsSource = source
            flow.deletedStart = deletedStart
            let inSpan = span.map { span in stored.exchanges.filter { span.contains($0.requestTime) } } ?? stored.exchanges
            flow.rows = filter == nil ? inSpan : inSpan.filter { matcher.matches(ExchangeRowSubject($0, context: rowContext)) }
            if !flow.rows.isEmpty {
                harFlows.append(flow)
                if let count = record.requestsLeftOut { leftOut.append((id, count)) }
            }
        }
        if itemized {
            for line in skipped { output.note("tv: left out " + line) }
        } else if !skipped.isEmpty {
            output.note("tv: left out \(skipped.count) flow\(skipped.count == 1 ? "" : "s") with no kept HTTP and no exchange rows (`tv export har ID` names why for one).")
        }
        if let sentence = FilterNotice.sentence(matcher, rows: .requests) { output.note("tv: " + sentence) }
        let leftOutNotice = LeftOutRequestsNotice(leftOut)
        if let sentence = leftOutNotice.sentence { output.note("tv: " + sentence) }
        let fromContent = harFlows.reduce(0) { $0 + $1.conversation.exchanges.filter { $0.request != nil }.count }
        let tallies = harFlows.flatMap { flow in flow.rows.map { flow.source(of: $0).tally } }
        let fromRows = tallies.count { $0 == .notKept }, unreadable = tallies.count { $0 == .unreadable }
        let pastBudget = tallies.count { $0 == .pastBudget }, deleted = tallies.count { $0 == .deleted }
        guard fromContent + tallies.count > 0 else { throw filter == nil ? ContentRefusal.noHTTP : HARSelectionError.noRequestMatches }
        // Bodies are decoded one at a time, within one budget for the command, straight into the file.
        try file.write(mode: 0o600, output: output) { write in
            HARExport.write(harFlows, creatorVersion: creatorVersion, notes: leftOutNotice.harNote.map { [$0] } ?? [],
                            reader: BoundedBodyReader()) { write(Array($0.utf8)) }
            write([0x0A])
        }
        let summary = HARReading.summary(entries: fromContent + tallies.count, fromRows: fromRows, unreadable: unreadable,
                                         pastBudget: pastBudget, deleted: deleted, flows: harFlows.count, file: file.name)
        // Standard output holds the HAR alone: the summary goes beside it.
        if file == .standardOutput { output.note("tv: " + summary) } else { output.line(summary) }
    }

    /// Why a flow's kept content gives no HTTP to write.
    enum NoKeptHTTP: Error {
        /// No turn is kept (`ContentAbsence` says why).
        case nothingKept
        /// The kept bytes cannot be read (a cut or deleted segment).
        case unreadable(ContentError)
        /// The turns are not read as HTTP (the reader's reason).
        case notHTTP(String)
        /// The start of what was kept was deleted, and the rest cannot be read from the middle.
        case startDeleted(DeletedStart, http2: Bool)

        func sentence(record: FlowRecord, id: Int64) -> String {
            switch self {
            case .nothingKept: return ContentAbsence(flow: record).sentence(flowID: id)
            case let .unreadable(error): return "its kept bytes cannot be read — " + error.message
            case let .notHTTP(reason): return "not read as HTTP — " + TerminalText.line(reason)
            case let .startDeleted(deleted, http2): return "not read as HTTP — " + deleted.unreadable(http2: http2)
            }
        }
    }

    /// Flow `id`'s kept turns read as HTTP, or why there is none.
    /// - Throws: a failure to read the turns index that is not a `ContentError`.
    func keptConversation(_ id: Int64, content: ContentStore) throws -> Result<HTTPConversation, NoKeptHTTP> {
        let turns: [RecordedTurn]
        do {
            turns = try content.recordedTurns(flow: id)
        } catch let error as ContentError {
            return .failure(.unreadable(error))
        }
        guard !turns.isEmpty else { return .failure(.nothingKept) }
        switch HTTPReader.read(turns) {
        case let .conversation(conversation): return .success(conversation)
        case let .notHTTP(reason): return .failure(.notHTTP(reason))
        case let .startDeleted(deleted, http2): return .failure(.startDeleted(deleted, http2: http2))
        }
    }

    /// The HAR side of flow `id`: `http` for a plain flow (not encrypted, or failed with no TLS
    /// seen: a plain request tv answered 502 was exported as https://, a trial), `https` for the rest.
    static func harFlow(_ record: FlowRecord, id: Int64, conversation: HTTPConversation) -> HARFlow {
        let plain: Bool
        switch record.status {
        case .notEncrypted: plain = true
        case .inspected: plain = false
        default: plain = record.clientVersions.isEmpty && record.clientTLSVersion == nil && record.tlsVersion == nil
        }
        var flow = HARFlow(id: id, startTime: record.startTime, scheme: plain ? "http" : "https",
                           host: record.host, serverAddress: record.serverAddress, serverPort: record.serverPort,
                           conversation: conversation)
        // Which program made the requests (a names trial: the HAR had none).
        if record.program != nil { flow.program = FlowProgramPresentation.json(record.program) }
        return flow
    }

    /// `Wrote 2 HAR entries from 2 flows to FILE; …`: what the entries hold, from kept content
    /// (bodies: share with care), `fromRows` of them from the exchange rows of flows whose content
    /// was not kept, `pastBudget` from the rows of requests past their flow's recording budget,
    /// `deleted` from the rows of requests whose content went with their flow's deleted start.
    static func summary(entries: Int, fromRows: Int = 0, unreadable: Int = 0, pastBudget: Int = 0, deleted: Int = 0, flows: Int,
                        file: String) -> String {
        let head = "Wrote \(entries) HAR entr\(entries == 1 ? "y" : "ies") from \(flows) flow\(flows == 1 ? "" : "s") to \(file)"
        if fromRows + unreadable + pastBudget + deleted == 0 { return head + "; it holds the kept bodies, so share it with care." }
        func count(_ n: Int) -> String { n == entries ? (entries == 1 ? "it is" : "all are") : "\(n) \(n == 1 ? "is" : "are")" }
        var text = head
        if fromRows > 0 { text += "; \(count(fromRows)) from exchange rows alone (no content was kept: no headers, bodies or query strings)" }
        if unreadable > 0 {
            text += "; \(count(unreadable)) from exchange rows alone (the kept content cannot be read: its segment file is gone or cut)"
        }
        if pastBudget > 0 {
            text += "; \(count(pastBudget)) from exchange rows alone (requests past their flow's recording budget: no headers or bodies)"
        }
        if deleted > 0 {
            text += "; \(count(deleted)) from exchange rows alone (the start of their connection's kept content was deleted: no headers or bodies)"
        }
        if fromRows + unreadable + pastBudget + deleted < entries { text += "; the rest hold the kept bodies, so share it with care" }
        return text + "."
    }
}
