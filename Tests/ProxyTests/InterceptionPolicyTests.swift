import Proxy
import Testing
import FlowTerms

@Suite("InterceptionPolicy")
struct InterceptionPolicyTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var inspection: Bool
        var ca: Bool
        var recalled: PinningRecall?
        var ignoreMatches: Bool?   // nil = no ignore pattern
        var allowMatches: Bool?    // nil = no allow pattern
        var testDescription: String {
            "inspection=\(inspection) ca=\(ca) recalled=\(recalled.map { "\($0)" } ?? "-") ignore=\(ignoreMatches.map { "\($0)" } ?? "-") allow=\(allowMatches.map { "\($0)" } ?? "-")"
        }
    }

    static let all: [Case] = {
        var out: [Case] = []
        for inspection in [false, true] {
            for ca in [false, true] {
                for recalled in [nil, .remembered(.pinned), .remembered(.lacksRoot), .hostWide, .retry] as [PinningRecall?] {
                    for ignore in [nil, false, true] as [Bool?] {
                        for allow in [nil, false, true] as [Bool?] {
                            out.append(Case(inspection: inspection, ca: ca, recalled: recalled, ignoreMatches: ignore, allowMatches: allow))
                        }
                    }
                }
            }
        }
        return out
    }()

    @Test("every combination of the five conditions", arguments: all)
    func combination(_ c: Case) throws {
        let ignore = try c.ignoreMatches.map { [try HostPattern($0 ? "example\\.com" : "nomatch\\.invalid")] } ?? []
        let allow = try c.allowMatches.map { [try HostPattern($0 ? "^example\\.com:443$" : "^other\\.test$")] } ?? []
        let policy = InterceptionPolicy(inspectionEnabled: c.inspection, caAvailable: c.ca, ignoreHosts: ignore, allowHosts: allow)
        var asked = 0
        let decision = policy.decide(.init(sni: "example.com", destinationHost: "93.184.216.34", port: 443)) {
            asked += 1
            return c.recalled
        }
        let expected: InterceptionPolicy.Reason
        if !c.inspection { expected = .inspectionOff }
        else if !c.ca { expected = .noCertificateAuthority }
        else if let recalled = c.recalled { expected = .remembered(recalled) }
        else if c.ignoreMatches == true { expected = .ignored(pattern: "example\\.com") }
        else if c.allowMatches == false { expected = .notAllowed }
        else { expected = .inspect }
        #expect(decision.reason == expected)
        #expect(decision.action == (expected == .inspect ? .inspect : .passThrough))
        #expect(decision.passThroughStatus == (c.inspection && c.ca && c.recalled != nil ? .keptPrivate : .encrypted))
        // Pinning memory is asked once, and only when inspection could happen (a retry is used up when asked).
        #expect(asked == (c.inspection && c.ca ? 1 : 0))
    }

    @Test("patterns are searched case-insensitively in host:port and host, for the SNI and the destination")
    func patternMatching() throws {
        let byPort = try HostPattern(":8443$")
        #expect(byPort.matches(host: "a.test", port: 8443))
        #expect(!byPort.matches(host: "a.test", port: 443))
        let anchored = try HostPattern("^A\\.TEST$")
        #expect(anchored.matches(host: "a.test", port: 443))
        let policy = InterceptionPolicy(inspectionEnabled: true, caAvailable: true, ignoreHosts: [try HostPattern("^10\\.")])
        let byAddress = policy.decide(.init(sni: "bank.test", destinationHost: "10.1.2.3", port: 443)) { nil }
        #expect(byAddress.reason == .ignored(pattern: "^10\\."))
        let noSNI = policy.decide(.init(sni: nil, destinationHost: "10.1.2.3", port: 443)) { nil }
        #expect(noSNI.action == .passThrough)
    }

    @Test("an invalid pattern is refused with a sentence")
    func invalidPattern() {
        #expect(throws: ProxyError.invalidHostPattern("(")) { try HostPattern("(") }
        #expect(ProxyError.invalidHostPattern("(").message.contains("--ignore-hosts"))
    }

    @Test("what pinning memory recalled, in words")
    func rememberedWords() {
        #expect(InterceptionPolicy.Reason.remembered(.remembered(.lacksRoot)).description == "this client lacked tv's root for this host before")
        #expect(InterceptionPolicy.Reason.remembered(.remembered(.pinned)).description == "this client broke off tv's handshake with this host, or closed right after it, before (pinning)")
        #expect(InterceptionPolicy.Reason.remembered(.retry).description == "this client broke off tv's handshake with this host, or closed right after it, before (pinning)")
        #expect(InterceptionPolicy.Reason.remembered(.hostWide).description == "an older tv remembered this host as pinned for every client")
    }
}
