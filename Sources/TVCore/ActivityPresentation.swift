import FlowStore
import TVHome

/// What `tv activity` shows for an axis: the bars (block characters, scaled to the busiest), the
/// two ends dated under them, the busiest interval's count, and the notes that keep the picture
/// honest. Pure: the axis, the store's sparse counts and where the kept history begins in; lines
/// and JSON out.
///
/// Where the history begins is the oldest flow kept (`FlowStore.startTimeBounds`): there is no
/// retention watermark, so a stretch before it is "removed by retention or never recorded",
/// never drawn as zeros (which would read as "no traffic then").
public struct ActivityReport: Sendable, Equatable {
    /// A sentence said with the axis (or instead of it).
    public enum Notice: Sendable, Equatable {
        /// No flow is recorded at all: nothing is drawn.
        case nothingRecorded
        /// The whole stretch lies before the oldest flow kept: nothing is drawn.
        case removedByRetention(oldestKept: Int64)
        /// Some bars lie before the oldest flow kept: they are drawn as `·`, not as zeros.
        case partlyRemoved(oldestKept: Int64)
        /// The stretch is kept and no flow started in it.
        case emptyStretch
        /// The stretch was longer than the widest bars allow: its start is left off.
        case clipped
        /// Always: the counts cover every flow, whatever a list's filter would select.
        case noFilter

        public var sentence: String {
            switch self {
            case .nothingRecorded:
                return "Nothing is recorded yet, so there is no activity to draw; `tv run` records every connection."
            case .removedByRetention(let oldest):
                return "Nothing is kept from this stretch: the oldest connection kept started at \(Units.utc(oldest / 1_000_000)), so what came before was removed by retention or never recorded; `tv activity` alone draws everything kept."
            case .partlyRemoved(let oldest):
                return "Bars drawn · lie before the oldest connection kept (\(Units.utc(oldest / 1_000_000))): removed by retention or never recorded, not quiet."
            case .emptyStretch:
                return "No connection started in this stretch."
            case .clipped:
                return "The stretch is longer than the bars can hold even a week each, so its earliest part is left off; narrow it with --from/--to."
            case .noFilter:
                return "Counts cover every connection recorded: the axis honours no host or status filter."
            }
        }

        /// The notice's name for programs.
        public var name: String {
            switch self {
            case .nothingRecorded: return "nothingRecorded"
            case .removedByRetention: return "removedByRetention"
            case .partlyRemoved: return "partlyRemoved"
            case .emptyStretch: return "emptyStretch"
            case .clipped: return "clipped"
            case .noFilter: return "noFilter"
            }
        }
    }

    /// The axis drawn; nil when nothing is drawn.
    public let axis: ActivityAxis?
    /// One count per bar; nil for a bar wholly before the oldest flow kept.
    public let counts: [Int64?]
    public let notices: [Notice]
    /// Audit markers inside the axis (i21-audit), in time order; empty when nothing is drawn.
    public let markers: [AuditMarker]

    /// The report for `axis` (nil: no flow is recorded) given the store's counts by bar index,
    /// the oldest kept flow's start (µs) and the audit markers of the stretch (those outside the
    /// axis are left out).
    public init(axis: ActivityAxis?, sparse: [Int64: Int64], oldestKept: Int64?, markers: [AuditMarker] = []) {
        guard let axis, let oldestKept else {
            self.axis = nil
            counts = []
            notices = [.nothingRecorded]
            self.markers = []
            return
        }
        guard axis.end > oldestKept else {
            self.axis = nil
            counts = []
            self.markers = []
            notices = [.removedByRetention(oldestKept: oldestKept), .noFilter]
            return
        }
        let filled = axis.zeroFilled(sparse)
        var counts: [Int64?] = []
        for (i, n) in filled.enumerated() {
            let barEnd = axis.start + axis.widthMicros * Int64(i + 1)
            counts.append(barEnd <= oldestKept ? nil : n)
        }
        var notices: [Notice] = []
        if counts.contains(where: { $0 == nil }) { notices.append(.partlyRemoved(oldestKept: oldestKept)) }
        if counts.allSatisfy({ ($0 ?? 0) == 0 }) { notices.append(.emptyStretch) }
        if axis.clipped { notices.append(.clipped) }
        notices.append(.noFilter)
        self.axis = axis
        self.counts = counts
        self.notices = notices
        self.markers = markers.filter { axis.bar(at: $0.time) != nil }.sorted { ($0.time, $0.id) < ($1.time, $1.id) }
    }

    /// The busiest bar: its index and count; nil when every kept bar is 0.
    public var busiest: (index: Int, count: Int64)? {
        var best: (Int, Int64)?
        for (i, n) in counts.enumerated() { if let n, n > (best?.1 ?? 0) { best = (i, n) } }
        return best
    }

    /// The eight block heights, from one eighth to full.
    public static let blocks: [Character] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]

    /// A cell for `n` of at most `top`: a space for 0, else one of the eight blocks, rounded up
    /// (any count above 0 gets at least the lowest block, so a quiet bar is not drawn empty).
    public static func block(_ n: Int64, top: Int64) -> Character {
        guard n > 0, top > 0 else { return " " }
        return blocks[min(max(Int((n * 8 + top - 1) / top), 1), 8) - 1]
    }

    /// The bar line: `block` of each count scaled to the busiest, `·` for a bar not kept.
    public var barLine: String {
        let top = busiest?.count ?? 0
        return String(counts.map { n in n.map { ActivityReport.block($0, top: top) } ?? "·" })
    }

    /// The marks row under the rule: `▲` under each bar holding a marker, spaces elsewhere (no
    /// trailing spaces); nil when the stretch holds no marker.
    public var markRow: String? {
        guard let axis, !markers.isEmpty else { return nil }
        let bars = Set(markers.compactMap { axis.bar(at: $0.time) })
        let last = bars.max() ?? 0
        return String((0...last).map { bars.contains($0) ? "▲" : " " })
    }

    /// The lines: the bars, a rule, the marks row (when a marker falls in the stretch), the two
    /// ends dated (left and right aligned under the bars), the busiest interval, one line per
    /// marker (its time and text), then the notices. Only the notices when nothing is drawn.
    public var lines: [String] {
        guard let axis else { return notices.map(\.sentence) }
        let format = axis.widthMicros >= 86_400_000_000 ? "%Y-%m-%d" : (axis.widthMicros >= 60_000_000 ? "%Y-%m-%d %H:%M" : "%Y-%m-%d %H:%M:%S")
        let left = Units.utc(axis.start / 1_000_000, format: format)
        let right = Units.utc(axis.end / 1_000_000, format: format) + " UTC"
        let gap = max(1, axis.bars - left.count - right.count)
        var out = [barLine, String(repeating: "─", count: axis.bars)]
        if let markRow { out.append(markRow) }
        out.append(left + String(repeating: " ", count: gap) + right)
        var summary = "\(axis.bars) bar\(axis.bars == 1 ? "" : "s") of \(axis.widthWords)"
        if let b = busiest {
            let at = Units.utc((axis.start + axis.widthMicros * Int64(b.index)) / 1_000_000, format: format)
            summary += "; busiest: \(Units.grouped(b.count)) \(b.count == 1 ? "connection" : "connections") in the \(axis.widthWords) from \(at)"
        }
        out.append(summary + ".")
        out += markers.map(AuditPresentation.markerLine)
        out += notices.map(\.sentence)
        return out
    }

    /// `tv activity --json`: `from`, `to`, `widthSeconds` (null when nothing is drawn), `buckets`
    /// (`start` µs and `count`, null for a bar not kept), `busiest`, `markers` (each as
    /// `tv audit show --json` gives it, plus `bar`, its bar's index), `notices` (`name`, `sentence`).
    public var json: JSONValue {
        let buckets: [JSONValue] = axis.map { axis in
            counts.enumerated().map { i, n in
                .object([("start", .int(axis.start + axis.widthMicros * Int64(i))), ("count", n.map { .int($0) } ?? .null)])
            }
        } ?? []
        return .object([
            ("from", axis.map { .int($0.start) } ?? .null),
            ("to", axis.map { .int($0.end) } ?? .null),
            ("widthSeconds", axis.map { .int($0.widthMicros / 1_000_000) } ?? .null),
            ("buckets", .array(buckets)),
            ("busiest", busiest.map { .int($0.count) } ?? .null),
            ("markers", .array(markers.map { m in
                guard case .object(var fields) = AuditPresentation.json(m) else { return AuditPresentation.json(m) }
                fields.append(("bar", axis?.bar(at: m.time).map { .int(Int64($0)) } ?? .null))
                return .object(fields)
            })),
            ("notices", .array(notices.map { .object([("name", .string($0.name)), ("sentence", .string($0.sentence))]) })),
        ])
    }
}
