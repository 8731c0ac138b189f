import COpenSSL
import LocalCA
@testable import Proxy
import Testing

/// Why a server's certificate did not verify, as the user reads it: the cause and the way on,
/// from OpenSSL's verify code and the certificate's fields (exact sentences).
@Suite("Upstream certificate problems: one typed kind, its cause and advice")
struct UpstreamCertificateProblemTests {
    typealias Problem = UpstreamCertificateProblem

    /// 2024-05-01 12:00:00 UTC.
    static let now: Int64 = 1_714_564_800

    static func traits(subject: String = "CN=a.test", issuer: String = "CN=UpCA", commonName: String? = "a.test",
                       names: [SubjectAlternativeName] = [.dns("a.test")], notBefore: Int64 = now - 86_400, notAfter: Int64 = now + 86_400,
                       key: String = "ECDSA P-256", signature: String = "ecdsa-with-SHA256", eku: [String]? = ["serverAuth"]) -> Problem.Traits {
        Problem.Traits(subject: subject, issuer: issuer, commonName: commonName, names: names, notBefore: notBefore, notAfter: notAfter,
                       key: key, signatureAlgorithm: signature, extendedKeyUsage: eku)
    }

    static func problem(_ code: Int32, host: String = "a.test", depth: Int = 0, _ traits: Problem.Traits = traits()) -> Problem {
        Problem(code: code, depth: depth, host: host, certificate: traits, checkedAt: now, securityLevel: 2)
    }

    /// A self-signed server certificate (what the machine's playbooks use).
    static let selfSigned = problem(X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT, traits(issuer: "CN=a.test"))

    static let skip = "or skip the check with --upstream-insecure"

    @Test("a name only in the subject's CN (no subjectAltName): its own kind, said as browsers refuse it, never 'hostname mismatch' alone")
    func nameOnlyInCommonName() {
        let p = Self.problem(X509_V_ERR_HOSTNAME_MISMATCH, host: "cnonly.test", Self.traits(subject: "CN=cnonly.test", commonName: "cnonly.test", names: []))
        #expect(p.kind == .nameOnlyInCommonName)
        #expect(p.cause == "it names cnonly.test only in its subject's CN, not in a subjectAltName, which browsers refuse")
        #expect(p.advice == "the server needs a certificate with DNS:cnonly.test in its subjectAltName (RFC 6125 §6.4.4), " + Self.skip)
        // Case and a final dot do not matter; a CN wildcard covering the host is the same case.
        #expect(Self.problem(X509_V_ERR_HOSTNAME_MISMATCH, host: "CNonly.test", Self.traits(commonName: "cnonly.test.", names: [])).kind == .nameOnlyInCommonName)
        #expect(Self.problem(X509_V_ERR_HOSTNAME_MISMATCH, host: "x.wild.test", Self.traits(commonName: "*.wild.test", names: [])).kind == .nameOnlyInCommonName)
        #expect(Self.problem(X509_V_ERR_HOSTNAME_MISMATCH, host: "a.b.wild.test", Self.traits(commonName: "*.wild.test", names: [])).kind == .nameMismatch)
        // An address in the CN only: OpenSSL's IP check never reads the CN, and browsers want an iPAddress SAN.
        let ip = Self.problem(X509_V_ERR_IP_ADDRESS_MISMATCH, host: "127.0.0.1", Self.traits(commonName: "127.0.0.1", names: []))
        #expect(ip.kind == .nameOnlyInCommonName)
        #expect(ip.cause == "it names 127.0.0.1 only in its subject's CN, not in an iPAddress subjectAltName, which browsers refuse")
        #expect(ip.advice == "the server needs a certificate with IP:127.0.0.1 in its subjectAltName (RFC 6125 §6.4.4), " + Self.skip)
        // The address spelled as a DNS name: never matched against an address either.
        let dns = Self.problem(X509_V_ERR_IP_ADDRESS_MISMATCH, host: "127.0.0.1", Self.traits(commonName: "127.0.0.1", names: [.dns("127.0.0.1")]))
        #expect(dns.kind == .addressAsDNSName)
        #expect(dns.cause == "IP address mismatch: it names 127.0.0.1 as a DNS name, and an address is matched only against iPAddress subjectAltNames")
        #expect(dns.advice == ip.advice)
    }

    @Test("a name the certificate does not hold: the names it holds, and reaching the server by one of them")
    func nameMismatch() {
        let p = Self.problem(X509_V_ERR_HOSTNAME_MISMATCH, host: "other.test",
                             Self.traits(commonName: "good.test", names: [.dns("*.good.test"), .dns("good.test"), .ip(IPAddress("127.0.0.1")!)]))
        #expect(p.kind == .nameMismatch)
        #expect(p.cause == "hostname mismatch: it names *.good.test, good.test, 127.0.0.1, not other.test")
        #expect(p.advice == "reach the server by a name its certificate holds (good.test), " + Self.skip)
        let many = Self.problem(X509_V_ERR_HOSTNAME_MISMATCH, host: "z.test", Self.traits(names: ["a", "b", "c", "d", "e", "f"].map { .dns("\($0).test") }))
        #expect(many.cause == "hostname mismatch: it names a.test, b.test, c.test, d.test and 2 more, not z.test")
        let none = Self.problem(X509_V_ERR_HOSTNAME_MISMATCH, host: "z.test", Self.traits(commonName: "other.test", names: []))
        #expect(none.cause == "hostname mismatch: it names no host in a subjectAltName, so not z.test")
        #expect(none.advice == "the server needs a certificate naming z.test in its subjectAltName, " + Self.skip)
        let address = Self.problem(X509_V_ERR_IP_ADDRESS_MISMATCH, host: "127.0.0.2", Self.traits(names: [.ip(IPAddress("127.0.0.1")!)]))
        #expect(address.cause == "IP address mismatch: it names 127.0.0.1, not 127.0.0.2")
    }

    @Test("expired and not yet valid: the certificate's date and this machine's clock, and what each means")
    func dates() {
        let expired = Self.problem(X509_V_ERR_CERT_HAS_EXPIRED, Self.traits(notBefore: Self.now - 90 * 86_400, notAfter: Self.now - 3 * 86_400))
        #expect(expired.kind == .expired)
        #expect(expired.cause == "certificate has expired: it was valid until 2024-04-28 12:00:00 UTC, and this machine's clock reads 2024-05-01 12:00:00 UTC")
        #expect(expired.advice == "if this machine's clock is right, the server must renew its certificate, " + Self.skip)
        let intermediate = Self.problem(X509_V_ERR_CERT_HAS_EXPIRED, depth: 1, Self.traits(subject: "CN=Inter", notAfter: Self.now - 60))
        #expect(intermediate.cause == "certificate has expired: CN=Inter in its chain was valid until 2024-05-01 11:59:00 UTC, and this machine's clock reads 2024-05-01 12:00:00 UTC")
        #expect(intermediate.advice == "if this machine's clock is right, the server must renew its chain, " + Self.skip)
        let early = Self.problem(X509_V_ERR_CERT_NOT_YET_VALID, Self.traits(notBefore: Self.now + 3_600))
        #expect(early.kind == .notYetValid)
        #expect(early.cause == "certificate is not yet valid: it is valid from 2024-05-01 13:00:00 UTC, and this machine's clock reads 2024-05-01 12:00:00 UTC")
        #expect(early.advice == "check this machine's clock (date -u); if it is right, the certificate starts later and the server's operator must fix it, " + Self.skip)
    }

    @Test("a weak key, a weak signature, a certificate not for TLS servers: what is wrong with it")
    func strength() {
        let key = Self.problem(X509_V_ERR_EE_KEY_TOO_SMALL, Self.traits(key: "RSA 1024"))
        #expect(key.kind == .weakKey)
        #expect(key.cause == "EE certificate key too weak: its key, RSA 1024, is below the 2048-bit RSA or 224-bit EC keys OpenSSL's security level 2 requires")
        #expect(key.advice == "the server needs a certificate with a stronger key, " + Self.skip)
        let caKey = Self.problem(X509_V_ERR_CA_KEY_TOO_SMALL, depth: 1, Self.traits(subject: "CN=Inter", key: "RSA 1024"))
        #expect(caKey.cause == "CA certificate key too weak: the key of CN=Inter in its chain, RSA 1024, is below the 2048-bit RSA or 224-bit EC keys OpenSSL's security level 2 requires")
        let sha1 = Self.problem(X509_V_ERR_CA_MD_TOO_WEAK, Self.traits(signature: "ecdsa-with-SHA1"))
        #expect(sha1.kind == .weakSignature)
        #expect(sha1.cause == "CA signature digest algorithm too weak: it is signed with ecdsa-with-SHA1, which OpenSSL's security level 2 refuses")
        #expect(sha1.advice == "the server needs a certificate signed with SHA-256 or stronger, " + Self.skip)
        let purpose = Self.problem(X509_V_ERR_INVALID_PURPOSE, Self.traits(eku: ["clientAuth"]))
        #expect(purpose.kind == .wrongPurpose)
        #expect(purpose.cause == "unsuitable certificate purpose: its extendedKeyUsage allows clientAuth, not serverAuth (TLS servers)")
        #expect(purpose.advice == "the server needs a certificate for TLS servers (extendedKeyUsage serverAuth), " + Self.skip)
        #expect(Self.problem(X509_V_ERR_INVALID_PURPOSE, Self.traits(eku: nil)).cause
                == "unsuitable certificate purpose: it is not marked for TLS servers (its keyUsage or basicConstraints)")
    }

    @Test("an issuer tv does not trust: the issuer named, and the two ways on that fit it (--upstream-ca, --upstream-insecure)")
    func untrusted() {
        let local = Self.problem(X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY)
        #expect(local.kind == .untrustedIssuer)
        #expect(local.cause == "unable to get local issuer certificate: its issuer, CN=UpCA, is not a CA tv trusts")
        #expect(local.advice == "trust the server's CA with --upstream-ca FILE, " + Self.skip)
        #expect(Self.selfSigned.kind == .selfSigned)
        #expect(Self.selfSigned.cause == "self-signed certificate")
        #expect(Self.selfSigned.advice == local.advice)
        let root = Self.problem(X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN, depth: 1, Self.traits(subject: "CN=Other Root"))
        #expect(root.cause == "self-signed certificate in certificate chain: its root CN=Other Root is not a CA tv trusts")
        #expect(root.advice == local.advice)
        let other = Self.problem(X509_V_ERR_CERT_SIGNATURE_FAILURE)
        #expect(other.kind == .other)
        #expect(other.cause == "certificate signature failure")
        #expect(other.advice == "the server's operator must fix its certificate, " + Self.skip)
    }

    @Test("the flow's sentence: the cause, what tv did for the client (502, alert, close), the advice for that kind")
    func sentences() {
        let expired = Self.problem(X509_V_ERR_CERT_HAS_EXPIRED, Self.traits(notAfter: Self.now - 86_400))
        let cause = "the server's certificate does not verify (certificate has expired: it was valid until 2024-04-30 12:00:00 UTC, and this machine's clock reads 2024-05-01 12:00:00 UTC); "
        let advice = "; if this machine's clock is right, the server must renew its certificate, " + Self.skip
        #expect(ConnectionFailure.upstreamCertificate(expired, answer: .badGateway).sentence == cause + "nothing was sent to it" + advice)
        #expect(ConnectionFailure.upstreamCertificate(expired, answer: .alert).sentence == cause + "nothing was forged and the client was refused" + advice)
        #expect(ConnectionFailure.upstreamCertificate(expired, answer: .closed).sentence
                == cause + "nothing was sent to it, and the client's first bytes were no HTTP request, so tv closed its TLS session unanswered" + advice)
        // No tail names --upstream-ca for a kind it cannot fix.
        #expect(!ConnectionFailure.upstreamCertificate(expired, answer: .badGateway).sentence.contains("--upstream-ca"))
        #expect(ConnectionFailure.upstreamHandshake("unsupported protocol", answer: .closed).sentence
                == "the TLS handshake with the server failed (unsupported protocol); the client's first bytes were no HTTP request, so tv closed its TLS session unanswered")
    }

    @Test("what the driver reads: the callback's first error and its certificate, else the server's own; the OpenSSL purposes by name")
    func read() throws {
        let pki = TestPKI.shared
        let peer = try Certificate.fromPEM(Array(try String(contentsOfFile: pki.serverCert, encoding: .utf8).utf8))
        let ca = try Certificate.fromPEM(Array(try String(contentsOfFile: pki.upstreamCA, encoding: .utf8).utf8))
        let recorded = UpstreamVerifyError(code: X509_V_ERR_CERT_HAS_EXPIRED, depth: 1, certificate: ca)
        let fromCallback = Problem.read(code: X509_V_ERR_CERT_HAS_EXPIRED, recorded: recorded, peer: peer, host: "a.test", checkedAt: Self.now, securityLevel: 2)
        #expect(fromCallback.depth == 1 && fromCallback.certificate.subject == "CN=UpCA")
        // A resumed session runs no callback: the server's own certificate, depth 0.
        let resumed = Problem.read(code: X509_V_ERR_HOSTNAME_MISMATCH, recorded: nil, peer: peer, host: "z.test", checkedAt: Self.now, securityLevel: 2)
        #expect(resumed.depth == 0 && resumed.certificate.subject == "CN=localhost" && resumed.certificate.commonName == "localhost")
        #expect(resumed.certificate.names.first == .dns("localhost"))
        #expect(resumed.certificate.key == "ECDSA P-256" && resumed.certificate.signatureAlgorithm == "ecdsa-with-SHA256")
        #expect(resumed.certificate.extendedKeyUsage == ["serverAuth"])
        let unknown = Problem.read(code: X509_V_ERR_CERT_HAS_EXPIRED, recorded: nil, peer: nil, host: "a.test", checkedAt: Self.now, securityLevel: 2)
        #expect(unknown.kind == .expired && unknown.certificate.subject == "")
        #expect(Problem.Traits.purposes(UInt32(XKU_SSL_CLIENT | XKU_CODE_SIGN | XKU_ANYEKU)) == ["clientAuth", "codeSigning", "anyExtendedKeyUsage"])
    }
}
