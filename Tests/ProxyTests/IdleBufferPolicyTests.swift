@testable import Proxy
import Testing

@Suite("IdleBufferPolicy")
struct IdleBufferPolicyTests {
    typealias Leg = IdleBufferPolicy.LegState

    static let quiet = Leg(readable: false, tlsPending: false, unsentRecords: 0, stashedPlaintext: false, readClosed: false)

    @Test("a quiet leg (EAGAIN seen, nothing inside OpenSSL, nothing waiting to go) gives its buffers back")
    func quietLeg() {
        #expect(IdleBufferPolicy.release(Self.quiet) == true)
    }

    @Test("a leg still readable keeps its buffers; a closed one does not need them")
    func readable() {
        var leg = Self.quiet
        leg.readable = true
        #expect(IdleBufferPolicy.release(leg) == false)
        leg.readClosed = true
        #expect(IdleBufferPolicy.release(leg) == true)
    }

    @Test("anything in flight keeps the buffers: pending TLS data, gathered records, stashed plaintext")
    func inFlight() {
        var pending = Self.quiet
        pending.tlsPending = true
        #expect(IdleBufferPolicy.release(pending) == false)
        var unsent = Self.quiet
        unsent.unsentRecords = 1
        #expect(IdleBufferPolicy.release(unsent) == false)
        var stashed = Self.quiet
        stashed.stashedPlaintext = true
        #expect(IdleBufferPolicy.release(stashed) == false)
        var closedButPending = Self.quiet
        closedButPending.readClosed = true
        closedButPending.tlsPending = true
        #expect(IdleBufferPolicy.release(closedButPending) == false)
    }
}
