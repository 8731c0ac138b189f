import Foundation
import LocalCA
import Testing
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
}
