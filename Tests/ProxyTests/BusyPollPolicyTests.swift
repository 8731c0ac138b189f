@testable import Proxy
import Testing

@Suite("BusyPollPolicy")
struct BusyPollPolicyTests {
    @Test("off by default and at 0: the loop always blocks at once, and nothing is recorded")
    func off() {
        var policy = BusyPollPolicy(micros: 0)
        #expect(policy.maximumNanos == 0)
        #expect(!policy.isOn)
        #expect(policy.spinUntil(now: 1_000, previousWaitFoundEvents: true, timeoutMillis: -1) == nil)
        policy.record(.slept(spun: false, foundEvents: true, nanos: 5_000))
        #expect(policy.windowNanos == 0)
        #expect(policy.pollsFoundNothing == 0)
        #expect(ProxyConfiguration().busyPollMicros == 0)
    }

    @Test("after a wait that found work it polls for the window (the maximum at first); an idle loop, or one not about to block, does not")
    func spins() {
        let policy = BusyPollPolicy(micros: 200)
        #expect(policy.isOn)
        #expect(policy.maximumNanos == 200_000)
        #expect(policy.windowNanos == 200_000)
        #expect(policy.spinUntil(now: 5_000_000, previousWaitFoundEvents: true, timeoutMillis: -1) == 5_200_000)
        #expect(policy.spinUntil(now: 5_000_000, previousWaitFoundEvents: true, timeoutMillis: 30) == 5_200_000)
        #expect(policy.spinUntil(now: 5_000_000, previousWaitFoundEvents: false, timeoutMillis: -1) == nil)
        #expect(policy.spinUntil(now: 5_000_000, previousWaitFoundEvents: true, timeoutMillis: 0) == nil)
    }

    @Test("gaps longer than the maximum halve the window down to 0 (below 10 µs); the loop then sleeps at once")
    func shrinks() {
        var policy = BusyPollPolicy(micros: 200)
        var windows: [UInt64] = []
        for _ in 0..<6 {
            policy.record(.slept(spun: policy.windowNanos > 0, foundEvents: true, nanos: 900_000))
            windows.append(policy.windowNanos)
        }
        #expect(windows == [100_000, 50_000, 25_000, 12_500, 0, 0])
        #expect(policy.pollsFoundNothing == 5)
        #expect(policy.pollsFoundWork == 0)
        #expect(policy.spinUntil(now: 1_000, previousWaitFoundEvents: true, timeoutMillis: -1) == nil)
        // A timer that ends a long sleep with no event shrinks too.
        var timed = BusyPollPolicy(micros: 200)
        timed.record(.slept(spun: true, foundEvents: false, nanos: 1_000_000))
        #expect(timed.windowNanos == 100_000)
    }

    @Test("an event within the maximum after the loop slept doubles the window from 10 µs, up to the maximum")
    func grows() {
        var policy = BusyPollPolicy(micros: 200)
        for _ in 0..<5 { policy.record(.slept(spun: true, foundEvents: true, nanos: 300_000)) }
        #expect(policy.windowNanos == 0)
        var windows: [UInt64] = []
        for _ in 0..<7 {
            policy.record(.slept(spun: policy.windowNanos > 0, foundEvents: true, nanos: 150_000))
            windows.append(policy.windowNanos)
        }
        #expect(windows == [10_000, 20_000, 40_000, 80_000, 160_000, 200_000, 200_000])
        #expect(policy.spinUntil(now: 7_000, previousWaitFoundEvents: true, timeoutMillis: -1) == 207_000)
        // A small maximum: the first grow stops at it.
        var small = BusyPollPolicy(micros: 5)
        small.record(.slept(spun: true, foundEvents: true, nanos: 6_000))
        #expect(small.windowNanos == 0)
        small.record(.slept(spun: false, foundEvents: true, nanos: 4_000))
        #expect(small.windowNanos == 5_000)
    }

    @Test("a spin that found work keeps the window and is counted; a short timer sleep with no event changes nothing")
    func keeps() {
        var policy = BusyPollPolicy(micros: 200)
        policy.record(.slept(spun: true, foundEvents: true, nanos: 500_000))
        #expect(policy.windowNanos == 100_000)
        policy.record(.spinFound)
        policy.record(.spinFound)
        #expect(policy.windowNanos == 100_000)
        #expect(policy.pollsFoundWork == 2)
        #expect(policy.pollsFoundNothing == 1)
        policy.record(.slept(spun: true, foundEvents: false, nanos: 150_000))
        #expect(policy.windowNanos == 100_000)
        #expect(policy.pollsFoundNothing == 2)
    }

    @Test("the maximum is clamped to 0 … 1,000 µs")
    func clamped() {
        #expect(BusyPollPolicy(micros: 5_000).maximumNanos == 1_000_000)
        #expect(BusyPollPolicy(micros: -3).maximumNanos == 0)
    }
}
