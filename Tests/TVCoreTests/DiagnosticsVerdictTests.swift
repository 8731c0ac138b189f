import Testing
@testable import TVCore

@Suite struct DiagnosticsVerdictTests {
    // The exact sentences, once each.
    static let noSession = "No tv session is running, so there is nothing to diagnose (the counters start at zero with every session); start one with `tv run`, or run one command through tv with `tv exec -- CMD`."
    static let off = "Inspection is off in this session, so no connection is offered for inspection: everything is passed through untouched and still recorded; `tv inspect on` (after `tv setup`) turns it on."
    static let nothing = "Inspection is on, and no connection has been offered for inspection yet: nothing has come through tv since it started, so check that clients use it (their proxy setting, or the redirect rules and routes of --mode transparent and tun)."

    @Test("every case's exact sentence")
    func sentences() {
        #expect(DiagnosticsVerdict.of(nil).sentence == Self.noSession)
        #expect(DiagnosticsVerdict.of(DiagnosticsFacts(inspectionOn: false, offered: 9)).sentence == Self.off)
        #expect(DiagnosticsVerdict.of(DiagnosticsFacts(inspectionOn: true)).sentence == Self.nothing)
        // Connections came and none got that far (a trial's reverse target refused all three,
        // and the verdict said nothing had come through tv).
        var came = DiagnosticsFacts(values: ["inspection": "on", "ca": "loaded", "accepted": "3", "closed.failed": "3"])
        #expect(DiagnosticsVerdict.of(came).sentence
                == "Inspection is on, and 3 connections came through tv, none of them far enough to be offered for inspection: 3 failed before that (a server not reached, a refused request: `tv flows --status failed` says why).")
        came.failed = 1
        came.notRedirected = 1
        #expect(DiagnosticsVerdict.of(came).sentence
                == "Inspection is on, and 3 connections came through tv, none of them far enough to be offered for inspection: 1 failed before that (a server not reached, a refused request: `tv flows --status failed` says why); 1 reached tv's port directly, not redirected by a rule (reset, no flow: check the rule's match); 1 more is still connecting or ended before the client said anything (`tv flows` lists them).")
        came = DiagnosticsFacts(inspectionOn: true)
        came.accepted = 2
        #expect(DiagnosticsVerdict.of(came).name == "noneOfferedOf")
        #expect(DiagnosticsVerdict.of(came).sentence
                == "Inspection is on, and 2 connections came through tv, none of them far enough to be offered for inspection: 2 are still connecting or ended before the client said anything (`tv flows` lists them).")
        #expect(DiagnosticsVerdict.of(DiagnosticsFacts(inspectionOn: true, offered: 1, notTLS: 1)).sentence
                == "Inspection is on, and the 1 connection offered was not TLS: plain HTTP or a protocol of its own, so there was nothing to take over.")
        #expect(DiagnosticsVerdict.of(DiagnosticsFacts(inspectionOn: true, offered: 3, notTLS: 3)).sentence
                == "Inspection is on, and none of the 3 connections offered was TLS: plain HTTP or a protocol of its own, so there was nothing to take over.")
        #expect(DiagnosticsVerdict.of(DiagnosticsFacts(inspectionOn: true, offered: 7, notTLS: 2, inspected: 4, pinned: 1)).sentence
                == "Inspection is working: 4 of 5 TLS connections offered were inspected.")
        #expect(DiagnosticsVerdict.of(DiagnosticsFacts(inspectionOn: true, offered: 1, inspected: 1)).sentence
                == "Inspection is working: 1 of 1 TLS connection offered was inspected.")
        #expect(DiagnosticsVerdict.of(DiagnosticsFacts(inspectionOn: true, offered: 4, passedByRule: 4)).sentence
                == "Every TLS connection offered (4) was passed through by a rule (--ignore-hosts, --allow-hosts, or a TLS version below tv's minimum), so nothing was inspected.")
        #expect(DiagnosticsVerdict.of(DiagnosticsFacts(inspectionOn: true, offered: 3, passedByRule: 1, pinned: 2)).sentence
                == "Every client tv tried to inspect pins its certificate (2 connections): tv passes them through untouched, which is the pinning rule working, not a fault.")
        // Only closes at or right after the handshake, none came back: not yet a verdict (a
        // trial's one `s_client </dev/null` read as "every client pins").
        #expect(DiagnosticsVerdict.of(DiagnosticsFacts(inspectionOn: true, offered: 1, pinned: 1, pinnedConfirmed: 0)).sentence
                == "Every client tv tried to inspect (1 connection) closed at or right after tv's handshake without sending anything: a client that pins its certificate does this, and so does a probe such as `openssl s_client </dev/null`; one that comes back is passed through untouched (`tv pinned` lists it then).")
        #expect(DiagnosticsFacts(values: ["offered.clientRefused.possiblePinning": "1", "offered.keptPrivate.pinned": "1"]).pinnedConfirmed == 1)
        #expect(DiagnosticsVerdict.of(DiagnosticsFacts(inspectionOn: true, caLoaded: true, offered: 2, noCA: 2)).sentence
                == "2 connections were named and still never taken over, because this session has no CA to make certificates with; browsing keeps working, because tv passes such connections through untouched, so check `tv ca status` and make one with `tv setup`.")
        // No CA now, whatever was inspected before it went (a trial's `tv ca remove` under a
        // running session still read "Inspection is working").
        #expect(DiagnosticsVerdict.of(DiagnosticsFacts(inspectionOn: true, caLoaded: false, offered: 6, inspected: 1, noCA: 5)).sentence
                == "Inspection is on, but this session has no CA now (1 connection was inspected while it had one): nothing is inspected until there is one, and connections pass through untouched; make or bring one with `tv ca create` or `tv ca import` (the running session takes it at once).")
        #expect(DiagnosticsVerdict.of(DiagnosticsFacts(inspectionOn: true, caLoaded: false)).sentence
                == "Inspection is on, but this session has no CA now: nothing is inspected until there is one, and connections pass through untouched; make or bring one with `tv ca create` or `tv ca import` (the running session takes it at once).")
        #expect(DiagnosticsVerdict.of(DiagnosticsFacts(inspectionOn: true, offered: 1, lacksRoot: 1)).sentence
                == "1 connection was named and still never taken over, because their clients do not trust tv's root; browsing keeps working, because tv passes such connections through untouched, so give them the root (`tv setup`, or `curl --cacert` with the file `tv ca status` names) and let tv try again with `tv pinned forget HOST`.")
        let failure = DiagnosticsFacts.LegFailureCount(leg: .server, reason: "certificate", count: 3)
        #expect(DiagnosticsVerdict.of(DiagnosticsFacts(inspectionOn: true, offered: 3, commonestFailure: failure)).sentence
                == "3 connections were named and still never taken over, because tv's handshake with the server failed (most often: certificate); those connections failed (an HTTP client got tv's 502 saying why), so check the reasons with `tv flows --status failed`, and for a server with a private CA give it to tv with --upstream-ca FILE.")
        #expect(DiagnosticsVerdict.of(DiagnosticsFacts(inspectionOn: true, offered: 1)).sentence
                == "1 connection was named and still never taken over, because tv's handshake with the client failed; browsing keeps working, because tv passes such connections through untouched, so check the reasons with `tv flows --status failed`.")
        // Mixed causes (a trial: 3 server certificates and 1 client without the root were all
        // given the first cause): the commonest is said with its own count.
        #expect(DiagnosticsVerdict.of(DiagnosticsFacts(inspectionOn: true, offered: 4, lacksRoot: 1, commonestFailure: failure)).sentence
                == "4 connections were named and still never taken over, 3 of them because tv's handshake with the server failed (most often: certificate); those connections failed (an HTTP client got tv's 502 saying why), so check the reasons with `tv flows --status failed`, and for a server with a private CA give it to tv with --upstream-ca FILE.")
        let one = DiagnosticsFacts.LegFailureCount(leg: .server, reason: "certificate", count: 2)
        #expect(DiagnosticsVerdict.of(DiagnosticsFacts(inspectionOn: true, offered: 4, lacksRoot: 2, commonestFailure: one)).sentence
                .hasPrefix("4 connections were named and still never taken over, 2 of them because their clients do not trust tv's root; "))
    }

    /// The rule written as a decision table over which counters are non-zero (each counter 0 or
    /// 2, `offered` the sum of the parts plus an unexplained 1 when `rest`), independently of
    /// `DiagnosticsVerdict.of`'s arithmetic.
    static func expected(on: Bool, ca: Bool, notTLS: Bool, inspected: Bool, rule: Bool, pinned: Bool, lacksRoot: Bool,
                         noCA: Bool, failure: Bool, rest: Bool) -> String {
        if !on { return "inspectionOff" }
        if !ca { return "noCANow" }
        let parts = [notTLS, inspected, rule, pinned, lacksRoot, noCA, failure, rest]
        if !parts.contains(true) { return "nothingOffered" }
        if !parts.dropFirst().contains(true) { return "notTLS" }
        if inspected { return "working" }
        if ![pinned, lacksRoot, noCA, failure, rest].contains(true) { return "allByRule" }
        if pinned && ![lacksRoot, noCA, failure, rest].contains(true) { return "allPinned" }
        if noCA { return "neverTakenOver.noCA" }
        if lacksRoot { return "neverTakenOver.clientsLackRoot" }  // 2 lacking the root ≥ 2 of the commonest failure
        return "neverTakenOver.legFailed"
    }

    @Test("every combination of inspection, CA and which counters are non-zero gives the case of the decision table")
    func everyCombination() {
        var seen: Set<String> = []
        for bits in 0..<(1 << 10) {
            func b(_ i: Int) -> Bool { bits & (1 << i) != 0 }
            let (on, ca, notTLS, inspected, rule, pinned, lacksRoot, noCA, failure, rest) = (b(0), b(1), b(2), b(3), b(4), b(5), b(6), b(7), b(8), b(9))
            func two(_ x: Bool) -> UInt64 { x ? 2 : 0 }
            let offered = [notTLS, inspected, rule, pinned, lacksRoot, noCA, failure].reduce(UInt64(0)) { $0 + two($1) } + (rest ? 1 : 0)
            let facts = DiagnosticsFacts(inspectionOn: on, caLoaded: ca, offered: offered, notTLS: two(notTLS), inspected: two(inspected),
                                         passedByRule: two(rule), pinned: two(pinned), lacksRoot: two(lacksRoot), noCA: two(noCA),
                                         commonestFailure: failure ? .init(leg: .server, reason: "handshake", count: 2) : nil)
            let want = Self.expected(on: on, ca: ca, notTLS: notTLS, inspected: inspected, rule: rule, pinned: pinned,
                                     lacksRoot: lacksRoot, noCA: noCA, failure: failure, rest: rest)
            let verdict = DiagnosticsVerdict.of(facts)
            #expect(verdict.name == want, "bits \(bits): \(facts)")
            seen.insert(verdict.name)
        }
        #expect(seen == ["inspectionOff", "noCANow", "nothingOffered", "notTLS", "working", "allByRule", "allPinned",
                         "neverTakenOver.noCA", "neverTakenOver.clientsLackRoot", "neverTakenOver.legFailed"])
    }

    @Test("a CA in doubt is said as such, with why, whether inspection is on or off (it read 'missing' and advised tv inspect on: a trial)")
    func caInDoubt() {
        let facts = DiagnosticsFacts(values: ["inspection": "off", "ca": "in doubt", "caDoubt": "The CA is in doubt: root-key.pem cannot be parsed."])
        #expect(facts.caLoaded == false && facts.caDoubt == "The CA is in doubt: root-key.pem cannot be parsed.")
        let verdict = DiagnosticsVerdict.of(facts)
        #expect(verdict.name == "caInDoubt")
        #expect(verdict.sentence == "Nothing can be inspected until the data folder's CA is fixed; the running session takes it at once then. The CA is in doubt: root-key.pem cannot be parsed.")
        #expect(DiagnosticsFacts(values: ["inspection": "off", "ca": "missing"]).caDoubt == nil)
    }

    @Test("facts from a session's values: the offered.* counters, the commonest failure (a tie goes to the first key)")
    func factsFromValues() {
        let values = ["inspection": "on", "ca": "loaded", "offered.total": "12", "offered.notTLS": "1", "offered.inspected": "2",
                      "offered.passedByRule": "1", "offered.clientRefused.possiblePinning": "1", "offered.keptPrivate.pinned": "2",
                      "offered.clientRefused.lacksRoot": "1", "offered.keptPrivate.lacksRoot": "1", "offered.noCA": "0",
                      "offered.failed.server.certificate": "2", "offered.failed.client.timeout": "2", "offered.failed.server.unreachable": "1"]
        #expect(DiagnosticsFacts(values: values) == DiagnosticsFacts(
            inspectionOn: true, caLoaded: true, offered: 12, notTLS: 1, inspected: 2, passedByRule: 1, pinned: 3, pinnedConfirmed: 2, lacksRoot: 2, noCA: 0,
            commonestFailure: .init(leg: .client, reason: "timeout", count: 2)))
        #expect(DiagnosticsFacts(values: ["inspection": "off", "ca": "missing"]) == DiagnosticsFacts(inspectionOn: false, caLoaded: false))
    }

    @Test("name resolution: said only when no server was announced or lookups go unanswered")
    func nameResolution() {
        #expect(NameResolutionNotice.of([:]) == nil)
        #expect(NameResolutionNotice.of(["tunnel.dnsQueries": "4", "tunnel.dnsAnswers": "4", "tunnel.dnsTimeouts": "0"]) == nil)
        #expect(NameResolutionNotice.of(["tunnel.dnsQueries": "4", "tunnel.dnsAnswers": "1", "tunnel.dnsTimeouts": "3"]) == nil)
        #expect(NameResolutionNotice.of(["tunnel.dnsQueries": "4", "tunnel.dnsAnswers": "0", "tunnel.dnsTimeouts": "0"]) == nil)
        #expect(NameResolutionNotice.of(["tunnel.dnsQueries": "12", "tunnel.dnsAnswers": "0", "tunnel.dnsTimeouts": "9"])?.sentence
                == "Name lookups are going out through the tunnel and nothing comes back (12 sent, none answered, 9 given up), which is what a page loading forever looks like; check that the DNS servers in /etc/resolv.conf can be reached.")
        #expect(NameResolutionNotice.of(["tunnel.dnsServers": "0", "tunnel.dnsQueries": "1", "tunnel.dnsAnswers": "1"])?.sentence
                == "No DNS server could be announced through the tunnel, so programs cannot look names up while it runs; check the servers in /etc/resolv.conf and start the session again.")
    }

    @Test("tv diag's lines: the notice first when due, the verdict, then the counters and the last errors")
    func lines() {
        let values = ["inspection": "on", "ca": "loaded", "offered.total": "2", "offered.clientRefused.lacksRoot": "2",
                      "tunnel.dnsQueries": "3", "tunnel.dnsAnswers": "0", "tunnel.dnsTimeouts": "3",
                      "names.fromTCP": "2", "accepted": "2", "closed.failed": "2",
                      "errors.1.at": "1764511503000000", "errors.1.host": "localhost", "errors.1.sentence": "the client refused\u{1B}[31m"]
        let lines = DiagnosticsPresentation.lines(values)
        #expect(lines[0].hasPrefix("Name lookups are going out"))
        #expect(lines[1].hasPrefix("2 connections were named and still never taken over, because their clients do not trust tv's root"))
        #expect(lines.contains("  refused by client   2 lacking tv's root, 0 possible pinning, 0 left"))
        #expect(lines.contains("  from TCP            2 named by what the connection announced (SNI, CONNECT, SOCKS5, a Host header)"))
        // Names from lookups and QUIC: the tunnel's counters, said as `tv status` says them.
        #expect(lines.contains { $0.hasPrefix("  names from lookups: none — no DNS answer crossed the tunnel unencrypted") })
        #expect(lines.contains("  names from QUIC: none — nothing used QUIC"))
        #expect(DiagnosticsPresentation.lines(["inspection": "on"]).contains(
            "  from lookups        none: a proxy sees no DNS or QUIC, so an address-only connection stays unnamed"))
        #expect(lines.contains("  errors              2 connections failed"))
        #expect(lines.last == "  14:05:03 localhost: the client refused\\x1b[31m")
        #expect(DiagnosticsPresentation.lines(nil) == [Self.noSession])
        #expect(DiagnosticsPresentation.json(nil).serialized()
                == #"{"running":false,"verdict":{"case":"noSession","sentence":"# + "\"" + Self.noSession + #""},"nameResolution":null}"#)
    }

    @Test("tv diag --json's sections are the text's groups: titles, labelled counters and sentences, each once")
    func sections() throws {
        let values = ["inspection": "on", "ca": "loaded", "contentKeeping": "off", "offered.total": "1200", "offered.inspected": "1",
                      "names.fromTCP": "2", "accepted": "2", "closed.failed": "1",
                      "errors.1.at": "1764511503000000", "errors.1.host": "localhost", "errors.1.sentence": "the client refused"]
        let sections = DiagnosticsPresentation.sections(values)
        #expect(sections.map(\.title) == ["Inspection (on, CA loaded; connections closed so far)", "Names",
                                          "Decrypted content and recording (content keeping off)", "Forwarding", "Last errors"])
        #expect(sections[0].rows.first! == ("offered", "1,200"))
        #expect(sections[0].rows[2] == ("inspected", "1"))
        #expect(sections[3].rows.map(\.label) == ["accepted", "refused", "errors"])
        #expect(sections[3].rows[2].value == "1 connection failed")
        #expect(sections[4].rows.count == 1 && sections[4].rows[0].label == nil && sections[4].rows[0].value == "14:05:03 localhost: the client refused")
        // The text is the sections drawn: each title, then each row, after the verdict and a blank line.
        let lines = DiagnosticsPresentation.lines(values)
        #expect(lines.count == 2 + sections.count + sections.map(\.rows.count).reduce(0, +))
        #expect(lines.contains("Forwarding") && lines.contains("  accepted            2"))
        // And the JSON carries them as label/value pairs.
        let json = DiagnosticsPresentation.json(values).serialized()
        #expect(json.contains(#""sections":[{"title":"Inspection (on, CA loaded; connections closed so far)","rows":[{"label":"offered","value":"1,200"},"#))
        #expect(json.contains(#"{"title":"Last errors","rows":[{"label":null,"value":"14:05:03 localhost: the client refused"}]}"#))
        // A session with a shared store says its state here too (only tv status did: a trial).
        var shared = values
        shared["sharedStore.server"] = "db:5432/h"
        shared["sharedStore.state"] = "retrying"
        shared["sharedStore.flowsWaiting"] = "4"
        shared["sharedStore.lastError"] = "could not connect"
        let withStore = DiagnosticsPresentation.sections(shared)
        #expect(withStore.map(\.title) == ["Inspection (on, CA loaded; connections closed so far)", "Names",
                                            "Decrypted content and recording (content keeping off)", "Shared store", "Forwarding", "Last errors"])
        #expect(withStore[3].rows.map(\.value) == ["retrying db:5432/h (0 events written, 4 flows waiting, 0 not saved, 0 events dropped): could not connect"])
    }
}
