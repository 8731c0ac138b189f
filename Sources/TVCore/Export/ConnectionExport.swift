import FlowStore
import Foundation
import TVHome

/// `tv export connections`: the connection list as JSON or CSV, streamed page by page (never
/// the whole list in memory), newest first, at most `limit` connections. JSON ends with the
/// count and whether the list was cut (`truncated`), known only at the end (seed 000 Captures:
/// "the counts go in the trailer"). The file is written to a temporary beside it and renamed
/// at the end: a failure halfway leaves no file (an unterminated JSON reads as a history that
/// ends early, not as an error).
public struct ConnectionExport: Sendable {
    /// The file formats.
    public enum Format: String, Sendable, CaseIterable {
        case json, csv
    }

    /// The default cap: the newest 20,000 connections.
    public static let defaultLimit = 20_000
    /// Rows read per page.
    static let pageSize = 1_000

    /// Filters (its `limit` and `after` are ignored).
    public var filters: FlowQuery
    /// At most this many connections, newest first.
    public var limit: Int
    public var format: Format
    /// The shared store's export: each row also says which instance (id, machine) saw it
    /// (`ConnectionExportColumns.sharedNames`).
    public var shared = false

    public init(filters: FlowQuery = FlowQuery(), limit: Int = ConnectionExport.defaultLimit, format: Format = .json) {
        self.filters = filters
        self.limit = limit
        self.format = format
    }

    /// What a written (or about to be written) file holds.
    public struct Summary: Sendable, Equatable {
        /// Connections in the file.
        public var count: Int
        /// True when more connections matched than `limit`.
        public var truncated: Bool
        /// Rows that could not be read (a value no writer writes), left out.
        public var damaged: Int
    }

    /// How many connections the export will hold, before writing (the terminal's notice).
    /// - Throws: `FlowStoreError`.
    public func preview(_ store: some FlowHistory) throws -> Summary {
        let matching = try store.count(filters)
        return Summary(count: min(matching, limit), truncated: matching > limit, damaged: 0)
    }

    /// Writes the file `file` (mode 0600), or to `output`'s standard output for `-o -`.
    /// - Parameter exportedAt: µs since the epoch, written in the JSON header.
    /// - Throws: `FileWriteError` (no file is left), `FlowStoreError`.
    public func write(_ store: some FlowHistory, to file: OutputFile, output: some CommandOutput, exportedAt: Int64) throws -> Summary {
        var summary = Summary(count: 0, truncated: false, damaged: 0)
        let names = shared ? ConnectionExportColumns.sharedNames : ConnectionExportColumns.names
        let valuesOf = shared ? ConnectionExportColumns.sharedValues : ConnectionExportColumns.values
        try file.write(mode: 0o600, output: output) { write in
            switch format {
            case .json:
                write(Array(("{\"format\":\"tunnelvision-connections\",\"version\":1,\"exportedAt\":"
                             + JSONValue.string(ConnectionExportColumns.iso(exportedAt)).serialized()
                             + ",\"contentIncluded\":false,\"connections\":[").utf8))
            case .csv:
                write(Array((names.joined(separator: ",") + "\r\n").utf8))
            }
            var query = filters
            var after: String?
            repeat {
                query.limit = min(ConnectionExport.pageSize, limit - summary.count)
                query.after = after
                let page = try store.flows(query)
                summary.damaged += page.damaged.count
                for flow in page.flows {
                    let values = valuesOf(flow)
                    switch format {
                    case .json:
                        let object = JSONValue.object(Array(zip(names, values)))
                        write(Array(((summary.count == 0 ? "\n" : ",\n") + object.serialized()).utf8))
                    case .csv:
                        write(Array((values.map(ConnectionExportColumns.csvField).joined(separator: ",") + "\r\n").utf8))
                    }
                    summary.count += 1
                }
                after = page.nextCursor
            } while after != nil && summary.count < limit
            summary.truncated = after != nil
            if format == .json {
                write(Array(("\n],\"count\":\(summary.count),\"damaged\":\(summary.damaged),\"truncated\":\(summary.truncated)}\n").utf8))
            }
        }
        return summary
    }
}
