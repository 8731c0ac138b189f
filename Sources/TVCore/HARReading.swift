import FlowFilter
import FlowStore
import Foundation
import HTTPReading
import Recording
import TVHome

/// `tv export har FLOW… -o FILE` from the stores to the file: each flow's kept turns are read as
/// HTTP (the same reading as `tv turns FLOW --http`), flows with nothing kept or not read as HTTP
/// are left out with a note saying why, and the HAR 1.2 document is written whole or not at all
/// (mode 0600). The command parses its options and hands over its console.
///
/// Memory: the kept turns of the flows are read whole; bodies are decoded one at a time through
/// one `BoundedBodyReader`, whose budget bounds the whole command, straight into the file.
public struct HARReading: KeptContentReading {
    /// The flows to export, in order, each once.
    public let flowIDs: [Int64]
    /// The HAR file to write.
    public let file: String
    /// The version of `tv` named as the HAR's creator.
    public let creatorVersion: String
    /// Only the requests this matches are written (nil: every request).
    public let filter: FilterExpression?
    /// Whether each flow left out is named on its own line (flows named one by one), or the
    /// flows left out are counted in one line (ranges, `--all`, times, a filter).
    public let itemized: Bool

    public init(flowIDs: [Int64], file: String, creatorVersion: String, filter: FilterExpression? = nil, itemized: Bool = true) {
        self.flowIDs = flowIDs
        self.file = file
        self.creatorVersion = creatorVersion
        self.filter = filter
        self.itemized = itemized
    }

    /// Writes the file, then one line to `output` saying how many entries it holds; notes name
    /// damaged turn rows (as each flow is read) and the flows left out (before the file is written).
    /// - Throws: `ContentRefusal.noFlow` for an id with no flow row, `.noHTTP` when no flow
    ///   holds a request, `HARSelectionError.noRequestMatches` when the filter matches none (no
    ///   file is written); `FlowStoreError`, `ContentError` when the stores cannot be read;
    ///   `FileWriteError` when the file cannot be written.
    public func run(flows: FlowStore, content: ContentStore, to output: some CommandOutput) throws {
        var harFlows: [HARFlow] = []
        var skipped: [String] = []
        var matcher = FilterMatcher(filter ?? .term(FilterTerm(.all)))
        // `~b` decodes bodies within its own budget, apart from the one that writes the file.
        let bodies = BoundedBodyReader()
        for id in flowIDs {
            guard let record = try flows.flow(id: id) else { throw ContentRefusal.noFlow(id) }
            for row in try content.damagedTurns(flow: id) { output.note("tv: " + row.sentence) }
            // A flow whose kept bytes cannot be read (a cut segment, a deleted one) is left out
            // with the reason; the other flows are still exported.
            let turns: [RecordedTurn]
            do {
                turns = try content.recordedTurns(flow: id)
            } catch let error as ContentError {
                skipped.append("flow \(id): its kept bytes cannot be read — " + error.message)
                continue
            }
            guard !turns.isEmpty else {
                skipped.append("flow \(id): " + ContentAbsence(flow: record).sentence(flowID: id))
                continue
            }
            switch HTTPReader.read(turns) {
            case let .conversation(conversation):
                var flow = HARReading.harFlow(record, id: id, conversation: conversation)
                if let filter {
                    flow.conversation.exchanges = flow.conversation.exchanges.filter { exchange in
                        exchange.request != nil && matcher.matches(KeptExchangeSubject(flow: flow, record: record, exchange: exchange, reader: bodies))
                    }
                    if flow.conversation.exchanges.isEmpty { continue }
                }
                harFlows.append(flow)
            case let .notHTTP(reason):
                skipped.append("flow \(id): not read as HTTP — \(TerminalText.line(reason))")
            }
        }
        if itemized {
            for line in skipped { output.note("tv: left out " + line) }
        } else if !skipped.isEmpty {
            output.note("tv: left out \(skipped.count) flow\(skipped.count == 1 ? "" : "s") with no kept HTTP (`tv export har ID` names why for one).")
        }
        if let sentence = FilterNotice.sentence(matcher, rows: .requests) { output.note("tv: " + sentence) }
        let entries = harFlows.reduce(0) { $0 + $1.conversation.exchanges.filter { $0.request != nil }.count }
        guard entries > 0 else { throw filter == nil ? ContentRefusal.noHTTP : HARSelectionError.noRequestMatches }
        // Bodies are decoded one at a time, within one budget for the command, straight into the file.
        try FileModes.writeAtomically(to: file, mode: 0o600) { write in
            HARExport.write(harFlows, creatorVersion: creatorVersion, reader: BoundedBodyReader()) { write(Array($0.utf8)) }
            write([0x0A])
        }
        output.line(HARReading.summary(entries: entries, flows: harFlows.count, file: file))
    }

    /// The HAR side of flow `id`: `http` for a plain flow, `https` for the rest.
    static func harFlow(_ record: FlowRecord, id: Int64, conversation: HTTPConversation) -> HARFlow {
        HARFlow(id: id, startTime: record.startTime, scheme: record.status == .notEncrypted ? "http" : "https",
                host: record.host, serverAddress: record.serverAddress, serverPort: record.serverPort,
                conversation: conversation)
    }

    /// `Wrote 2 HAR entries from 2 flows to FILE; …`.
    static func summary(entries: Int, flows: Int, file: String) -> String {
        "Wrote \(entries) HAR entr\(entries == 1 ? "y" : "ies") from \(flows) flow\(flows == 1 ? "" : "s") to \(file); it holds the kept bodies, so share it with care."
    }
}
