/// The Timeline's scrub bar as `tv activity` draws it: a stretch of time cut into bars of one
/// round width from a ladder, the counts per bar zero-filled. Pure: times in (µs since the
/// epoch), bars out; the store's aggregate (`FlowStore.activity`) supplies the sparse counts.
public struct ActivityAxis: Sendable, Equatable {
    /// The round bar widths, in seconds, narrowest first: 1, 2, 5, 10, 15, 30 s, 1, 2, 5, 10, 15,
    /// 30 min, 1, 2, 3, 6, 12 h, 1 day, 1 week. The intermediate rungs give a small bar count an
    /// axis with a shape.
    public static let ladderSeconds: [Int64] = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1_800,
                                                3_600, 7_200, 10_800, 21_600, 43_200, 86_400, 604_800]

    /// The first bar's start (µs), a whole multiple of `widthMicros` (bars line up with the clock).
    public let start: Int64
    /// Every bar's width (µs), a rung of the ladder.
    public let widthMicros: Int64
    /// How many bars.
    public let bars: Int
    /// True when even the widest rung needed more bars than allowed, and the earliest were left off.
    public let clipped: Bool

    /// The end of the last bar (µs, exclusive).
    public var end: Int64 { start + widthMicros * Int64(bars) }

    /// The axis over [`from`, `to`) in at most `maxBars` bars: the narrowest rung for which the
    /// stretch, snapped outward to whole bars, fits. Past the widest rung the latest `maxBars`
    /// bars are kept (`clipped`). `to` at or before `from` is taken as one µs after it.
    public init(from: Int64, to: Int64, maxBars: Int) {
        let maxBars = max(1, maxBars)
        let to = max(to, from + 1)
        for seconds in ActivityAxis.ladderSeconds {
            let width = seconds * 1_000_000
            let first = ActivityAxis.floor(from, width), last = ActivityAxis.ceil(to, width)
            let count = Int((last - first) / width)
            if count <= maxBars {
                self.init(start: first, widthMicros: width, bars: count, clipped: false)
                return
            }
        }
        let width = ActivityAxis.ladderSeconds.last! * 1_000_000
        let last = ActivityAxis.ceil(to, width)
        self.init(start: last - width * Int64(maxBars), widthMicros: width, bars: maxBars, clipped: true)
    }

    /// The axis `tv activity` draws for the options given (µs; nil: not given) over a history
    /// whose flows start from `oldest` to `newest`: --from/--to as given; --to alone from the
    /// oldest flow, or, when even that started after --to, from --to's own moment (nothing kept
    /// then: the report says so; it drew the oldest flow's second, after --to, a trial); --from
    /// alone up to `now`; neither, everything kept.
    public static func stretch(from: Int64?, to: Int64?, now: Int64, oldest: Int64, newest: Int64, maxBars: Int) -> ActivityAxis {
        let end = to ?? (from != nil ? now : newest + 1)
        let start = from ?? (oldest < end ? oldest : end - 1)
        return ActivityAxis(from: start, to: end, maxBars: maxBars)
    }

    /// An axis as given (tests, and a stretch already planned).
    public init(start: Int64, widthMicros: Int64, bars: Int, clipped: Bool = false) {
        self.start = start
        self.widthMicros = widthMicros
        self.bars = bars
        self.clipped = clipped
    }

    /// One count per bar, zero where `sparse` (bar index → count) has none; indices outside the
    /// axis are ignored.
    public func zeroFilled(_ sparse: [Int64: Int64]) -> [Int64] {
        (0..<bars).map { sparse[Int64($0)] ?? 0 }
    }

    /// The bar holding `time`, or nil when it is outside the axis.
    public func bar(at time: Int64) -> Int? {
        guard time >= start, time < end else { return nil }
        return Int((time - start) / widthMicros)
    }

    /// The width in words: `1 s`, `15 s`, `5 min`, `3 h`, `1 day`, `1 week`.
    public var widthWords: String {
        let s = widthMicros / 1_000_000
        if s % 604_800 == 0 { return s == 604_800 ? "1 week" : "\(s / 604_800) weeks" }
        if s % 86_400 == 0 { return s == 86_400 ? "1 day" : "\(s / 86_400) days" }
        if s % 3_600 == 0 { return "\(s / 3_600) h" }
        if s % 60 == 0 { return "\(s / 60) min" }
        return "\(s) s"
    }

    static func floor(_ t: Int64, _ w: Int64) -> Int64 { t >= 0 ? t / w * w : -((-t + w - 1) / w * w) }
    static func ceil(_ t: Int64, _ w: Int64) -> Int64 { -floor(-t, w) }
}
