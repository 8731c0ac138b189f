@testable import Proxy
import Testing

@Suite("HeapTrimPolicy")
struct HeapTrimPolicyTests {
    static let ms: UInt64 = 1_000_000

    @Test("the first release arms a trim 250 ms later; further releases before it arm nothing")
    func firstRelease() {
        var policy = HeapTrimPolicy()
        #expect(policy.released(at: 5_000 * Self.ms) == 5_250 * Self.ms)
        #expect(policy.released(at: 5_100 * Self.ms) == nil)
        #expect(policy.released(at: 5_249 * Self.ms) == nil)
        #expect(policy.dueAt == 5_250 * Self.ms)
    }

    @Test("the timer trims once, at or after the due time, and never when nothing is due")
    func fire() {
        var policy = HeapTrimPolicy()
        #expect(policy.fire(at: 1_000 * Self.ms) == false)
        _ = policy.released(at: 1_000 * Self.ms)
        #expect(policy.fire(at: 1_249 * Self.ms) == false)
        #expect(policy.fire(at: 1_250 * Self.ms) == true)
        #expect(policy.lastTrim == 1_250 * Self.ms)
        #expect(policy.dueAt == 0)
        #expect(policy.fire(at: 1_300 * Self.ms) == false)
    }

    @Test("a release soon after a trim waits for a whole second since that trim")
    func minimumInterval() {
        var policy = HeapTrimPolicy()
        _ = policy.released(at: 1_000 * Self.ms)
        #expect(policy.fire(at: 1_250 * Self.ms) == true)
        #expect(policy.released(at: 1_400 * Self.ms) == 2_250 * Self.ms)
        #expect(policy.fire(at: 2_000 * Self.ms) == false)
        #expect(policy.fire(at: 2_250 * Self.ms) == true)
        // Long after: the settle time alone.
        #expect(policy.released(at: 9_000 * Self.ms) == 9_250 * Self.ms)
    }
}
