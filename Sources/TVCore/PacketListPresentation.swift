import Wire
import Capture
import FlowTerms
import Foundation
import TVHome

/// `tv packets FLOW` and the packet part of `tv flow FLOW`: each packet titled by what it meant,
/// its flags' acronyms second; times relative to the flow's first packet, in ms (µs stored). A
/// capped list names both numbers. Pure.
public struct PacketListPresentation: Sendable {
    public let flow: Int64
    public let rows: [PacketRow]
    /// Every packet captured for the flow (`packet_counts`).
    public let count: Int64
    /// The packets the tunnel carried for the flow (its row's packet counts; 0 for the proxy
    /// modes, which see no packets).
    public let carried: Int64

    public init(flow: Int64, rows: [PacketRow], count: Int64, carried: Int64 = 0) {
        self.flow = flow
        self.rows = rows
        self.count = count
        self.carried = carried
    }

    /// Why a flow has no packet rows, each a different sentence.
    public enum Absence: Sendable, Equatable {
        /// Nothing was captured for it.
        case noneCaptured
        /// Packets were captured (and are in the file) but no row was saved for them.
        case rowsNotSaved(count: Int64)
        /// The tunnel carried `packets` of the flow and none reached a capture (capture off then,
        /// or the writer could not write: a full disk). Said as that, not as a proxy-mode flow
        /// (a trial's full disk read "tv captures packets only for connections made through tv
        /// exec" of a tv exec flow).
        case carriedNotCaptured(packets: Int64)
    }

    /// Nil when there are rows to list.
    public var absence: Absence? {
        guard rows.isEmpty else { return nil }
        if count > 0 { return .rowsNotSaved(count: count) }
        return carried > 0 ? .carriedNotCaptured(packets: carried) : .noneCaptured
    }

    /// The sentence for an absence.
    public static func sentence(_ absence: Absence, flow: Int64) -> String {
        switch absence {
        case .noneCaptured:
            // A TCP flow through the tunnel carries no packet counts of its own, so this also reads
            // for one whose packets a full disk lost (it was said to be a proxy-mode flow: a re-check).
            return "No packets of flow \(flow) are recorded: tv captures packets only for connections made through `tv exec` or `tv run --mode tun` while capture.enabled is on (the proxy modes see connections, not packets), and only while the capture can be written (a full disk loses them: the session's closing line and `tv status` say so); a session killed outright (`kill -9`) loses the rows it had not written yet."
        case .carriedNotCaptured(let packets):
            return "The tunnel carried \(packets == 1 ? "1 packet" : "\(ByteWords.grouped(packets)) packets") of flow \(flow), but none is in a capture: capture.enabled was off then, or the capture writer could not write them (a full disk; the session's closing line and `tv status` said why)."
        case .rowsNotSaved(let count):
            return "\(count == 1 ? "1 packet was" : "\(ByteWords.grouped(count)) packets were") captured for flow \(flow), but no packet row was saved (the capture writer fell behind or failed; `tv status` says which); the capture file still holds them."
        }
    }

    /// "7 packets", or for a capped list "the first 500 of 1,234 packets".
    public var headline: String {
        let listed = Int64(rows.count)
        if count > listed {
            return "Packets of flow \(flow): the first \(ByteWords.grouped(listed)) of \(ByteWords.grouped(count)) are listed (tv keeps rows for the first 500 of a connection; the capture file has them all)."
        }
        return "Packets of flow \(flow): \(ByteWords.grouped(count)) packet\(count == 1 ? "" : "s")."
    }

    /// One line per packet: number, time, direction, size, meaning, flags, and what the snap
    /// length kept when it cut the packet.
    public func rowLines() -> [String] {
        guard let first = rows.first?.timeMicros else { return [] }
        let cells: [[String]] = rows.map { row in
            [String(row.n), Units.offsetSeconds(row.timeMicros - first), row.direction == .clientToServer ? "→" : "←",
             "\(ByteWords.grouped(row.originalLength)) B", row.meaning.words]
        }
        let widths = (0..<5).map { column in cells.map { $0[column].count }.max() ?? 0 }
        return zip(rows, cells).map { row, cell in
            // Numbers right-aligned, words left-aligned.
            var line = "  " + (0..<5).map { i -> String in
                i == 2 || i == 4 ? cell[i].padding(toLength: widths[i], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[i] - cell[i].count) + cell[i]
            }.joined(separator: "  ")
            if let flags = row.tcpFlags, flags != 0 { line += "  " + TCPFlags.acronyms(flags) }
            if row.includedLength < row.originalLength {
                line += "  (\(ByteWords.grouped(row.includedLength)) of \(ByteWords.grouped(row.originalLength)) bytes kept)"
            }
            return line.trimmingTrailingSpaces()
        }
    }

    /// Everything `tv packets FLOW` prints.
    public func lines() -> [String] {
        if let absence { return [Self.sentence(absence, flow: flow)] }
        return [headline] + rowLines()
    }

    /// The first `limit` rows and the count, for `tv flow FLOW`.
    public func summaryLines(limit: Int = 10) -> [String] {
        if let absence { return ["Packets: " + Self.sentence(absence, flow: flow)] }
        let head = PacketListPresentation(flow: flow, rows: Array(rows.prefix(limit)), count: count)
        // `tv packets` lists the rows kept (at most 500 a flow), not always all of them.
        let list = count > Int64(rows.count) ? "`tv packets \(flow)` lists the first \(ByteWords.grouped(Int64(rows.count)))" : "`tv packets \(flow)` lists all \(ByteWords.grouped(count))"
        var out = ["Packets: \(ByteWords.grouped(count)) captured" + (count > Int64(limit) ? "; the first \(limit) (\(list)):" : ":")]
        out += head.rowLines()
        return out
    }

    /// `tv packets FLOW --json`: `flow`, `count` (all packets), `listed`, `capped`, and each
    /// packet with `offsetMicros` (since the first), `direction`, `size`, `capturedSize`,
    /// `tcpFlags` (acronyms, null when not TCP), `meaning`, `capture` and `fileOffset`.
    public func json() -> JSONValue {
        let first = rows.first?.timeMicros ?? 0
        return .object([
            ("flow", .int(flow)), ("count", .int(count)), ("listed", .int(Int64(rows.count))), ("capped", .bool(count > Int64(rows.count))),
            ("packets", .array(rows.map { row in
                .object([("n", .int(row.n)), ("offsetMicros", .int(row.timeMicros - first)), ("timeMicros", .int(row.timeMicros)),
                         ("direction", .string(row.direction.rawValue)), ("size", .int(row.originalLength)),
                         ("capturedSize", .int(row.includedLength)),
                         ("tcpFlags", row.tcpFlags.map(Self.flagsJSON) ?? .null),
                         ("meaning", .string(row.meaning.rawValue)), ("capture", .int(row.captureSeq)), ("fileOffset", .int(row.fileOffset))])
            })),
        ])
    }

    /// TCP flags as a JSON list of their acronyms (`["SYN", "ACK"]`), for both packet commands.
    static func flagsJSON(_ flags: UInt8) -> JSONValue {
        .array(TCPFlags.acronyms(flags).split(separator: ",").map { .string($0.trimmingCharacters(in: .whitespaces)) })
    }
}
