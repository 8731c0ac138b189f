import COpenSSL
import FlowStore
import LocalCA
import Proxy
import Testing
@testable import TVCore
import FlowTerms

/// What the check of the server's certificate found, from the proxy's facts to the row and to
/// what `tv flows`, `tv flow` and `--json` say, `--upstream-insecure` included (a new-user
/// trial's flows read plain "inspected" beside an expired server).
@Suite struct ServerCheckPresentationTests {
    static let expired = UpstreamCertificateProblem(
        code: X509_V_ERR_CERT_HAS_EXPIRED, depth: 0, host: "expired.test",
        certificate: .init(subject: "CN=expired.test", issuer: "CN=UpCA", commonName: "expired.test", names: [.dns("expired.test")],
                           notBefore: 1_704_067_200, notAfter: 1_706_745_600, key: "ECDSA P-256", signatureAlgorithm: "ecdsa-with-SHA256",
                           extendedKeyUsage: ["serverAuth"]),
        checkedAt: 1_714_564_800, securityLevel: 2)
    static let cause = "certificate has expired: it was valid until 2024-02-01 00:00:00 UTC, and this machine's clock reads 2024-05-01 12:00:00 UTC"

    static func record(verified: Bool?, problem: UpstreamCertificateProblem? = nil, status: FlowStatus = .inspected) -> FlowRecord {
        var facts = FlowFacts(id: 9, startMicros: 1_714_564_800_000_000, client: Endpoint(address: "127.0.0.1", port: 40_000))
        facts.status = status
        facts.host = "expired.test"
        facts.serverCertificate = ServerCertificateFacts(subject: "CN=expired.test", issuer: "CN=UpCA", subjectAlternativeNames: ["DNS:expired.test"],
                                                         notBefore: 1_704_067_200, notAfter: 1_706_745_600, sha256: String(repeating: "ab", count: 32))
        facts.upstreamVerified = verified
        facts.upstreamCertificateProblem = problem?.cause
        return FlowRecordMapping.record(facts)
    }

    @Test("the row keeps the verdict and the cause, checked or not acted on; nil when nothing was checked")
    func mapping() {
        let insecure = Self.record(verified: false, problem: Self.expired)
        #expect(insecure.certificateVerified == false && insecure.certificateProblem == Self.cause)
        let good = Self.record(verified: true)
        #expect(good.certificateVerified == true && good.certificateProblem == nil)
        let passedThrough = Self.record(verified: nil, status: .encrypted)
        #expect(passedThrough.certificateVerified == nil && passedThrough.certificateProblem == nil)
    }

    @Test("tv flows: an inspected flow whose server did not verify says so and why (cut to its cause when long)")
    func listWord() {
        #expect(FlowListPresentation.statusWord(Self.record(verified: false, problem: Self.expired)) == "inspected, server NOT verified: certificate has expired …")
        var selfSigned = Self.record(verified: false)
        selfSigned.certificateProblem = "self-signed certificate"
        #expect(FlowListPresentation.statusWord(selfSigned) == "inspected, server NOT verified: self-signed certificate")
        #expect(FlowListPresentation.statusWord(Self.record(verified: true)) == "inspected")
        #expect(FlowListPresentation.statusWord(Self.record(verified: nil)) == "inspected")
    }

    @Test("tv flow: the status says the check failed and tv went on; the certificate's verified line says why; JSON carries verified and problem")
    func detail() {
        let insecure = Self.record(verified: false, problem: Self.expired)
        #expect(FlowDetailPresentation.statusSentence(insecure) == "inspected — tv terminated TLS on both legs, though the server's certificate did NOT verify "
                + "(tv run --upstream-insecure): anyone on the way to the server could have stood in for it")
        #expect(FlowDetailPresentation.verifiedLine(insecure) == "NO: " + Self.cause + "; inspected anyway (tv run --upstream-insecure)")
        #expect(FlowDetailPresentation.verifiedLine(Self.record(verified: false, problem: Self.expired, status: .failed)) == "NO: " + Self.cause)
        #expect(FlowDetailPresentation.verifiedLine(Self.record(verified: true)) == "yes (its chain, name and dates)")
        #expect(FlowDetailPresentation.verifiedLine(Self.record(verified: nil)) == nil)
        #expect(FlowDetailPresentation.statusSentence(Self.record(verified: true)) == "inspected — tv terminated TLS on both legs")
        guard case .object(let fields) = FlowDetailPresentation.certificateJSON(insecure) else { Issue.record("no object"); return }
        #expect(fields.first { $0.0 == "verified" }?.1 == .bool(false))
        #expect(fields.first { $0.0 == "problem" }?.1 == .string(Self.cause))
        guard case .object(let good) = FlowDetailPresentation.certificateJSON(Self.record(verified: nil)) else { Issue.record("no object"); return }
        #expect(good.first { $0.0 == "verified" }?.1 == .null && good.first { $0.0 == "problem" }?.1 == .null)
    }
}
