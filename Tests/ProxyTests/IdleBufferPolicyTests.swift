@testable import Proxy
import Testing

@Suite("IdleBufferPolicy")
struct IdleBufferPolicyTests {
    typealias Leg = IdleBufferPolicy.LegState

    static let second: UInt64 = 1_000_000_000
    static let quiet = Leg(readable: false, tlsPending: false, unsentRecords: 0, stashedPlaintext: false, readClosed: false)

    @Test("a quiet leg (EAGAIN seen, nothing inside OpenSSL, nothing waiting to go) gives its buffers back")
    func quietLeg() {
        #expect(IdleBufferPolicy.release(Self.quiet, quietFor: Self.second) == true)
    }

    @Test("the relay must have been quiet for a whole second (1,000,000,000 ns)")
    func quietLongEnough() {
        #expect(IdleBufferPolicy.quietNanos == 1_000_000_000)
        #expect(IdleBufferPolicy.release(Self.quiet, quietFor: 0) == false)
        #expect(IdleBufferPolicy.release(Self.quiet, quietFor: 999_999_999) == false)
        #expect(IdleBufferPolicy.release(Self.quiet, quietFor: 1_000_000_000) == true)
        #expect(IdleBufferPolicy.release(Self.quiet, quietFor: 60_000_000_000) == true)
    }

    @Test("a leg still readable keeps its buffers; a closed one does not need them")
    func readable() {
        var leg = Self.quiet
        leg.readable = true
        #expect(IdleBufferPolicy.release(leg, quietFor: Self.second) == false)
        leg.readClosed = true
        #expect(IdleBufferPolicy.release(leg, quietFor: Self.second) == true)
    }

    @Test("anything in flight keeps the buffers: pending TLS data, gathered records, stashed plaintext")
    func inFlight() {
        var pending = Self.quiet
        pending.tlsPending = true
        #expect(IdleBufferPolicy.release(pending, quietFor: Self.second) == false)
        var unsent = Self.quiet
        unsent.unsentRecords = 1
        #expect(IdleBufferPolicy.release(unsent, quietFor: Self.second) == false)
        var stashed = Self.quiet
        stashed.stashedPlaintext = true
        #expect(IdleBufferPolicy.release(stashed, quietFor: Self.second) == false)
        var closedButPending = Self.quiet
        closedButPending.readClosed = true
        closedButPending.tlsPending = true
        #expect(IdleBufferPolicy.release(closedButPending, quietFor: Self.second) == false)
    }

    @Test("the timer tries 1 s after the last byte; after a refused try, 1 s after that try, while idle")
    func attemptTimes() {
        // No refusal since the last activity: quietNanos after it.
        #expect(IdleBufferPolicy.attemptAt(lastActivity: 5_000_000_000, refusedAt: 0) == 6_000_000_000)
        // Refused at 6 s (a leg had records pending): next try at 7 s, not at 6 s again.
        #expect(IdleBufferPolicy.attemptAt(lastActivity: 5_000_000_000, refusedAt: 6_000_000_000) == 7_000_000_000)
        // Traffic after the refusal: the quiet second counts from that traffic.
        #expect(IdleBufferPolicy.attemptAt(lastActivity: 6_500_000_000, refusedAt: 6_000_000_000) == 7_500_000_000)
    }
}
