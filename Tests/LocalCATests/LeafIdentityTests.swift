import Testing
@testable import LocalCA

/// Name normalisation and refusal (issue 2; notes/interop-cases.md cases 1–4).
@Suite("LeafIdentity")
struct LeafIdentityTests {
    /// The reason of an `invalidName` refusal, or nil when the name was accepted.
    func refusal(_ name: String) -> String? {
        do {
            _ = try LeafIdentity(names: [name])
            return nil
        } catch CAError.invalidName(let given, let reason) {
            #expect(given == name, "the refusal names the name as given")
            return reason
        } catch {
            Issue.record("unexpected error \(error)")
            return nil
        }
    }

    @Test("an IPv4-mapped IPv6 address unmaps to its IPv4; others stay as they are")
    func unmapped() throws {
        #expect(try #require(IPAddress("::ffff:127.0.0.1")).unmapped == IPAddress("127.0.0.1"))
        #expect(try #require(IPAddress("::ffff:7f00:1")).unmapped.description == "127.0.0.1")
        #expect(try #require(IPAddress("::1")).unmapped == IPAddress("::1"))
        #expect(try #require(IPAddress("::fffe:7f00:1")).unmapped.description == "::fffe:7f00:1")
        #expect(try #require(IPAddress("10.0.0.1")).unmapped == IPAddress("10.0.0.1"))
    }

    @Test("a trailing dot is removed and names are lowercased")
    func trailingDotAndCase() throws {
        let identity = try LeafIdentity(names: ["WWW.Example.COM."])
        #expect(identity.dnsNames == ["www.example.com"])
        #expect(identity.ipAddresses.isEmpty)
        #expect(identity.commonName == "www.example.com")
        #expect(try LeafIdentity(names: ["a.test."]) == LeafIdentity(names: ["a.test"]))
        #expect(try LeafIdentity(names: ["A.TEST"]).hashValue == LeafIdentity(names: ["a.test"]).hashValue)
    }

    @Test("duplicates are dropped, first occurrence kept, order otherwise kept")
    func duplicates() throws {
        let identity = try LeafIdentity(names: ["b.test", "a.test", "B.TEST.", "127.0.0.1", "a.test", "127.0.0.1"])
        #expect(identity.dnsNames == ["b.test", "a.test"])
        #expect(identity.ipAddresses == [IPAddress("127.0.0.1")!])
        #expect(identity.subjectAlternativeNames.map(\.description) == ["DNS:b.test", "DNS:a.test", "IP:127.0.0.1"])
        let split = try LeafIdentity(dnsNames: ["X.test", "x.test."], ipAddresses: [IPAddress("::1")!, IPAddress("[::1]")!])
        #expect(split.dnsNames == ["x.test"])
        #expect(split.ipAddresses.count == 1)
    }

    @Test("IP literals become addresses, never DNS names, in canonical form", arguments: [
        ("127.0.0.1", [127, 0, 0, 1] as [UInt8], "127.0.0.1"),
        ("10.1.2.3", [10, 1, 2, 3], "10.1.2.3"),
        ("::1", [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], "::1"),
        ("[::1]", [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], "::1"),
        ("2001:DB8:0:0::1", [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], "2001:db8::1"),
        ("[fe80::1]", [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], "fe80::1"),
        ("::ffff:192.0.2.1", [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 1], "::ffff:192.0.2.1"),
    ])
    func ipLiterals(text: String, bytes: [UInt8], canonical: String) throws {
        let identity = try LeafIdentity(names: [text])
        #expect(identity.dnsNames.isEmpty)
        #expect(identity.ipAddresses.map(\.bytes) == [bytes])
        #expect(identity.ipAddresses.first?.description == canonical)
        #expect(identity.ipAddresses.first?.isIPv4 == (bytes.count == 4))
    }

    @Test("[::1] and ::1 are the same address")
    func bracketedIsSame() throws {
        #expect(try LeafIdentity(names: ["[::1]", "::1"]).ipAddresses.count == 1)
        #expect(try LeafIdentity(names: ["[::1]"]) == LeafIdentity(names: ["::1"]))
    }

    @Test("wildcards only as the whole left-most label, with two labels after it")
    func wildcards() throws {
        #expect(try LeafIdentity(names: ["*.example.com"]).dnsNames == ["*.example.com"])
        #expect(try LeafIdentity(names: ["*.A.Example.com."]).dnsNames == ["*.a.example.com"])
        for bad in ["*", "*.com", "*.com.", "a.*.example.com", "*.*.example.com", "f*.example.com", "*a.example.com", "example.*"] {
            #expect(refusal(bad) != nil, "\(bad) must be refused")
        }
        #expect(refusal("*.com")?.contains("wildcard") == true)
        #expect(refusal("a.*.example.com")?.contains("wildcard") == true)
    }

    @Test("a 63-character label is accepted, a 64-character one refused")
    func labelLength() throws {
        let ok = String(repeating: "a", count: 63) + ".test"
        #expect(try LeafIdentity(names: [ok]).dnsNames == [ok])
        let reason = refusal(String(repeating: "a", count: 64) + ".test")
        #expect(reason?.contains("longer than 63 characters") == true)
    }

    @Test("names up to 253 characters are accepted (a trailing dot not counted), 254 refused")
    func nameLength() throws {
        // 63+1+63+1+63+1+61 = 253
        let labels = [String(repeating: "a", count: 63), String(repeating: "b", count: 63),
                      String(repeating: "c", count: 63), String(repeating: "d", count: 61)]
        let name253 = labels.joined(separator: ".")
        #expect(name253.count == 253)
        #expect(try LeafIdentity(names: [name253]).dnsNames == [name253])
        #expect(try LeafIdentity(names: [name253 + "."]).dnsNames == [name253])
        let name254 = name253 + "d"
        #expect(refusal(name254)?.contains("longer than 253 characters") == true)
    }

    @Test("non-ASCII names are refused with the A-label hint; xn-- names are accepted")
    func internationalNames() throws {
        for name in ["bücher.test", "例え.テスト", "caf\u{E9}.test", "😀.test"] {
            let reason = try #require(refusal(name))
            #expect(reason.contains("not ASCII"))
            #expect(reason.contains("A-labels (xn--"))
            let message = CAError.invalidName(name, reason: reason).message
            #expect(message.hasPrefix("'\(name)' cannot be a certificate name because"))
        }
        #expect(try LeafIdentity(names: ["xn--bcher-kva.test"]).dnsNames == ["xn--bcher-kva.test"])
        #expect(try LeafIdentity(names: ["XN--BCHER-KVA.TEST."]).dnsNames == ["xn--bcher-kva.test"])
    }

    @Test("other invalid names are refused with a reason", arguments: [
        ("", "empty"), (".", "empty"), ("a..test", "empty label"), (".a.test", "empty label"),
        ("a test", "contains ' '"), ("a/b.test", "contains '/'"), ("a:b.test", "contains ':'"),
        ("-a.test", "hyphen"), ("a-.test", "hyphen"), ("[a.test]", "contains '['"),
        ("a.test..", "empty label"), ("a,b.test", "contains ','"),
        ("1.2.3", "last label is all digits"), ("999.1.1.1", "last label is all digits"), ("a.b.123", "last label is all digits"),
    ])
    func invalid(name: String, why: String) {
        let reason = refusal(name)
        #expect(reason?.contains(why) == true, "'\(name)': \(reason ?? "accepted")")
    }

    @Test("names with underscores, digits and inner hyphens are accepted (digits only in a label that is not the last)")
    func valid() throws {
        let names = ["_dmarc.example.com", "a-b.c-d.test", "1.2.3x", "123.test", "localhost", "x1.test"]
        #expect(try LeafIdentity(names: names).dnsNames == names)
    }

    @Test("no names at all is refused")
    func empty() {
        #expect(throws: CAError.noNames) { try LeafIdentity(names: []) }
        #expect(throws: CAError.noNames) { try LeafIdentity(dnsNames: [], ipAddresses: []) }
    }

    @Test("the CN candidate: the first DNS name if ≤ 64 characters, else the first IP, else none")
    func commonName() throws {
        #expect(try LeafIdentity(names: ["127.0.0.1", "a.test"]).commonName == "a.test")
        #expect(try LeafIdentity(names: ["::1"]).commonName == "::1")
        let long = String(repeating: "a", count: 61) + ".test"
        #expect(try LeafIdentity(names: [long, "b.test"]).commonName == nil)
    }
}
