import FlowStore
import FlowTerms
import Testing
import TVHome
import Tunnel
@testable import TVCore

/// The sentences a new-user trial of `tv exec` found hard or wrong, each with its exact text:
/// how the command ended, where its flows are, the go-ahead question, the names from lookups,
/// and what a flow says of a server's choices it could not see.
@Suite struct ExecWordingTests {
    /// 2025-11-30 14:05:03 UTC.
    static let t0: Int64 = 1_764_511_503 * 1_000_000

    @Test("how the command ended: its exit code, or the signal that killed it by name and number with the code tv exits with")
    func endings() {
        #expect(ChildEnding.exited(code: 3).exitCode == 3)
        #expect(ChildEnding.killed(signal: 9).exitCode == 137)
        #expect(ChildEnding.signalName(9) == "SIGKILL (9)")
        #expect(ChildEnding.signalName(15) == "SIGTERM (15)")
        #expect(ChildEnding.signalName(1) == "SIGHUP (1)")
        #expect(ChildEnding.signalName(31) == "SIGSYS (31)")
        #expect(ChildEnding.signalName(34) == "SIGRTMIN (34)")
        #expect(ChildEnding.signalName(37) == "SIGRTMIN+3 (37)")
        #expect(ChildEnding.signalName(99) == "signal 99")
        #expect(ExecExitSummary.endingSentence(command: "sh", .exited(code: 0)) == "sh exited with 0")
        #expect(ExecExitSummary.endingSentence(command: "sh", .killed(signal: 9)) == "sh was killed by SIGKILL (9), so tv exits with 137")
        #expect(ExecExitSummary.endingSentence(command: "sh", .killed(signal: 15)) == "sh was killed by SIGTERM (15), so tv exits with 143")
    }

    @Test("where its flows are: their ids and the tv flows that lists them, the one flow's tv flow, or that it made none")
    func flows() {
        func line(_ ending: ChildEnding, _ ids: ClosedRange<Int64>?) -> String {
            ExecExitSummary(command: "curl", ending: ending, folder: "/d", flowIDs: ids, startedAtMicros: Self.t0 + 250_000).line
        }
        #expect(line(.exited(code: 0), 1_201 ... 1_245)
                == "curl exited with 0; its flows are 1201 to 1245 in /d (`tv flows --from 2025-11-30T14:05:03Z`).")
        #expect(line(.killed(signal: 9), 4_294_967_369 ... 4_294_967_369)
                == "curl was killed by SIGKILL (9), so tv exits with 137; its flow is 4294967369 in /d (`tv flow 4294967369`).")
        #expect(line(.exited(code: 6), nil)
                == "curl exited with 6; it made no connection and sent no datagram through tv, so no flow was recorded.")
    }

    @Test("a command that cannot start: 127 when there is no such file, 126 when it is there but cannot be run (as a shell says them)")
    func cannotStart() {
        let missing = TunnelError.cannotRun(command: "no-such", reason: "no such file or directory")
        #expect(missing.exitCode == 127)
        #expect(missing.message == "tv could not start no-such (no such file or directory); check the command name and PATH.")
        let refused = TunnelError.cannotRun(command: "./x.sh", reason: "permission denied", found: true)
        #expect(refused.exitCode == 126)
        #expect(refused.message == "tv could not start ./x.sh (permission denied); check that it is a program you may run (chmod +x for a script with a #! line).")
    }

    @Test("the go-ahead question quotes the command as a shell would take it and names every nameserver the namespace's resolv.conf has")
    func explanation() {
        var plan = TunnelAddressPlan()
        let command = ["sh", "-c", "read x; echo got:$x; curl -s http://a.test/"]
        let lines = ExecExplanation(command: command, plan: plan, mtu: 1500).lines
        #expect(lines[0] == "tv exec will run sh -c 'read x; echo got:$x; curl -s http://a.test/' with all its traffic through tv:")
        #expect(lines[3] == "  • inside, /etc/resolv.conf reads \"nameserver 10.77.0.53\" and \"nameserver fd77::53\" (a private mount namespace: this host's file is untouched);")
        #expect(lines[4] == "  • proxy variables (http_proxy, …) are removed from sh's environment.")
        plan.address6 = nil
        #expect(ExecExplanation(command: ["curl", "https://a.test"], plan: plan, mtu: nil).lines[3]
                == "  • inside, /etc/resolv.conf reads \"nameserver 10.77.0.53\" (a private mount namespace: this host's file is untouched);")
        #expect(ExecExplanation(command: ["curl", "https://a.test"], plan: plan, mtu: nil).lines[0]
                == "tv exec will run curl https://a.test with all its traffic through tv:")
        #expect(Units.listed([]) == "" && Units.listed(["a"]) == "a" && Units.listed(["a", "b", "c"]) == "a, b and c")
    }

    @Test("names from lookups: how many closed connections took their name from the answers, and why that many, in plain words")
    func namedByLookups() {
        let counters: [String: UInt64] = ["dnsAnswersWithAddresses": 30, "dnsNamesLearned": 30]
        #expect(TunnelNamesPresentation.lines(counters, namedFromLookups: 0)[0]
                == "names from lookups: 30 answers gave 30 names; no closed connection took its name from them (each announced a host of its own, which comes first, or went to an address no answer gave)")
        #expect(TunnelNamesPresentation.lines(counters, namedFromLookups: 1)[0]
                == "names from lookups: 30 answers gave 30 names; 1 closed connection took its name from them (it announced no host of its own, and went to an address an answer gave)")
        #expect(TunnelNamesPresentation.lines(counters, namedFromLookups: 1_200)[0]
                == "names from lookups: 30 answers gave 30 names; 1,200 closed connections took their name from them (they announced no host of their own, and went to addresses an answer gave)")
    }

    static func flow(transport: FlowTransport = .tcp, status: FlowStatus = .encrypted) -> FlowRecord {
        var f = FlowRecord(id: 7, startTime: t0, clientAddress: "10.77.0.1", clientPort: 50_000, serverAddress: "10.0.0.2",
                           serverPort: 443, host: "a.test", hostOrigin: .sni, alpn: nil, status: status, bytesUp: 76, bytesDown: 2_048,
                           duration: 1_000_000)
        f.transport = transport
        f.clientALPN = ["h2", "http/1.1"]
        f.clientVersions = ["TLSv1.3", "TLSv1.2"]
        return f
    }

    @Test("what a flow says of the server's choices: not seen for QUIC and TLS 1.3 pass-through (never \"ALPN none\"), none where tv would have seen one")
    func chosen() {
        #expect(FlowDetailPresentation.chosenLines(Self.flow(transport: .udp))
                == ["  chosen       not seen: tv reads only the client's Initial packets of a QUIC connection; the server's choices travel encrypted"])
        #expect(FlowDetailPresentation.chosenLines(Self.flow()) == ["  chosen       not seen: tv read no ServerHello of this connection"])
        var passed = Self.flow()
        passed.clientTLSVersion = "TLSv1.3"
        passed.chosenVersionSource = "server_hello"
        #expect(FlowDetailPresentation.chosenLines(passed)
                == ["  chosen       TLSv1.3 (read from server hello); ALPN not seen (TLS 1.3 sends the server's choice encrypted)"])
        passed.clientTLSVersion = "TLSv1.2"
        #expect(FlowDetailPresentation.chosenLines(passed) == ["  chosen       TLSv1.2 (read from server hello); ALPN none"])
        passed.clientTLSVersion = "TLSv1.3"
        passed.clientALPN = []
        #expect(FlowDetailPresentation.chosenLines(passed) == ["  chosen       TLSv1.3 (read from server hello); ALPN none"])
    }

    @Test("the bytes line says a count once when its units are exact (76 B, not \"76 B up (76 B)\"), the exact count beside a rounded one")
    func bytes() {
        let lines = FlowDetailPresentation.lines(Self.flow(), now: Self.t0)
        #expect(lines.contains("  bytes        ↑ 76 B up, ↓ 2.0 KiB down (2048 B) — TCP payload"), "\(lines)")
        #expect(FlowDetailPresentation.exactCount(1_023) == "")
        #expect(FlowDetailPresentation.exactCount(1_536) == " (1536 B)")
    }

    @Test("tv flow --json: packetsCaptured beside packetsUp and packetsDown (null for TCP), only where the capture was read")
    func packetsCaptured() {
        let detail = FlowDetailPresentation.detailJSON(Self.flow(), packetsCaptured: 9).serialized()
        #expect(detail.contains(#""packetsUp":null,"packetsDown":null,"packetsCaptured":9,"duration""#), "\(detail)")
        #expect(FlowDetailPresentation.detailJSON(Self.flow(), packetsCaptured: nil) == FlowDetailPresentation.json(Self.flow()))
        #expect(!FlowDetailPresentation.json(Self.flow()).serialized().contains("packetsCaptured"))
    }
}
