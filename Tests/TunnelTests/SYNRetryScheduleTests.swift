import Testing
@testable import Tunnel

/// When tv takes a program to have given up its connect: its next SYN retransmission has not
/// come within the longest gap the kernel's schedule allows, half of it again, and a second.
@Suite struct SYNRetryScheduleTests {
    let second: UInt64 = 1_000_000_000

    @Test("after the first SYN: 1 s for the first retransmission, + 0.5 s + 1 s; after a 1 s gap: 2 s, + 1 s + 1 s")
    func firstGaps() {
        var s = SYNRetrySchedule(firstAt: 10 * second)
        #expect(s.longestNextGap == second)
        #expect(s.givenUpAt == 12 * second + second / 2)
        s.resent(at: 11 * second)
        #expect(s.lastAt == 11 * second && s.lastGap == second && s.longestNextGap == 2 * second)
        #expect(s.givenUpAt == 15 * second)
        // A SYN at or before the last one (a duplicate in the same turn) changes nothing.
        s.resent(at: 11 * second)
        #expect(s.lastGap == second && s.givenUpAt == 15 * second)
    }

    /// Measured on Linux 6.18 (tcp_syn_retries 6, tcp_syn_linear_timeouts 4): SYNs at 0, 1, 2, 3,
    /// 4, 5, 7, 11, 19, 35, 67 s, ETIMEDOUT at 133 s; older kernels: 0, 1, 3, 7, 15, 31, 63 s, 127 s.
    @Test("a program still waiting is never taken for gone, on either kernel's schedule; after its last SYN tv's own kernel gives up first")
    func kernelSchedules() {
        for schedule in [[0, 1, 2, 3, 4, 5, 7, 11, 19, 35, 67], [0, 1, 3, 7, 15, 31, 63]] as [[UInt64]] {
            var s = SYNRetrySchedule(firstAt: 0)
            for at in schedule.dropFirst() {
                #expect(at * second < s.givenUpAt, "SYN at \(at) s")
                s.resent(at: at * second)
            }
            #expect(s.givenUpAt > 133 * second)
        }
        var linear = SYNRetrySchedule(firstAt: 0)
        for at in [1, 2, 3, 4, 5, 7, 11, 19, 35, 67] as [UInt64] { linear.resent(at: at * second) }
        #expect(linear.givenUpAt == 164 * second)
    }

    /// A trial: `curl --connect-timeout 2` left at 2 s, and tv went on knocking on a blackholed
    /// server's door until its own 10 s (with the kernel's retries alone it would be 133 s).
    @Test("a program that gave up at 2 s (SYNs at 0, 1 and 2 s) is taken for gone at 6 s")
    func gaveUp() {
        var s = SYNRetrySchedule(firstAt: 0)
        s.resent(at: second)
        s.resent(at: 2 * second)
        #expect(s.givenUpAt == 6 * second)
    }
}
