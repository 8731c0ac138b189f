import Capture
import Testing

/// A client random whose 32 bytes are all `byte`.
func random(_ byte: UInt8) -> TLSClientRandom {
    [UInt8](repeating: byte, count: 32).withUnsafeBytes { TLSClientRandom($0)! }
}

/// The policy behind a reference, so that its mutating calls can sit inside `#expect`.
final class Policy {
    var policy: CaptureHoldPolicy
    init(limits: CaptureHoldPolicy.Limits) { policy = CaptureHoldPolicy(limits: limits) }
    func isWaiting(_ flow: UInt64) -> Bool { policy.isWaiting(flow) }
    func clientHello(flow: UInt64, random: TLSClientRandom, timeMicros: Int64) -> Bool {
        policy.clientHello(flow: flow, random: random, timeMicros: timeMicros)
    }
    func offer(flow: UInt64, bytes: Int) -> CaptureHoldPolicy.Decision { policy.offer(flow: flow, bytes: bytes) }
    func secretWritten(_ random: TLSClientRandom) -> UInt64? { policy.secretWritten(random) }
    func expire(nowMicros: Int64) -> [UInt64] { policy.expire(nowMicros: nowMicros) }
    func releaseAll() -> [UInt64] { policy.releaseAll() }
    var waiting: [UInt64: CaptureHoldPolicy.Wait] { policy.waiting }
    var order: [UInt64] { policy.order }
    var heldBytes: Int { policy.heldBytes }
    var deadlineMicros: Int64? { policy.deadlineMicros }
}

@Suite("CaptureHoldPolicy: which packets wait for their connection's client secret")
struct CaptureHoldPolicyTests {
    func limits(_ change: (inout CaptureHoldPolicy.Limits) -> Void = { _ in }) -> CaptureHoldPolicy.Limits {
        var l = CaptureHoldPolicy.Limits()
        l.maximumAgeMicros = 1_000
        change(&l)
        return l
    }

    @Test("A ClientHello starts a wait; its packets are held, counted; the secret with its random ends it and names the flow")
    func secretEndsWait() {
        let policy = Policy(limits: limits())
        #expect(!policy.isWaiting(7))
        #expect(policy.clientHello(flow: 7, random: random(1), timeMicros: 100))
        #expect(policy.isWaiting(7))
        #expect(policy.offer(flow: 7, bytes: 120) == .hold)
        #expect(policy.offer(flow: 7, bytes: 80) == .hold)
        #expect(policy.waiting[7] == CaptureHoldPolicy.Wait(random: random(1), sinceMicros: 100, packets: 2, bytes: 200))
        #expect(policy.heldBytes == 200)
        #expect(policy.deadlineMicros == 1_100)
        #expect(policy.secretWritten(random(2)) == nil)
        #expect(policy.isWaiting(7))
        #expect(policy.secretWritten(random(1)) == 7)
        #expect(!policy.isWaiting(7))
        #expect(policy.heldBytes == 0 && policy.order.isEmpty && policy.deadlineMicros == nil)
        // Its secret is in the file: a ClientHello with that random (a retry) starts no wait.
        #expect(!policy.clientHello(flow: 8, random: random(1), timeMicros: 200))
        // A second ClientHello of a waiting flow, or another flow with a random already waited for, starts none either.
        #expect(policy.clientHello(flow: 9, random: random(3), timeMicros: 300))
        #expect(!policy.clientHello(flow: 9, random: random(4), timeMicros: 300))
        #expect(!policy.clientHello(flow: 10, random: random(3), timeMicros: 300))
        #expect(policy.order == [9])
    }

    @Test("The secret written before the ClientHello is read (both in one batch): no wait")
    func secretFirst() {
        let policy = Policy(limits: limits())
        #expect(policy.secretWritten(random(5)) == nil)
        #expect(!policy.clientHello(flow: 1, random: random(5), timeMicros: 0))
        #expect(policy.waiting.isEmpty)
    }

    @Test("Per-flow packets, per-flow bytes and all bytes: the packet that would pass a bound lets its flow go (its wait ends)")
    func bounds() {
        let policy = Policy(limits: limits { $0.packetsPerFlow = 2; $0.bytesPerFlow = 300; $0.totalBytes = 500 })
        #expect(policy.clientHello(flow: 1, random: random(1), timeMicros: 0))
        #expect(policy.offer(flow: 1, bytes: 100) == .hold)
        #expect(policy.offer(flow: 1, bytes: 100) == .hold)
        #expect(policy.offer(flow: 1, bytes: 100) == .release)
        #expect(!policy.isWaiting(1) && policy.heldBytes == 0)
        #expect(policy.clientHello(flow: 2, random: random(2), timeMicros: 0))
        #expect(policy.offer(flow: 2, bytes: 250) == .hold)
        #expect(policy.offer(flow: 2, bytes: 51) == .release)
        #expect(policy.clientHello(flow: 3, random: random(3), timeMicros: 0))
        #expect(policy.clientHello(flow: 4, random: random(4), timeMicros: 0))
        #expect(policy.offer(flow: 3, bytes: 300) == .hold)
        #expect(policy.offer(flow: 4, bytes: 200) == .hold)
        #expect(policy.heldBytes == 500)
        #expect(policy.offer(flow: 4, bytes: 1) == .release)
        #expect(policy.heldBytes == 300 && policy.order == [3])
        // A flow that does not wait is let go (nothing held for it).
        #expect(policy.offer(flow: 99, bytes: 1) == .release)
    }

    @Test("Waits end by age (now − ClientHello ≥ maximum), oldest first; releaseAll ends every one in the order they began")
    func ageAndAll() {
        let policy = Policy(limits: limits())
        #expect(policy.clientHello(flow: 5, random: random(5), timeMicros: 100))
        #expect(policy.clientHello(flow: 3, random: random(3), timeMicros: 200))
        #expect(policy.clientHello(flow: 4, random: random(4), timeMicros: 900))
        #expect(policy.deadlineMicros == 1_100)
        #expect(policy.expire(nowMicros: 1_099) == [])
        #expect(policy.expire(nowMicros: 1_200) == [5, 3])
        #expect(policy.order == [4] && policy.deadlineMicros == 1_900)
        #expect(policy.clientHello(flow: 6, random: random(6), timeMicros: 950))
        #expect(policy.releaseAll() == [4, 6])
        #expect(policy.waiting.isEmpty && policy.deadlineMicros == nil)
        // A random whose wait ended without its secret may wait again (it was never written).
        #expect(policy.clientHello(flow: 7, random: random(5), timeMicros: 2_000))
    }

    @Test("At most `flows` waits at once; at most `rememberedSecrets` randoms remembered, the oldest forgotten first")
    func memoryBounds() {
        let policy = Policy(limits: limits { $0.flows = 2; $0.rememberedSecrets = 2 })
        #expect(policy.clientHello(flow: 1, random: random(1), timeMicros: 0))
        #expect(policy.clientHello(flow: 2, random: random(2), timeMicros: 0))
        #expect(!policy.clientHello(flow: 3, random: random(3), timeMicros: 0))
        #expect(policy.releaseAll() == [1, 2])
        for byte: UInt8 in [10, 11, 12] { #expect(policy.secretWritten(random(byte)) == nil) }
        #expect(policy.clientHello(flow: 4, random: random(10), timeMicros: 0))
        #expect(!policy.clientHello(flow: 5, random: random(11), timeMicros: 0))
        #expect(!policy.clientHello(flow: 6, random: random(12), timeMicros: 0))
    }
}
