@testable import Proxy
import Testing

@Suite("BusyPollPolicy")
struct BusyPollPolicyTests {
    @Test("off by default and at 0: the loop always blocks at once")
    func off() {
        let policy = BusyPollPolicy(micros: 0)
        #expect(policy.spinNanos == 0)
        #expect(policy.spinUntil(now: 1_000, previousWaitFoundEvents: true, timeoutMillis: -1) == nil)
        #expect(ProxyConfiguration().busyPollMicros == 0)
    }

    @Test("after a wait that found work it polls for the given µs; an idle loop, or one not about to block, does not")
    func spins() {
        let policy = BusyPollPolicy(micros: 200)
        #expect(policy.spinNanos == 200_000)
        #expect(policy.spinUntil(now: 5_000_000, previousWaitFoundEvents: true, timeoutMillis: -1) == 5_200_000)
        #expect(policy.spinUntil(now: 5_000_000, previousWaitFoundEvents: true, timeoutMillis: 30) == 5_200_000)
        #expect(policy.spinUntil(now: 5_000_000, previousWaitFoundEvents: false, timeoutMillis: -1) == nil)
        #expect(policy.spinUntil(now: 5_000_000, previousWaitFoundEvents: true, timeoutMillis: 0) == nil)
    }

    @Test("the spin is clamped to 0 … 1,000 µs")
    func clamped() {
        #expect(BusyPollPolicy(micros: 5_000).spinNanos == 1_000_000)
        #expect(BusyPollPolicy(micros: -3).spinNanos == 0)
    }
}
