import Testing
@testable import Wire

@Suite("IP address text validators")
struct IPAddressTextTests {
    @Test("valid IPv6 text (RFC 4291 §2.2)", arguments: [
        "::", "::1", "1::", "fe80::", "2001:db8::1", "1:2:3:4:5:6:7:8", "1::8", "1:2:3:4:5:6::8", "::2:3:4:5:6:7:8",
        "::ffff:192.0.2.1", "1:2:3:4:5:6:1.2.3.4", "::1.2.3.4", "ABCD:ef01::",
    ])
    func validIPv6(_ text: String) {
        #expect(Array(text.utf8).withUnsafeBufferPointer { IPv6Text.isValid($0) })
    }

    @Test("invalid IPv6 text", arguments: [
        "", ":", ":::", "1", "1:2", ":1::", "1::2::3", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7", "12345::", "g::",
        "1:2:3:4:5:6:7::8", "::1.2.3", "::1.2.3.4.5", "::01.2.3.4", "1.2.3.4::", "fe80::1%eth0", "1:", "::1:",
        "1:2:3:4:5:6:7:1.2.3.4",
    ])
    func invalidIPv6(_ text: String) {
        #expect(!Array(text.utf8).withUnsafeBufferPointer { IPv6Text.isValid($0) })
    }
}
