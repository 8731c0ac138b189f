import Foundation
import LocalCA
import Testing
import TrustStore

/// The two questions against NSS databases made with `certutil -N` per test.
struct NSSStoreTests {
    @Test func flagsDecideInstalledVersusUsable() throws {
        let f = try StoreFixture()
        let db = try f.makeNSS("nssdb")
        #expect(f.ask(.nss(db)) == TrustFacts(store: .nss(db), installed: .no, usable: .no, finding: .nssAbsent))
        try f.nss(db, trust: ",,")
        #expect(f.ask(.nss(db)) == TrustFacts(store: .nss(db), installed: .yes, usable: .no,
                                            finding: .nssNotTrustedForTLS(nickname: "TV Test Root", trust: ",,")))
        try f.nss(db, trust: "c,,")
        #expect(f.ask(.nss(db)) == TrustFacts(store: .nss(db), installed: .yes, usable: .no,
                                            finding: .nssNotTrustedForTLS(nickname: "TV Test Root", trust: "c,,")))
        try f.nss(db, trust: "C,,")
        #expect(f.ask(.nss(db)) == TrustFacts(store: .nss(db), installed: .yes, usable: .yes, finding: .nssTrusted(nickname: "TV Test Root")))
    }

    @Test func anotherCertificateUnderTheSameKindOfNameIsNotOurs() throws {
        let f = try StoreFixture()
        let db = try f.makeNSS("nssdb")
        f.write("other.pem", try f.otherRoot())
        try f.run("certutil", ["-A", "-d", "sql:" + db, "-n", "TunnelVision Root CA 00000000", "-t", "C,,", "-a", "-i", f.path + "/other.pem"])
        #expect(f.ask(.nss(db)).installed == .no)
    }

    /// A trial's empty folder was "in doubt" (SEC_ERROR_BAD_DATABASE) to `tv ca status` and
    /// `tv setup`, while `tv ca trust --apply` made a database there: no database is "not installed".
    @Test("an empty folder and a missing one hold no database yet: not installed, not in doubt")
    func noDatabaseYetIsNotInstalled() throws {
        let f = try StoreFixture()
        let missing = f.path + "/nowhere/nssdb"
        #expect(f.ask(.nss(missing)) == TrustFacts(store: .nss(missing), installed: .no, usable: .no, finding: .nssNoDatabase(folderExists: false)))
        f.mkdir("empty")
        let empty = f.path + "/empty"
        #expect(f.ask(.nss(empty)) == TrustFacts(store: .nss(empty), installed: .no, usable: .no, finding: .nssNoDatabase(folderExists: true)))
        #expect(!FileManager.default.fileExists(atPath: empty + "/cert9.db"), "asking makes nothing")
        #expect(!FileManager.default.fileExists(atPath: f.path + "/nowhere"), "asking makes nothing")
    }

    @Test("a database certutil cannot open, and a file in the folder's place, are unknown")
    func anUnreadableDatabaseIsUnknown() throws {
        let f = try StoreFixture()
        f.mkdir("broken")
        f.write("broken/cert9.db", "not a database")
        let facts = f.ask(.nss(f.path + "/broken"))
        guard case .unknown(let because) = facts.installed else { Issue.record("\(facts)"); return }
        #expect(because.hasPrefix("certutil could not open the NSS database \(f.path)/broken ("), "\(because)")
        #expect(facts.usable == facts.installed)
        f.write("file", "x")
        #expect(f.ask(.nss(f.path + "/file")).installed == .unknown(because: "\(f.path)/file is a file, not an NSS database folder"))
    }

    @Test func withoutCertutilTheAnswerIsUnknown() throws {
        let f = try StoreFixture()
        let db = try f.makeNSS("nssdb")
        let facts = TrustQuestions.ask(.nss(db), about: f.ca, now: f.now, environment: ["PATH": f.path])
        #expect(facts.usable == .unknown(because: "the NSS database \(db) could not be read: certutil is not installed (not found on PATH) (Debian: apt-get install libnss3-tools)"))
    }

    @Test func listingParsesNicknamesWithSpaces() {
        let text = """

        Certificate Nickname                                         Trust Attributes
                                                                     SSL,S/MIME,JAR/XPI

        TunnelVision Root CA 1a2b3c4d                                C,,  
        my server                                                    Pu,u,u
        odd                                                          ,,   

        """
        #expect(NSSListing.parse(text) == [
            NSSListing(nickname: "TunnelVision Root CA 1a2b3c4d", sslFlags: "C", trust: "C,,"),
            NSSListing(nickname: "my server", sslFlags: "Pu", trust: "Pu,u,u"),
            NSSListing(nickname: "odd", sslFlags: "", trust: ",,"),
        ])
    }
}
