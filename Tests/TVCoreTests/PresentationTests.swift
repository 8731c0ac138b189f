import FlowStore
import Recording
import Testing
@testable import TVCore
import FlowTerms

@Suite struct UnitsTests {
    @Test func bytes() {
        #expect(Units.bytes(0) == "0 B")
        #expect(Units.bytes(1023) == "1023 B")
        #expect(Units.bytes(1024) == "1.0 KiB")
        #expect(Units.bytes(1536) == "1.5 KiB")
        #expect(Units.bytes(10 * 1024 * 1024) == "10.0 MiB")
        #expect(Units.bytes(150 * 1024 * 1024) == "150 MiB")
        // Rounding to 1024 of a unit is the next unit's 1.0 (it read "1024 KiB": a re-check).
        #expect(Units.bytes(1_048_524) == "1.0 MiB")
        #expect(Units.bytes(1_047_552) == "1023 KiB")
        #expect(Units.bytes(3 * 1024 * 1024 * 1024) == "3.0 GiB")
    }

    @Test func durations() {
        #expect(Units.duration(microseconds: 850) == "850 µs")
        #expect(Units.duration(microseconds: 12_345) == "12 ms")
        #expect(Units.duration(microseconds: 1_250_000) == "1.3 s")
        #expect(Units.duration(microseconds: 185_000_000) == "3 min 05 s")
        #expect(Units.duration(microseconds: 7_440_000_000) == "2 h 04 min")
    }

    @Test func relativeTimes() {
        let now: Int64 = 1_764_471_900_000_000
        #expect(Units.relative(now, now: now) == "just now")
        #expect(Units.relative(now - 12_000_000, now: now) == "12 s ago")
        #expect(Units.relative(now - 300_000_000, now: now) == "5 min ago")
        #expect(Units.relative(now - 3 * 3_600_000_000, now: now) == "3 h ago")
        #expect(Units.relative(now - 2 * 86_400_000_000, now: now) == "2025-11-28 03:05")
        #expect(Units.utcMillis(1_764_471_900_123_456) == "2025-11-30 03:05:00.123 UTC")
    }
}

@Suite struct TimeFilterTests {
    @Test func spans() throws {
        #expect(try TimeFilter.span("90s") == 90_000_000)
        #expect(try TimeFilter.span("15m") == 900_000_000)
        #expect(try TimeFilter.span("1h") == 3_600_000_000)
        #expect(try TimeFilter.span("2d") == 172_800_000_000)
        #expect(try TimeFilter.span("1w") == 604_800_000_000)
        #expect(throws: TimeFilterError.badSpan("1y")) { try TimeFilter.span("1y") }
        #expect(throws: TimeFilterError.badSpan("h")) { try TimeFilter.span("h") }
        #expect(throws: TimeFilterError.emptySpan("0s")) { try TimeFilter.span("0s") }
        #expect(throws: TimeFilterError.emptySpan("0w")) { try TimeFilter.span("0w") }
        // Past what µs can hold: refused, not a trap (a trial's 99999999999d crashed tv flows).
        #expect(throws: TimeFilterError.badSpan("99999999999d")) { try TimeFilter.span("99999999999d") }
        #expect(throws: TimeFilterError.badSpan("1000000000000w")) { try TimeFilter.span("1000000000000w") }
        #expect(try TimeFilter.span("106752d") == 106_752 * 86_400_000_000)
    }

    @Test func moments() throws {
        #expect(try TimeFilter.moment("1764471900") == 1_764_471_900_000_000)
        #expect(try TimeFilter.moment("2025-11-30T03:05:00Z") == 1_764_471_900_000_000)
        // RFC 3339 §5.6 NOTE: lowercase t and z are the same.
        #expect(try TimeFilter.moment("2025-11-30t03:05:00z") == 1_764_471_900_000_000)
        #expect(try TimeFilter.moment("2025-11-30t03:05:00.5+01:00") == 1_764_471_900_000_000 - 3_600_000_000 + 500_000)
        #expect(try TimeFilter.moment("2025-11-30 03:05") == 1_764_471_900_000_000)
        #expect(try TimeFilter.moment("2025-11-30") == 1_764_460_800_000_000)
        #expect(throws: TimeFilterError.badMoment("2025-13-01")) { try TimeFilter.moment("2025-13-01") }
        #expect(throws: TimeFilterError.badMoment("yesterday")) { try TimeFilter.moment("yesterday") }
        #expect(throws: TimeFilterError.badMoment("2025-11-30T25:00")) { try TimeFilter.moment("2025-11-30T25:00") }
        // A day the month lacks, seconds before 1970, and seconds past what µs can hold.
        #expect(throws: TimeFilterError.badMoment("2026-02-30")) { try TimeFilter.moment("2026-02-30") }
        #expect(try TimeFilter.moment("2024-02-29") == 1_709_164_800_000_000)
        #expect(throws: TimeFilterError.badMoment("-5")) { try TimeFilter.moment("-5") }
        #expect(throws: TimeFilterError.badMoment("99999999999999")) { try TimeFilter.moment("99999999999999") }
        // RFC 3339 after whole seconds: a fraction (the HAR's startedDateTime) and an offset.
        #expect(try TimeFilter.moment("2025-11-30T03:05:00.713Z") == 1_764_471_900_713_000)
        // `date +%N`'s nine digits, to the microsecond (seven and more were refused: a trial).
        #expect(try TimeFilter.moment("2025-11-30T03:05:00.221044987Z") == 1_764_471_900_221_044)
        #expect(try TimeFilter.moment("2025-11-30T03:05:00.2210440Z") == 1_764_471_900_221_044)
        #expect(throws: TimeFilterError.badMoment("2025-11-30T03:05:00.Z")) { try TimeFilter.moment("2025-11-30T03:05:00.Z") }
        #expect(try TimeFilter.moment("2025-11-30T03:05:00.000001") == 1_764_471_900_000_001)
        #expect(try TimeFilter.moment("2025-11-30T04:05:00+01:00") == 1_764_471_900_000_000)
        #expect(try TimeFilter.moment("2025-11-29T21:35:00.5-0530") == 1_764_471_900_500_000)
        for bad in ["2025-11-30T03:05:00.", "2025-11-30T03:05:00.1234567890123456789Z", "2025-11-30T03:05+01:00", "2025-11-30T03:05:00+1:00",
                    "2025-11-30T03:05:00+24:00", "2025-11-30T03:05:00.5x", "2025-11-30+01:00"] {
            #expect(throws: TimeFilterError.badMoment(bad)) { try TimeFilter.moment(bad) }
        }
    }
}

@Suite struct FlowPresentationTests {
    let now: Int64 = 1_764_471_900_000_000

    func flow(_ status: FlowStatus, id: Int64 = 7) -> FlowRecord {
        var f = FlowRecord(id: id, startTime: now - 12_000_000, clientAddress: "127.0.0.1", clientPort: 50_000,
                           serverAddress: "127.0.0.1", serverPort: 443, host: "a.test", hostOrigin: .sni,
                           alpn: "h2", tlsVersion: "TLSv1.3", status: status, bytesUp: 1536, bytesDown: 2048, duration: 1_250_000)
        if status == .failed { f.failureReason = "the server's certificate did not verify" }
        return f
    }

    @Test func statusWordsOnlyForDepartures() {
        #expect(FlowListPresentation.statusWord(flow(.encrypted)) == "")
        #expect(FlowListPresentation.statusWord(flow(.inspected)) == "inspected")
        #expect(FlowListPresentation.statusWord(flow(.notEncrypted)) == "not encrypted")
        #expect(FlowListPresentation.statusWord(flow(.keptPrivate)) == "kept private")
        #expect(FlowListPresentation.statusWord(flow(.failed)) == "failed: the server's certificate did not verify")
    }

    @Test("a reason over 100 characters is cut to its cause in the list (the first '; ' or ': ' outside brackets, else at 99), whole in the detail")
    func longReasonsAreCutToTheirCause() {
        var f = flow(.failed)
        f.failureReason = "the client does not trust tv's root (alert unknown_ca): give it the root (`tv ca export`; curl: --cacert or CURL_CA_BUNDLE, "
            + "Python requests: REQUESTS_CA_BUNDLE); until then its connections to a.test:443 pass through unread"
        #expect(FlowListPresentation.statusWord(f) == "failed: the client does not trust tv's root (alert unknown_ca) …")
        f.failureReason = "the server's certificate does not verify (unable to get local issuer certificate: depth 1; x); nothing was sent to it; "
            + "trust the server's CA with --upstream-ca FILE"
        #expect(FlowListPresentation.statusWord(f) == "failed: the server's certificate does not verify (unable to get local issuer certificate: depth 1; x) …")
        f.failureReason = String(repeating: "a", count: 101)
        #expect(FlowListPresentation.statusWord(f) == "failed: " + String(repeating: "a", count: 99) + " …")
        f.failureReason = String(repeating: "b", count: 100)
        #expect(FlowListPresentation.statusWord(f) == "failed: " + String(repeating: "b", count: 100))
        #expect(FlowDetailPresentation.statusSentence(f).hasSuffix(String(repeating: "b", count: 100)))
    }

    @Test("an encrypted flow tv would have inspected (ClientHello below tv's minimum) names why in the list and the detail; one with no reason stays blank")
    func notInspectedReason() {
        var old = flow(.encrypted)
        old.failureReason = "the client offers only TLSv1.1, below tv's minimum TLSv1.2; passed through"
        #expect(FlowListPresentation.statusWord(old) == "not inspected: the client offers only TLSv1.1, below tv's minimum TLSv1.2; passed through")
        #expect(FlowDetailPresentation.statusSentence(old)
                == "encrypted — passed through untouched, not inspected: the client offers only TLSv1.1, below tv's minimum TLSv1.2; passed through")
        #expect(FlowDetailPresentation.statusSentence(flow(.encrypted)) == "encrypted — passed through untouched")
    }

    /// Trial 43: after a clean stop on a full disk, a row whose last update was lost read
    /// "encrypted — passed through untouched", "client leg none" beside "Decrypted content 64.0
    /// KiB saved", and its session "killed or crashed".
    @Test("a flow left open by a session that stopped unable to save: its session's end said as it was, its status not claimed (inspected only where the row or its kept content proves it), its client leg and bytes as last saved; closed as interrupted, the status covers that stop")
    func leftOpenByASessionThatStoppedUnsaved() {
        var f = flow(.encrypted)
        f.duration = nil
        f.alpn = nil
        f.tlsVersion = nil
        f.bytesUp = 0
        f.bytesDown = 0
        f.chosenVersionSource = "upstream_leg"
        f.lastActivityTime = f.startTime
        f.clientVersions = ["TLSv1.3", "TLSv1.2"]
        let kept = ContentSummary(turns: 1, keptBytes: 65_536, seenBytes: 100_000, truncated: true)
        let lines = FlowDetailPresentation.lines(f, now: now, content: kept, leftOpen: .stoppedUnsaved)
        #expect(lines.contains("  duration     unknown: its session stopped unable to save its end (the disk holding the data folder was full, or its database could not be written); the next tv run or tv exec closes it as interrupted"), "\(lines)")
        #expect(lines.contains("  status       inspected, as its kept content shows; its last update, with how it ended, was never saved"), "\(lines)")
        #expect(lines.contains("  bytes        ↑ 0 B up, ↓ 0 B down — TCP payload; as last saved, before its last update was lost"), "\(lines)")
        #expect(lines.contains("  client leg   not recorded (the row lacks the flow's last update)"), "\(lines)")
        #expect(!lines.contains { $0.contains("passed through untouched") || $0.contains("did not finish") || $0.contains("killed") }, "\(lines)")
        // Saved before its ClientHello was read: no handshake is claimed either way.
        var early = f
        early.clientVersions = []
        #expect(FlowDetailPresentation.lines(early, now: now, leftOpen: .killed).contains("  not recorded (the row lacks the flow's last update)"))
        // Nothing kept, nothing inspected on the row: not known.
        let bare = FlowDetailPresentation.lines(f, now: now, leftOpen: .killed)
        #expect(bare.contains("  duration     unknown: its session ended without closing it (killed or crashed); the next tv run or tv exec closes it as interrupted"))
        #expect(bare.contains("  status       not known — its last update, with how it ended, was never saved; the row holds what tv saved as the connection began"), "\(bare)")
        f.status = .inspected
        #expect(FlowDetailPresentation.lines(f, now: now, leftOpen: .killed).contains("  status       inspected — tv terminated TLS on both legs; its last update, with how it ended, was never saved"))
        // The list and the JSON say it too (a trial's read "open").
        let row = FlowListPresentation.row(f, now: now, leftOpen: .stoppedUnsaved)
        #expect(row.status == "left open: its session could not save its end" && row.duration == "unknown", "\(row)")
        #expect(FlowListPresentation.row(f, now: now).duration == "open")
        #expect(FlowDetailPresentation.json(f, leftOpen: .killed).serialized().contains(#""duration":null,"leftOpen":"killed","error""#))
        #expect(FlowDetailPresentation.json(f).serialized().contains(#""duration":null,"leftOpen":null,"error""#))
        // Closed since: interrupted, in words that cover a stop unable to save.
        f.status = .interrupted
        f.duration = 0
        #expect(FlowListPresentation.row(f, now: now, leftOpen: .killed).status == "interrupted")
        #expect(FlowDetailPresentation.json(f, leftOpen: .killed).serialized().contains(#""leftOpen":null"#))
        #expect(FlowDetailPresentation.statusSentence(f) == "interrupted — its end was never recorded: the tv session carrying it was killed, crashed or lost power, or stopped unable to save it (a full disk); it ends here at its last recorded activity")
        #expect(FlowDetailPresentation.chosenLines(f)[0] == "  client leg   not recorded (the row lacks the flow's last update)")
        #expect(FlowDetailPresentation.lines(f, now: now, content: kept, leftOpen: .stoppedUnsaved).contains { $0.hasPrefix("  status       interrupted — ") })
    }

    @Test("both legs' TLS versions: the list shows the client's, the server's beside it only when they differ; the detail gives each leg a line")
    func bothLegsVersions() {
        var f = flow(.inspected)
        f.alpn = nil
        f.clientTLSVersion = "TLSv1.3"
        f.tlsVersion = "TLSv1.2"
        f.chosenVersionSource = "upstream_leg"
        #expect(FlowListPresentation.protocolAndPort(f) == "TLSv1.3 (server TLSv1.2) :443")
        #expect(FlowDetailPresentation.chosenLines(f) == ["  client leg   TLSv1.3 (client to tv)", "  server leg   TLSv1.2 (tv to server); ALPN none"])
        f.alpn = "h2"
        #expect(FlowListPresentation.protocolAndPort(f) == "h2 (server TLSv1.2) :443")
        f.tlsVersion = "TLSv1.3"
        #expect(FlowListPresentation.protocolAndPort(f) == "h2 :443")
        f.alpn = nil
        #expect(FlowListPresentation.protocolAndPort(f) == "TLSv1.3 :443")
        // The client's handshake with tv never finished; a plain client over TLS (reverse:https).
        f.clientTLSVersion = nil
        f.status = .failed
        #expect(FlowDetailPresentation.chosenLines(f)[0] == "  client leg   none (the client's handshake with tv did not finish)")
        f.status = .notEncrypted
        #expect(FlowDetailPresentation.chosenLines(f)[0] == "  client leg   none (the client spoke no TLS to tv)")
        #expect(FlowListPresentation.protocolAndPort(f) == "TLSv1.3 :443")
        // Passed through: one handshake, one line.
        var passed = flow(.encrypted)
        passed.clientTLSVersion = "TLSv1.2"
        passed.tlsVersion = "TLSv1.2"
        passed.chosenVersionSource = "server_hello"
        #expect(FlowDetailPresentation.chosenLines(passed) == ["  chosen       TLSv1.2 (read from server hello); ALPN h2"])
        let json = FlowDetailPresentation.json(passed).serialized()
        #expect(json.contains(#""clientTLSVersion":"TLSv1.2","serverTLSVersion":"TLSv1.2""#), "\(json)")
        #expect(!json.contains(#""tlsVersion""#))
    }

    @Test("a plain flow is 'readable by anyone'; a plain client carried over TLS (reverse:https) says which side was in clear")
    func notEncryptedSentences() {
        var plain = flow(.notEncrypted)
        plain.tlsVersion = nil
        #expect(FlowDetailPresentation.statusSentence(plain) == "not encrypted — plain bytes, readable by anyone on the path")
        #expect(FlowDetailPresentation.statusSentence(flow(.notEncrypted)) == "not encrypted from the client to tv — tv spoke TLSv1.3 to the server")
    }

    @Test("the banner's inspection note continues the line after a dash: lower case, unless an acronym leads")
    func bannerNoteAfterDash() {
        #expect(RunBanner.afterDash("The CA is in doubt: root.pem is missing.") == "the CA is in doubt: root.pem is missing.")
        #expect(RunBanner.afterDash("CA present and trusted") == "CA present and trusted")
        #expect(RunBanner.afterDash("there is no CA yet") == "there is no CA yet")
        #expect(RunBanner.afterDash("A session CA from --ca") == "a session CA from --ca")
    }

    @Test("the banner's client lines dial loopback for a listener on every interface")
    func bannerReachable() {
        #expect(RunBanner.reachable("0.0.0.0:8080") == "127.0.0.1:8080")
        #expect(RunBanner.reachable("[::]:8080") == "[::1]:8080")
        #expect(RunBanner.reachable("192.168.1.4:8080") == "192.168.1.4:8080")
        let banner = RunBanner(listen: "0.0.0.0:8080", mode: "explicit HTTP proxy", caFingerprint: nil, caPath: nil, inspecting: false,
                               inspectionNote: "off", dataFolder: "/d", keylogPath: nil)
        #expect(banner.lines.first == "tv is running: explicit HTTP proxy on 0.0.0.0:8080.")
        #expect(banner.lines.contains("  curl -x http://127.0.0.1:8080 https://example.com/"))
        // With --proxy-auth the examples carry the user (a trial's copies were refused with 407).
        var authenticated = banner
        authenticated.proxyUser = "alice"
        #expect(authenticated.lines.contains("Point a client at it (with the password of --proxy-auth):"))
        #expect(authenticated.lines.contains("  curl -x http://alice:PASSWORD@127.0.0.1:8080 https://example.com/"))
        var socks = RunBanner(listen: "127.0.0.1:1080", mode: "SOCKS5 proxy", caFingerprint: nil, caPath: nil, inspecting: false,
                              inspectionNote: "off", dataFolder: "/d", keylogPath: nil)
        socks.proxyUser = "alice"
        #expect(socks.lines.contains("  curl -x socks5h://alice:PASSWORD@127.0.0.1:1080 https://example.com/"))
        // --keep-content with inspection off is said, not ignored in silence (a trial).
        var notKept = banner
        notKept.contentNotKept = "why"
        #expect(notKept.lines.contains("  content     not kept — why"))
        #expect(!banner.lines.contains { $0.hasPrefix("  content ") })
        // --ca FILE: the example trusts that file (it had no --cacert: a trial).
        let forced = RunBanner(listen: "127.0.0.1:8080", mode: "explicit HTTP proxy", caFingerprint: "AA", caPath: "/x/ca.pem", inspecting: true,
                               inspectionNote: "forced for this session with --ca /x/ca.pem", dataFolder: "/d", keylogPath: nil)
        #expect(forced.lines.contains("  curl -x http://127.0.0.1:8080 --cacert /x/ca.pem https://example.com/"))
        // Reverse mode: https clients for a TLS target, plain ones for reverse:http:// (the banner
        // offered `curl https://` there, and curl hung: a trial).
        var reverse = RunBanner(listen: "127.0.0.1:8443", mode: "reverse proxy to https://a.test:443", caFingerprint: "AA", caPath: "/x/ca.pem",
                                inspecting: true, inspectionNote: "on", dataFolder: "/d", keylogPath: nil)
        #expect(reverse.lines.suffix(2).first == "  curl --cacert /x/ca.pem https://127.0.0.1:8443/")
        reverse.reversePlain = true
        #expect(reverse.lines.suffix(2).first == "  curl http://127.0.0.1:8443/")
        // --upstream-insecure is said (it went unsaid: a trial).
        var insecure = banner
        #expect(!insecure.lines.contains { $0.hasPrefix("  servers ") })
        insecure.upstreamInsecure = true
        #expect(insecure.lines.contains("  servers     certificates NOT verified (--upstream-insecure): an impostor on the way to a server is shown to clients as that server"))
    }

    @Test("a host name longer than 40 characters is cut in its middle in the list, its end kept")
    func longHostElided() {
        let long = "averyveryverylongsubdomain.of-a-service.cdn.example.com"
        #expect(FlowListPresentation.elided(long) == "averyveryver…f-a-service.cdn.example.com")
        #expect(FlowListPresentation.elided(long).count == 40)
        #expect(FlowListPresentation.elided("a.test") == "a.test")
        #expect(FlowListPresentation.elided(String(repeating: "x", count: 40)) == String(repeating: "x", count: 40))
    }

    @Test func listLines() {
        let page = FlowPage(flows: [flow(.inspected, id: 12), flow(.encrypted, id: 9)], nextCursor: "abc")
        let lines = FlowListPresentation(page: page, now: now).lines()
        #expect(lines == [
            "ID  WHEN      HOST    PROTO PORT         UP       DOWN  DURATION  STATUS",
            "12  12 s ago  a.test  h2 :443     ↑ 1.5 KiB  ↓ 2.0 KiB     1.3 s  inspected",
            " 9  12 s ago  a.test  h2 :443     ↑ 1.5 KiB  ↓ 2.0 KiB     1.3 s",
            "More: tv flows --after abc",
        ])
    }

    @Test("the next-page hint repeats the filters and global options given, quoted for the shell")
    func moreHintKeepsFilters() {
        let page = FlowPage(flows: [flow(.inspected, id: 12)], nextCursor: "abc")
        let given = ["--data-dir", "/tmp/my data", "--status", "inspected", "--limit", "3"]
        #expect(FlowListPresentation(page: page, now: now, repeatedOptions: given).lines().last
                == "More: tv flows --data-dir '/tmp/my data' --status inspected --limit 3 --after abc")
        #expect(FlowListPresentation.moreCommand(cursor: "c", repeatedOptions: ["--host", "it's"])
                == "tv flows --host 'it'\\''s' --after c")
    }

    @Test func listShowsPacketCountsWhereCounted() {
        var udp = flow(.notEncrypted, id: 3)
        udp.transport = .udp
        udp.alpn = nil
        udp.tlsVersion = nil
        udp.serverPort = 7
        udp.bytesUp = 3000
        udp.bytesDown = 12
        udp.packetsUp = 3
        udp.packetsDown = 1
        let lines = FlowListPresentation(page: FlowPage(flows: [udp], nextCursor: nil), now: now).lines()
        #expect(lines == [
            "ID  WHEN      HOST    PROTO PORT                   UP             DOWN  DURATION  STATUS",
            " 3  12 s ago  a.test  udp :7      ↑ 2.9 KiB in 3 pkts  ↓ 12 B in 1 pkt     1.3 s  not encrypted",
        ])
    }

    @Test("fitted to a terminal's width: packet counts go first, then STATUS is cut to its start, HOST in its middle, STATUS further; no width, nothing cut")
    func listFitsTheTerminal() {
        var udp = flow(.notEncrypted, id: 3)
        udp.transport = .udp
        udp.alpn = nil
        udp.tlsVersion = nil
        udp.serverPort = 19802
        udp.host = "averyveryverylongsubdomain.of-a-service.cdn.example.com"
        udp.bytesUp = 3000
        udp.bytesDown = 12
        udp.packetsUp = 3
        udp.packetsDown = 1
        var failed = flow(.failed, id: 4)
        failed.failureReason = "tv could not connect to nonexistent.invalid:19701 (nonexistent.invalid could not be resolved)"
        let list = FlowListPresentation(page: FlowPage(flows: [failed, udp], nextCursor: nil), now: now)
        let whole = list.lines()
        #expect(whole.map(\.count).max() ?? 0 > 150)
        #expect(list.lines(width: 500) == whole)
        // The packet counts go, the failure sentence is cut to its readable start (32), then HOST.
        let fitted = list.lines(width: 120)
        #expect(fitted == [
            "ID  WHEN      HOST                          PROTO PORT         UP       DOWN  DURATION  STATUS",
            " 4  12 s ago  a.test                        h2 :443     ↑ 1.5 KiB  ↓ 2.0 KiB     1.3 s  failed: tv could not connect to…",
            " 3  12 s ago  averyvery…ce.cdn.example.com  udp :19802  ↑ 2.9 KiB     ↓ 12 B     1.3 s  not encrypted",
        ])
        #expect(fitted.allSatisfy { $0.count <= 120 })
        // At 80 every cell is at its narrowest, and a row may still be longer.
        #expect(list.lines(width: 80) == [
            "ID  WHEN      HOST              PROTO PORT         UP       DOWN  DURATION  STATUS",
            " 4  12 s ago  a.test            h2 :443     ↑ 1.5 KiB  ↓ 2.0 KiB     1.3 s  failed: tv co…",
            " 3  12 s ago  avery…xample.com  udp :19802  ↑ 2.9 KiB     ↓ 12 B     1.3 s  not encrypted",
        ])
    }

    @Test("an empty page: the start-a-session advice only when nothing is recorded; else the filters as typed and the total")
    func emptyListSaysWhatToDo() {
        let empty = FlowPage(flows: [], nextCursor: nil)
        #expect(FlowListPresentation(page: empty, now: now, totalFlows: 0).lines()
                == ["No flows are recorded yet. Start a session with `tv run` and point a client at it."])
        #expect(FlowListPresentation(page: empty, now: now, repeatedOptions: ["--host", "18080"], totalFlows: 0).lines()
                == ["No flows are recorded yet. Start a session with `tv run` and point a client at it."])
        // A filter that matches nothing is not an empty history.
        #expect(FlowListPresentation(page: empty, now: now, repeatedOptions: ["--host", "18080"], totalFlows: 47).lines()
                == ["No flows match --host 18080; 47 flows are recorded in all."])
        #expect(FlowListPresentation(page: empty, now: now, repeatedOptions: ["--data-dir", "/d", "--status", "interrupted", "--host", "a b", "--limit", "5"],
                                     totalFlows: 1).lines()
                == ["No flows match --status interrupted --host 'a b'; 1 flow is recorded in all."])
        #expect(FlowListPresentation(page: empty, now: now, repeatedOptions: ["--data-dir", "/d", "--limit", "5"], totalFlows: 3).lines()
                == ["No flows on this page; 3 flows are recorded in all."])
        #expect(FlowListPresentation(page: empty, now: now, repeatedOptions: ["--status", "failed"]).lines()
                == ["No flows match --status failed."])
        // An audit session without flows (a re-check read "No flows on this page").
        #expect(FlowListPresentation(page: empty, now: now, repeatedOptions: ["--audit", "2"], totalFlows: 7).lines()
                == ["No flows match --audit 2; 7 flows are recorded in all."])
    }

    @Test func detailNamesOriginAndContentReason() {
        let lines = FlowDetailPresentation.lines(flow(.keptPrivate), now: now)
        #expect(lines[0] == "Flow 7: a.test")
        #expect(lines[1] == "  name         a.test (from the TLS ClientHello (SNI))")
        #expect(lines.contains("  bytes        ↑ 1.5 KiB up (1536 B), ↓ 2.0 KiB down (2048 B) — TCP payload"))
        var inspected = flow(.inspected, id: 8)
        #expect(FlowDetailPresentation.bytesMeaning(inspected) == " — what was said inside TLS")
        inspected.status = .interrupted
        #expect(FlowDetailPresentation.bytesMeaning(inspected) == " — TCP payload; counted until tv stopped (`tv packets 8` shows how it ended, when captured)")
        // One tv was inspecting (its upstream leg had told the version) counted inside TLS.
        inspected.chosenVersionSource = "upstream_leg"
        #expect(FlowDetailPresentation.bytesMeaning(inspected) == " — what was said inside TLS; counted until tv stopped (`tv packets 8` shows how it ended, when captured)")
        inspected.transport = .udp
        inspected.status = .notEncrypted
        #expect(FlowDetailPresentation.bytesMeaning(inspected) == " — datagram payloads")
        #expect(lines.last == "  Kept private: this client pins its certificate or lacks tv's root (the error line above says which), so tv passed this connection through unread — that is a guarantee, not a failure.")
        // The status line points to the error line, so it is there (it was left out: a trial).
        var kept = flow(.keptPrivate)
        kept.error = "passed through unread: this client lacked tv's root for a.test:443 before; give it the root, then `tv pinned forget a.test`"
        kept.failureReason = kept.error
        #expect(FlowDetailPresentation.lines(kept, now: now).contains("  error        " + kept.error!))
        var failed = flow(.failed)
        failed.error = failed.failureReason
        #expect(!FlowDetailPresentation.lines(failed, now: now).contains { $0.hasPrefix("  error ") })
        let json = FlowDetailPresentation.json(flow(.inspected)).serialized()
        #expect(json.hasPrefix("{\"id\":7,\"startTime\":1764471888000000,"))
        #expect(json.contains("\"status\":\"inspected\""))
    }
}
