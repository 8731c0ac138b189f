import FlowStore
import Testing
import TVHome
@testable import TVCore

@Suite struct ActivityAxisTests {
    static let s: Int64 = 1_000_000
    /// 2025-11-30 14:05:03 UTC.
    static let t0: Int64 = 1_764_511_503 * s

    @Test("the ladder: 1 s … 1 week with the intermediate rungs")
    func ladder() {
        #expect(ActivityAxis.ladderSeconds == [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1_800, 3_600, 7_200, 10_800,
                                               21_600, 43_200, 86_400, 604_800])
    }

    @Test("the narrowest rung whose whole bars cover the stretch within the bar count")
    func rungChoice() {
        let s = Self.s
        // 60 s in 60 bars: 1 s bars, snapped to whole seconds already.
        var a = ActivityAxis(from: 1_000 * s, to: 1_060 * s, maxBars: 60)
        #expect(a == ActivityAxis(start: 1_000 * s, widthMicros: s, bars: 60))
        // The same minute half a second late needs 61 one-second bars: 2 s bars, from 1000 to 1062.
        a = ActivityAxis(from: 1_000 * s + s / 2, to: 1_060 * s + s / 2, maxBars: 60)
        #expect(a == ActivityAxis(start: 1_000 * s, widthMicros: 2 * s, bars: 31))
        // An hour in 80 bars: 60 s bars (45 s would do, but is no rung).
        a = ActivityAxis(from: 3_600 * s, to: 7_200 * s, maxBars: 80)
        #expect(a == ActivityAxis(start: 3_600 * s, widthMicros: 60 * s, bars: 60))
        // An hour in 10 bars: 10 min.
        a = ActivityAxis(from: 3_600 * s, to: 7_200 * s, maxBars: 10)
        #expect(a == ActivityAxis(start: 3_600 * s, widthMicros: 600 * s, bars: 6))
        // A day in 5 bars: 6 h bars (4 of them); in 3 bars: 12 h (2).
        #expect(ActivityAxis(from: 86_400 * s, to: 2 * 86_400 * s, maxBars: 5) == ActivityAxis(start: 86_400 * s, widthMicros: 21_600 * s, bars: 4))
        #expect(ActivityAxis(from: 86_400 * s, to: 2 * 86_400 * s, maxBars: 3) == ActivityAxis(start: 86_400 * s, widthMicros: 43_200 * s, bars: 2))
        // 30 days in 10 bars: a week each, aligned to the epoch's weeks.
        a = ActivityAxis(from: 0, to: 30 * 86_400 * s, maxBars: 10)
        #expect(a == ActivityAxis(start: 0, widthMicros: 604_800 * s, bars: 5))
        // Past the widest rung: the latest bars, clipped.
        a = ActivityAxis(from: 0, to: 10 * 604_800 * s, maxBars: 4)
        #expect(a == ActivityAxis(start: 6 * 604_800 * s, widthMicros: 604_800 * s, bars: 4, clipped: true))
        // A stretch of no length is one µs: one 1 s bar.
        #expect(ActivityAxis(from: 5 * s + 3, to: 5 * s + 3, maxBars: 80) == ActivityAxis(start: 5 * s, widthMicros: s, bars: 1))
    }

    @Test("the stretch drawn for --from/--to/neither; --to before the oldest flow ends at --to and the report says nothing is kept")
    func stretchForOptions() {
        let s = Self.s
        let oldest = 5_000 * s, newest = 5_059 * s, now = 9_000 * s
        // Neither: everything kept. --from alone: up to now. Both: as given.
        #expect(ActivityAxis.stretch(from: nil, to: nil, now: now, oldest: oldest, newest: newest, maxBars: 60)
                == ActivityAxis(start: 5_000 * s, widthMicros: s, bars: 60))
        #expect(ActivityAxis.stretch(from: 8_940 * s, to: nil, now: now, oldest: oldest, newest: newest, maxBars: 60)
                == ActivityAxis(start: 8_940 * s, widthMicros: s, bars: 60))
        #expect(ActivityAxis.stretch(from: 4_000 * s, to: 4_060 * s, now: now, oldest: oldest, newest: newest, maxBars: 60)
                == ActivityAxis(start: 4_000 * s, widthMicros: s, bars: 60))
        // --to alone: from the oldest flow; before the oldest flow, the second ending at --to (it
        // drew the oldest flow's second, after --to: a trial), and the report draws nothing.
        #expect(ActivityAxis.stretch(from: nil, to: 5_030 * s, now: now, oldest: oldest, newest: newest, maxBars: 60)
                == ActivityAxis(start: 5_000 * s, widthMicros: s, bars: 30))
        let before = ActivityAxis.stretch(from: nil, to: 4_000 * s, now: now, oldest: oldest, newest: newest, maxBars: 60)
        #expect(before == ActivityAxis(start: 3_999 * s, widthMicros: s, bars: 1))
        #expect(ActivityReport(axis: before, sparse: [:], oldestKept: oldest).notices == [.removedByRetention(oldestKept: oldest), .noFilter])
    }

    @Test("zero-filling: one count per bar, 0 where the aggregate had none")
    func zeroFill() {
        let axis = ActivityAxis(start: 0, widthMicros: Self.s, bars: 6)
        #expect(axis.zeroFilled([1: 4, 4: 1, 9: 7]) == [0, 4, 0, 0, 1, 0])
        #expect(axis.bar(at: 0) == 0)
        #expect(axis.bar(at: 6 * Self.s - 1) == 5)
        #expect(axis.bar(at: 6 * Self.s) == nil)
        #expect(["1 s", "15 s", "5 min", "3 h", "1 day", "1 week"] == [1, 15, 300, 10_800, 86_400, 604_800].map {
            ActivityAxis(start: 0, widthMicros: Int64($0) * Self.s, bars: 1).widthWords
        })
    }

    @Test("the drawing: blocks scaled to the busiest, both ends dated, the busiest's count, the filter note")
    func drawing() {
        let axis = ActivityAxis(from: Self.t0 - 3 * Self.s, to: Self.t0 + 5 * Self.s, maxBars: 8)
        #expect(axis == ActivityAxis(start: Self.t0 - 3 * Self.s, widthMicros: Self.s, bars: 8))
        let report = ActivityReport(axis: axis, sparse: [0: 8, 1: 1, 3: 4, 7: 2], oldestKept: Self.t0 - 3 * Self.s)
        #expect(report.counts == [8, 1, 0, 4, 0, 0, 0, 2])
        #expect(report.lines == [
            "█▁ ▄   ▂",
            "────────",
            "2025-11-30 14:05:00 2025-11-30 14:05:08 UTC",
            "8 bars of 1 s; busiest: 8 connections in the 1 s from 2025-11-30 14:05:00.",
            "Counts cover every connection recorded: the axis honours no host or status filter.",
        ])
        #expect(report.json.serialized().hasPrefix(#"{"from":1764511500000000,"to":1764511508000000,"widthSeconds":1,"buckets":[{"start":1764511500000000,"count":8},"#))
    }

    @Test("audit markers in the stretch: a ▲ under their bars, one line each with time and text, a markers array in JSON; outside ones left out")
    func markers() {
        let axis = ActivityAxis(start: Self.t0 - 3 * Self.s, widthMicros: Self.s, bars: 8)
        let inside = [AuditMarker(id: 2, sessionID: 1, time: Self.t0 + 4 * Self.s + 500_000, text: "logged \u{1B}[31min"),
                      AuditMarker(id: 1, sessionID: 1, time: Self.t0 - 2 * Self.s + 120_000, text: "opened the login screen")]
        let outside = AuditMarker(id: 3, sessionID: 1, time: Self.t0 + 5 * Self.s, text: "after the axis")
        let report = ActivityReport(axis: axis, sparse: [0: 8, 1: 1, 3: 4, 7: 2], oldestKept: Self.t0 - 3 * Self.s, markers: inside + [outside])
        #expect(report.markers.map(\.id) == [1, 2])
        #expect(report.lines == [
            "█▁ ▄   ▂",
            "────────",
            " ▲     ▲",
            "2025-11-30 14:05:00 2025-11-30 14:05:08 UTC",
            "8 bars of 1 s; busiest: 8 connections in the 1 s from 2025-11-30 14:05:00.",
            "  ── 2025-11-30 14:05:01.120 UTC  marker: opened the login screen (session 1)",
            "  ── 2025-11-30 14:05:07.500 UTC  marker: logged \\x1b[31min (session 1)",
            "Counts cover every connection recorded: the axis honours no host or status filter.",
        ])
        #expect(report.json.serialized().contains(#""busiest":8,"markers":[{"id":1,"session":1,"time":1764511501120000,"text":"opened the login screen","bar":1},{"id":2,"session":1,"time":1764511507500000,"text":"logged \u001b[31min","bar":7}],"notices""#))
        let none = ActivityReport(axis: axis, sparse: [0: 1], oldestKept: Self.t0 - 3 * Self.s, markers: [outside])
        #expect(none.markRow == nil && none.lines.count == 5)
    }

    @Test("the four empty and edge sentences: nothing recorded, removed by retention, partly removed, an empty stretch")
    func edges() {
        let nothing = ActivityReport(axis: nil, sparse: [:], oldestKept: nil)
        #expect(nothing.lines == ["Nothing is recorded yet, so there is no activity to draw; `tv run` records every connection."])
        #expect(nothing.json.serialized() == #"{"from":null,"to":null,"widthSeconds":null,"buckets":[],"busiest":null,"markers":[],"notices":[{"name":"nothingRecorded","sentence":"Nothing is recorded yet, so there is no activity to draw; `tv run` records every connection."}]}"#)

        let before = ActivityAxis(start: Self.t0 - 600 * Self.s, widthMicros: 60 * Self.s, bars: 10)
        let removed = ActivityReport(axis: before, sparse: [:], oldestKept: Self.t0)
        #expect(removed.axis == nil)
        #expect(removed.lines == [
            "Nothing is kept from this stretch: the oldest connection kept started at 2025-11-30 14:05:03 UTC, so what came before was removed by retention or never recorded; `tv activity` alone draws everything kept.",
            "Counts cover every connection recorded: the axis honours no host or status filter.",
        ])

        let across = ActivityAxis(start: Self.t0 - 3 * Self.s, widthMicros: Self.s, bars: 6)
        let partly = ActivityReport(axis: across, sparse: [3: 2, 5: 1], oldestKept: Self.t0 - Self.s / 2)
        #expect(partly.counts == [nil, nil, 0, 2, 0, 1])
        #expect(partly.barLine == "·· █ ▄")
        #expect(partly.notices == [.partlyRemoved(oldestKept: Self.t0 - Self.s / 2), .noFilter])
        #expect(partly.notices[0].sentence == "Bars drawn · lie before the oldest connection kept (2025-11-30 14:05:02 UTC): removed by retention or never recorded, not quiet.")

        let quiet = ActivityReport(axis: across, sparse: [:], oldestKept: Self.t0 - 3 * Self.s)
        #expect(quiet.counts == [0, 0, 0, 0, 0, 0])
        #expect(quiet.notices == [.emptyStretch, .noFilter])
        #expect(quiet.lines[3] == "6 bars of 1 s.")
        #expect(quiet.lines[4] == "No connection started in this stretch.")
    }
}
