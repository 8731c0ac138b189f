/// Whether a program still waits for its connection, read from its SYN retransmissions while
/// tv's own connect to the server goes on (connect-first; pure).
///
/// tv's connect in the TUN modes has no deadline of its own: its kernel's SYN retries decide, as
/// the program's kernel's decide for the program, so a server that answers late (a lossy path,
/// a SYN queue that was full) is reached through tv as it is without it. tv's 10 s made a server
/// answering at 12 s unreachable, and every blackholed one read ECONNREFUSED (a trial). But the
/// kernel goes on for minutes: Linux 6.18 (tcp_syn_retries 6, tcp_syn_linear_timeouts 4, the
/// defaults) resends a SYN at 1, 2, 3, 4, 5, 7, 11, 19, 35 and 67 s and gives up at 133 s
/// (measured), older kernels at 1, 3, 7, 15, 31, 63 s and 127 s; and a program that gives up
/// first (`curl --connect-timeout 2`) closes a socket in SYN-SENT, which sends nothing. What tv
/// does see is the program's retransmissions: each gap is at most twice the one before (linear
/// gaps of 1 s, then doubling; the first 1 s, RFC 6298's initial RTO, Linux's TCP_TIMEOUT_INIT),
/// so a retransmission that has not come by then, with a margin, means the program gave up, and
/// tv gives up its connect too (a trial's tv knocked on a blackholed server's door 8 s after
/// its program had left; with the kernel's retries and no such reading it would be 2 minutes).
///
/// The margin is half the gap waited for, and a second: Linux's timer wheel fires a timer late
/// by up to an eighth of its length, and the TUN's queue and tv's housekeeping (every 200 ms)
/// add their delays. A retransmission lost on the way (a TUN queue overflowing) ends tv's
/// connect early; the program's next SYN then starts a new one.
struct SYNRetrySchedule: Sendable, Equatable {
    /// The longest first gap: RFC 6298's initial RTO of 1 s.
    static let firstGapNanos: UInt64 = 1_000_000_000
    /// Added to every wait, besides half of it.
    static let marginNanos: UInt64 = 1_000_000_000

    /// When the program's latest SYN came (monotonic ns).
    private(set) var lastAt: UInt64
    /// The gap before it (0: it was the first).
    private(set) var lastGap: UInt64 = 0

    /// The program's first SYN came at `firstAt`.
    init(firstAt: UInt64) {
        lastAt = firstAt
    }

    /// The program's SYN came again at `now` (a retransmission: the same ISN).
    mutating func resent(at now: UInt64) {
        guard now > lastAt else { return }
        lastGap = now - lastAt
        lastAt = now
    }

    /// The longest the program's next retransmission may take after its latest: 1 s after the
    /// first SYN, then twice the last gap.
    var longestNextGap: UInt64 { lastGap == 0 ? Self.firstGapNanos : max(Self.firstGapNanos, 2 * lastGap) }

    /// When the program is taken to have given up if no SYN of it came since its latest
    /// (monotonic ns): the longest next gap, half of it again, and the margin.
    var givenUpAt: UInt64 { lastAt &+ longestNextGap &+ longestNextGap / 2 &+ Self.marginNanos }
}
