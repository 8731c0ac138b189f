import Foundation
import Testing

/// `tv pinned` with nothing remembered: it says so, and says what the list cannot show (a
/// running session's in-memory evidence of a quiet close, which passes the client's next
/// connection through before anything is stored).
@Suite struct PinnedListCLITests {
    @Test("an empty tv pinned says nothing is passed through, and what it cannot list")
    func emptyList() throws {
        let folder = NSTemporaryDirectory() + "/tv-pinned-cli-\(getpid())-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try ContentCLITests.tv(["pinned"], dataDir: folder)
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == """
            Nothing is passed through for refusing tv's certificate. When a client lacks tv's root, or pins its certificate, it is listed here and its connections to that host pass through untouched from then on.
            Not listed: a client that closed right after its handshake with tv in a running session (possible pinning, or a probe such as `openssl s_client </dev/null`) has its next connection to that host and port passed through; it is listed here once it makes that connection.

            """)
    }
}
