import Foundation
import LocalCA
import Testing
import TVHome
import TrustStore

/// Putting the root into, and taking it out of, bundles, hashed folders and NSS databases.
struct StoreEditorTests {
    @Test func bundleAddReplacesATrustedEntryAndKeepsTheRestByteForByte() throws {
        let f = try StoreFixture()
        let other = try f.otherRoot()
        let rejected = try f.trustedRoot(["-addreject", "serverAuth"])
        f.write("bundle.pem", "# local roots\n" + other + rejected + "# end\n")
        let store = TrustStoreSpec.file(f.path + "/bundle.pem")
        #expect(f.ask(store).usable == .no)
        #expect(try StoreEditor.rewriteBundle(f.path + "/bundle.pem", root: f.ca.root, add: true) == 1)
        #expect(f.read("bundle.pem") == "# local roots\n" + other + "# end\n" + f.rootPEM)
        #expect(f.ask(store) == TrustFacts(store: store, installed: .yes, usable: .yes, finding: .verified))
        #expect(try StoreEditor.rewriteBundle(f.path + "/bundle.pem", root: f.ca.root, add: false) == 1)
        #expect(f.read("bundle.pem") == "# local roots\n" + other + "# end\n")
        #expect(f.ask(store).installed == .no)
    }

    /// A file with no certificate and lines that are not comments is not a bundle: the root is
    /// not added to it (a trust.store of file:/etc/shadow was taken: a trial). Blank or comment
    /// lines alone are a bundle with nothing in it yet.
    @Test func aFileThatIsNoBundleIsNotWrittenTo() throws {
        let f = try StoreFixture()
        let shadow = "root:$y$j9T$abc:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n"
        f.write("shadow", shadow)
        #expect(throws: StoreEditor.Failure.self) { try StoreEditor.rewriteBundle(f.path + "/shadow", root: f.ca.root, add: true) }
        #expect(f.read("shadow") == shadow)
        f.write("empty.pem", "# nothing yet\n\n")
        #expect(try StoreEditor.rewriteBundle(f.path + "/empty.pem", root: f.ca.root, add: true) == 0)
        #expect(f.read("empty.pem") == "# nothing yet\n\n" + f.rootPEM)
    }

    @Test func folderInstallLinksTheHashAndRemoveTakesBothAway() throws {
        let f = try StoreFixture()
        f.mkdir("certs")
        f.write("certs/old.pem", try f.trustedRoot(["-addreject", "serverAuth"]))
        try f.run("openssl", ["rehash", f.path + "/certs"])
        let store = TrustStoreSpec.dir(f.path + "/certs")
        #expect(f.ask(store).finding == .rejectedForTLS)
        try StoreEditor.installInFolder(f.path + "/certs", root: f.ca.root, fileName: "tunnelvision-test.pem")
        let hash = StoreEditor.subjectHash(f.ca.root)
        #expect(try FileManager.default.contentsOfDirectory(atPath: f.path + "/certs").sorted() == ["\(hash).0", "tunnelvision-test.pem"])
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: f.path + "/certs/\(hash).0") == "tunnelvision-test.pem")
        #expect(f.ask(store) == TrustFacts(store: store, installed: .yes, usable: .yes, finding: .verified))
        #expect(try StoreEditor.removeFromFolder(f.path + "/certs", root: f.ca.root) == ["\(hash).0", "tunnelvision-test.pem"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: f.path + "/certs") == [])
    }

    @Test func nssTrustThenRemove() throws {
        let f = try StoreFixture()
        let db = try f.makeNSS("nssdb")
        try f.nss(db, trust: ",,", nickname: "Already Here")
        try StoreEditor.trustInNSS(db, root: f.ca.root, rootPath: f.caFolder.rootPath, nickname: "TunnelVision Root CA x", environment: f.environment)
        // The existing entry's trust is changed, not a second entry added.
        #expect(f.ask(.nss(db)).finding == .nssTrusted(nickname: "Already Here"))
        #expect(try StoreEditor.removeFromNSS(db, root: f.ca.root, environment: f.environment) == ["Already Here"])
        #expect(f.ask(.nss(db)).finding == .nssAbsent)
        try StoreEditor.trustInNSS(db, root: f.ca.root, rootPath: f.caFolder.rootPath, nickname: "TunnelVision Root CA x", environment: f.environment)
        #expect(f.ask(.nss(db)).finding == .nssTrusted(nickname: "TunnelVision Root CA x"))
    }

    @Test("createNSSDatabase makes a missing folder (and its parents) 0700, then the database; the root then goes in")
    func nssDatabaseInAMissingFolder() throws {
        let f = try StoreFixture()
        let db = f.path + "/home/.pki/nssdb"
        try StoreEditor.createNSSDatabase(db, environment: f.environment)
        #expect(FileModes.permissions(of: f.path + "/home/.pki") == 0o700)
        #expect(FileModes.permissions(of: db) == 0o700)
        #expect(NSSDatabase.state(db) == .present)
        #expect(f.ask(.nss(db)).finding == .nssAbsent)
        try StoreEditor.trustInNSS(db, root: f.ca.root, rootPath: f.caFolder.rootPath, nickname: "TunnelVision Root CA x", environment: f.environment)
        #expect(f.ask(.nss(db)).usable == .yes)
        // Removing from a folder with no database finds nothing to remove.
        #expect(try StoreEditor.removeFromNSS(f.path + "/none", root: f.ca.root, environment: f.environment) == [])
    }
}
