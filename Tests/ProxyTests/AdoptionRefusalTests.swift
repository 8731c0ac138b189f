import Testing
@testable import Proxy

/// Whether a front end that hands connections over (the TUN's) may start one more, and what a
/// refusal says. A trial: at `tv exec`'s cap of 5, tv connected upstream, completed the program's
/// handshake and reset it; the flow read "it was stopping, or at its connection cap".
@Suite struct AdoptionRefusalTests {
    @Test("a connection under way counts against the cap as an open one does; a stopped proxy takes none")
    func deciding() {
        #expect(AdoptionRefusal.deciding(running: true, open: 0, starting: 0, cap: 5) == nil)
        #expect(AdoptionRefusal.deciding(running: true, open: 3, starting: 1, cap: 5) == nil)
        #expect(AdoptionRefusal.deciding(running: true, open: 4, starting: 1, cap: 5) == .atConnectionCap(5))
        #expect(AdoptionRefusal.deciding(running: true, open: 0, starting: 5, cap: 5) == .atConnectionCap(5))
        #expect(AdoptionRefusal.deciding(running: true, open: 6, starting: 0, cap: 5) == .atConnectionCap(5))
        #expect(AdoptionRefusal.deciding(running: false, open: 0, starting: 0, cap: 5) == .stopping)
    }

    @Test("the flow says which: the cap with its number, or the stop; and a program that stopped resending its SYN is said as what tv saw")
    func sentences() {
        #expect(ConnectionFailure.notAdopted(.atConnectionCap(5)).sentence
                == "tv was at its connection cap (5 open, the most it takes at once) when this connection reached it, so tv reset it and its connection to the server")
        #expect(ConnectionFailure.notAdopted(.stopping).sentence
                == "tv was stopping when this connection reached it, so tv reset it and its connection to the server")
        #expect(ConnectionFailure.clientGone(reset: false, .stoppedResendingSYN).sentence
                == "the program stopped resending its SYN while tv was connecting to the server (a connect given up sends nothing), so tv gave up its own connect too")
    }

    @Test("the notice for SYNs dropped at the cap says they were held back, not refused, and why the cap is what it is")
    func notice() {
        #expect(ProxyNotice.synsDroppedAtCap(cap: 5, descriptorLimit: 64, dropped: 15).message
                == "held back 15 connection requests (SYNs dropped, as a server whose listen queue is full drops them, so the programs' kernels send them again): 5 are open or being connected, the most tv takes at once (sized from the file-descriptor limit of 64; raise it with ulimit -n)")
        #expect(ProxyNotice.synsDroppedAtCap(cap: 4_096, descriptorLimit: nil, dropped: 1).message
                == "held back a connection request (its SYN dropped, as a server whose listen queue is full drops it, so the program's kernel sends it again): 4096 are open or being connected, the most tv takes at once")
    }
}
