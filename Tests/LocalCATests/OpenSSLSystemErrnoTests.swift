import COpenSSL
import Foundation
import LocalCA
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `OpenSSLError.systemErrno`: the errno of a file OpenSSL failed to open itself, so a caller
/// tells "no descriptor left" (`TooManyOpenFiles`) from a file that holds no certificate (a
/// trial's `--upstream-ca` under `ulimit -n 16` was called unreadable PEM).
@Suite("OpenSSL's system errors")
struct OpenSSLSystemErrnoTests {
    @Test("a CA file OpenSSL cannot open leaves its errno (ENOENT here); a file it opened and could not read leaves none")
    func systemErrno() throws {
        let context = try #require(SSL_CTX_new(TLS_client_method()))
        defer { SSL_CTX_free(context) }
        ERR_clear_error()
        let missing = "/nonexistent-\(UUID().uuidString).pem"
        #expect(SSL_CTX_load_verify_locations(context, missing, nil) != 1)
        #expect(OpenSSLError("loading \(missing)").systemErrno == ENOENT)

        let notPEM = FileManager.default.temporaryDirectory.appendingPathComponent("not-pem-\(UUID().uuidString).pem").path
        try Data("no certificate here\n".utf8).write(to: URL(fileURLWithPath: notPEM))
        defer { unlink(notPEM) }
        ERR_clear_error()
        #expect(SSL_CTX_load_verify_locations(context, notPEM, nil) != 1)
        #expect(OpenSSLError("loading \(notPEM)").systemErrno == nil)
    }
}
