import Capture
import Testing

@Suite("CaptureTailSchedule: a held-back tail reaches the file an interval after it first waits")
struct CaptureTailScheduleTests {
    @Test("Due an interval after the first append that left bytes out; later appends do not push it back; a write clears it")
    func dueAfterFirstPending() {
        var schedule = CaptureTailSchedule(interval: 1)
        #expect(schedule.intervalNanos == 1_000_000_000)
        #expect(schedule.deadlineNanos == nil && !schedule.isDue(nowNanos: 5_000_000_000))
        schedule.appended(pending: 0, nowNanos: 10)
        #expect(schedule.deadlineNanos == nil, "every byte in the file: nothing to wait for")
        schedule.appended(pending: 300, nowNanos: 2_000_000_000)
        #expect(schedule.deadlineNanos == 3_000_000_000)
        schedule.appended(pending: 900, nowNanos: 2_500_000_000)
        #expect(schedule.deadlineNanos == 3_000_000_000, "a busy capture still writes its tail once a second")
        #expect(!schedule.isDue(nowNanos: 2_999_999_999))
        #expect(schedule.isDue(nowNanos: 3_000_000_000))
        schedule.wrote()
        #expect(schedule.deadlineNanos == nil && !schedule.isDue(nowNanos: 9_000_000_000))
        schedule.appended(pending: 12, nowNanos: 4_000_000_000)
        schedule.appended(pending: 0, nowNanos: 4_100_000_000)
        #expect(schedule.deadlineNanos == nil, "an append that ended on a whole block left nothing out")
    }

    @Test("A failed write is tried again an interval later, not at once; the interval has a floor of 1 ms")
    func retryAndFloor() {
        var schedule = CaptureTailSchedule(interval: 0.25)
        schedule.appended(pending: 1, nowNanos: 1_000)
        schedule.retryLater(nowNanos: 7_000_000_000)
        #expect(schedule.deadlineNanos == 7_250_000_000)
        #expect(CaptureTailSchedule(interval: 0).intervalNanos == 1_000_000)
    }
}
