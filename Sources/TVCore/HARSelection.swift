import FlowFilter
import FlowStore
import TVHome

/// Which flows `tv export har` reads: flow ids and ranges of ids (`40 41 50-58`), `--all`, a
/// window of start times (`--since`, `--from`, `--to`, as `tv flows` takes them); together they
/// narrow each other (ids within the window). `--filter` then picks the requests, not the flows.
public struct HARSelection: Sendable, Equatable {
    /// Ids given one by one, each once, in the order given.
    public var ids: [Int64] = []
    /// Ranges of ids (both ends included).
    public var ranges: [ClosedRange<Int64>] = []
    /// `--all`: every flow (within the window, if one is given).
    public var all = false
    /// Start times: at or after `from` (µs), before `to` (µs); nil when open.
    public var from: Int64?
    public var to: Int64?
    /// Whether a filter picks the requests (a selection by filter alone means every flow).
    public var filtered = false

    public init() {}

    /// Reads `words` as flow ids (`40`) and ranges (`40-48`).
    /// - Throws: `HARSelectionError.badID`, `.backwardRange`.
    public mutating func add(_ words: [String]) throws {
        for word in words {
            if let dash = word.firstIndex(of: "-"), dash != word.startIndex {
                guard let low = Self.id(word[..<dash]), let high = Self.id(word[word.index(after: dash)...]) else {
                    throw HARSelectionError.badID(word)
                }
                guard low <= high else { throw HARSelectionError.backwardRange(word) }
                ranges.append(low...high)
            } else {
                guard let id = Self.id(Substring(word)) else { throw HARSelectionError.badID(word) }
                if !ids.contains(id) { ids.append(id) }
            }
        }
    }

    static func id(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }), let id = Int64(text), id > 0 else { return nil }
        return id
    }

    /// Whether only single ids were given: then each must exist, and each flow left out is said on its own line.
    public var onlyIDs: Bool { ranges.isEmpty && !all && from == nil && to == nil && !filtered }

    /// Checks the selection says something and does not contradict itself.
    /// - Throws: `HARSelectionError.nothingSelected`, `.allWithIDs`, `.emptyWindow`.
    public func validate() throws {
        guard !ids.isEmpty || !ranges.isEmpty || all || from != nil || to != nil || filtered else {
            throw HARSelectionError.nothingSelected
        }
        if all && !(ids.isEmpty && ranges.isEmpty) { throw HARSelectionError.allWithIDs }
        if let from, let to, from >= to { throw HARSelectionError.emptyWindow }
    }

    /// Whether a flow row is selected (its id and start time).
    public func selects(_ record: FlowRecord) -> Bool {
        if let from, record.startTime < from { return false }
        if let to, record.startTime >= to { return false }
        if ids.isEmpty && ranges.isEmpty { return true }
        return ids.contains(record.id) || ranges.contains { $0.contains(record.id) }
    }

    /// The ids of the selected flows, lowest first: single ids looked up one by one (each must
    /// exist), otherwise every flow in the window read in keyset pages.
    /// - Throws: `ContentRefusal.noFlow` for a single id with no row (`.requestIDNotFlow` when
    ///   it is a request's id), `HARSelectionError.noFlows`
    ///   when nothing is selected; `FlowStoreError`.
    public func flowIDs(in store: FlowStore) throws -> [Int64] {
        for id in ids where try store.flow(id: id) == nil {
            // A request id of `tv requests` is the likeliest slip (a trial's `tv export har 90`).
            if let request = try store.exchange(id: id) { throw ContentRefusal.requestIDNotFlow(id, flow: request.flowID) }
            throw ContentRefusal.noFlow(id)
        }
        if onlyIDs { return ids }
        var query = FlowQuery(from: from, to: to, limit: FlowQuery.maximumLimit)
        var selected: [Int64] = []
        while true {
            let page = try store.flows(query)
            selected += page.flows.filter(selects).map(\.id)
            guard let next = page.nextCursor else { break }
            query.after = next
        }
        guard !selected.isEmpty else { throw HARSelectionError.noFlows }
        return selected.sorted()
    }
}

/// Why `tv export har` cannot tell which flows to read, or found nothing to write.
public enum HARSelectionError: UserFacingError, Equatable {
    /// A word that is neither a flow id nor a range of them.
    case badID(String)
    /// A range whose first id is above its last.
    case backwardRange(String)
    /// No ids, ranges, `--all`, time or filter.
    case nothingSelected
    /// `--all` together with ids.
    case allWithIDs
    /// `--from` at or after `--to`.
    case emptyWindow
    /// No flow row is in the selection.
    case noFlows
    /// The filter matched no request in the selected flows' kept content or exchange rows.
    case noRequestMatches

    public var message: String {
        switch self {
        case let .badID(word):
            return "'\(TerminalText.line(word))' is not a flow id or a range of them; write ids as `tv flows` prints them (40) or a range as 40-48."
        case let .backwardRange(word):
            return "'\(TerminalText.line(word))' is not a range of flow ids; write the lower id first, as in 40-48."
        case .nothingSelected:
            return "Name the flows to export: ids (40 41), a range (40-48), --all, --since 1h, --from/--to, or --filter EXPR."
        case .allWithIDs:
            return "--all takes every flow, so give either flow ids or --all, not both."
        case .emptyWindow:
            return "--from must be before --to; nothing starts in that window."
        case .noFlows:
            return "No flow is in this selection, so nothing was written; `tv flows` lists the ones there are."
        case .noRequestMatches:
            return "No request of these flows (kept content or exchange rows) matches the filter, so nothing was written."
        }
    }

    public var exitCode: Int32 {
        switch self {
        case .noFlows, .noRequestMatches: return 1
        default: return 2
        }
    }
}
