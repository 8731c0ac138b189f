import CertificateSetup
import Foundation
import SetupActions
import Testing
import TrustStore
import TVHome

/// The runtimes that keep their own list, `--platform python|node|java`, what inspection shows,
/// and the NSS database made before the root is added to a folder that has none.
struct RuntimeTrustTests {
    let root = RootDescription(path: "/h/ca/root.pem", commonName: "TunnelVision Root CA 1a2b3c4d", tag: "9f86d081", sha256: "9F:86")

    @Test func theTableNamesEachRuntimesOneSetting() {
        #expect(RuntimeTrust.all.map(\.runtime) == [.python, .node, .java])
        #expect(RuntimeTrust.of(.python).command(rootPath: "/h/ca/root.pem") == "cat \"$(python3 -m certifi)\" /h/ca/root.pem > \"$HOME/tv-python-roots.pem\" && export REQUESTS_CA_BUNDLE=\"$HOME/tv-python-roots.pem\"")
        #expect(RuntimeTrust.of(.node).command(rootPath: "/h/my ca/root.pem") == "export NODE_EXTRA_CA_CERTS='/h/my ca/root.pem'")
        #expect(RuntimeTrust.of(.java).command(rootPath: "/h/ca/root.pem")
                == "keytool -importcert -cacerts -alias tunnelvision -file /h/ca/root.pem -storepass changeit -noprompt")
        #expect(RuntimeTrust.of(.node).line(rootPath: "/r.pem") == "Node.js reads the list built into node: export NODE_EXTRA_CA_CERTS=/r.pem")
        #expect(RuntimeTrust.of(.python).fixSentence(rootPath: "/r.pem")
                == "Python requests (certifi) reads certifi's own bundle, not the system store; `cat \"$(python3 -m certifi)\" /r.pem > \"$HOME/tv-python-roots.pem\" && export REQUESTS_CA_BUNDLE=\"$HOME/tv-python-roots.pem\"` makes it trust tv's root.")
    }

    @Test func platformNamesTakeTheRuntimes() {
        #expect(TrustTarget(platform: "python", store: .system) == .runtime(.python))
        #expect(TrustTarget(platform: "Node", store: .system) == .runtime(.node))
        #expect(TrustTarget(platform: "java", store: .system) == .runtime(.java))
        #expect(TrustTarget.platformNames.suffix(3) == ["python", "node", "java"])
        #expect(!TrustTarget.runtime(.node).canApply)
        #expect(TrustInstaller.installActions(.runtime(.python), root: root) == nil)
    }

    @Test func runtimeStepsUseTheRealRootPath() {
        let node = TrustGuides.install(.runtime(.node), root: root)
        #expect(node.title == "Node.js")
        #expect(node.steps == ["export NODE_EXTRA_CA_CERTS=/h/ca/root.pem   (read when node starts; it adds to Node's own list)",
                               TrustGuides.forgetLacksRootStep])
        let python = TrustGuides.install(.runtime(.python), root: root)
        #expect(python.steps == ["cat \"$(python3 -m certifi)\" /h/ca/root.pem > \"$HOME/tv-python-roots.pem\" && export REQUESTS_CA_BUNDLE=\"$HOME/tv-python-roots.pem\"   (in the shell that runs the program)",
                                 "Then `tv pinned forget --lacks-root`: a program that connected through tv before it trusted the root was remembered as lacking it, and its connections pass through untouched until then."])
        #expect(python.note?.hasPrefix("REQUESTS_CA_BUNDLE replaces certifi's list") == true)
        #expect(TrustGuides.install(.runtime(.java), root: root).steps.count == 3)
        #expect(TrustGuides.removal(.runtime(.node), root: root).steps == ["unset NODE_EXTRA_CA_CERTS where you set it (your shell profile or the program's environment)."])
    }

    @Test("with content keeping off, the text says what a flow row holds and what is kept of each request without content keeping")
    func visibleTextSaysWhatIsKept() {
        #expect(SetupText.visibleWhenOn(contentKept: false) == [
            "Visible: for each connection of a program that trusts the root, `tv flows` shows the host name, the client and server addresses, the TLS versions and ALPN, the server's certificate, the bytes each way, the timing and how it ended; for each HTTP request inside it, `tv requests` shows the method, the URL path (without its query string), the status, the body sizes and the timing.",
            "Content keeping is off: headers, bodies and query strings are not kept, only each request's method, URL path without its query, status, body sizes and timing (`tv settings set content.keep on` keeps the rest; `tv request ID` shows it).",
        ])
        #expect(SetupText.visibleWhenOn(contentKept: true)[1]
                == "Content keeping is on: the decrypted requests and responses — headers, bodies and query strings — are kept under its budget and expiry (`tv request ID`, `tv turns`, `tv export har`).")
        #expect(SetupText.whenOn(contentKept: false) == SetupText.visibleWhenOn(contentKept: false) + SetupText.privateWhenOn)
    }

    @Test("an NSS folder without a database gets one first; a missing folder is made first (0700), said as such")
    func anNSSFolderWithoutADatabaseGetsOneFirst() {
        let add = TrustInstaller.Action.nssAdd(directory: "/n", nickname: "TunnelVision Root CA 1a2b3c4d")
        #expect(TrustInstaller.installActions(.nss(directory: "/n"), root: root, nssDatabase: { _ in .noDatabase })
                == [.nssCreate(directory: "/n", makesFolder: false), add])
        #expect(TrustInstaller.installActions(.nss(directory: "/n"), root: root, nssDatabase: { _ in .noFolder })
                == [.nssCreate(directory: "/n", makesFolder: true), add])
        #expect(TrustInstaller.installActions(.nss(directory: "/n"), root: root, nssDatabase: { _ in .present }) == [add])
        #expect(TrustInstaller.installActions(.nss(directory: "/n"), root: root, nssDatabase: { _ in .notAFolder }) == [add])
        #expect(TrustInstaller.Action.nssCreate(directory: "/n", makesFolder: false).sentence
                == "create an empty NSS database in /n, which has none (certutil -N --empty-password)")
        #expect(TrustInstaller.Action.nssCreate(directory: "/n", makesFolder: true).sentence
                == "make the folder /n (0700, as Chromium would on its first start) and an empty NSS database in it (certutil -N --empty-password)")
    }

    @Test("NSSDatabase.state: present only with cert9.db; an empty folder, a missing one and a file are told apart")
    func nssDatabaseState() throws {
        let dir = NSTemporaryDirectory() + "tv-nss-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(NSSDatabase.state(dir) == .noDatabase)
        #expect(NSSDatabase.state(dir + "/missing") == .noFolder)
        #expect(NSSDatabase.state(dir + "/missing/deeper") == .noFolder)
        FileManager.default.createFile(atPath: dir + "/cert9.db", contents: Data())
        #expect(NSSDatabase.state(dir) == .present)
        #expect(NSSDatabase.state(dir + "/cert9.db") == .notAFolder)
    }
}

/// Where tv installed a root, and what `tv ca remove` then does and lists.
struct TrustRemovalPlanTests {
    @Test func theRecordRemembersStoresByRootAbsolutely() {
        let record = TrustInstallRecord()
            .remembering(.nss("n"), sha256: "AA", directory: "/work")
            .remembering(.system, sha256: "AA", directory: "/work")
            .remembering(.system, sha256: "AA", directory: "/elsewhere")
            .remembering(.file("/b.pem"), sha256: "BB", directory: "/work")
        #expect(record.installs == [.init(store: "nss:/work/n", sha256: "AA"), .init(store: "system", sha256: "AA"),
                                    .init(store: "file:/b.pem", sha256: "BB")])
        #expect(record.stores(for: "AA") == [.nss("/work/n"), .system])
        #expect(record.forgetting(.system, sha256: "AA").stores(for: "AA") == [.nss("/work/n")])
    }

    @Test func applyTakesTheNamedStoreThenTheRemembered() {
        #expect(TrustRemovalPlan.storesToApply(apply: true, chosen: .system, remembered: [.nss("/n"), .system]) == [.system, .nss("/n")])
        #expect(TrustRemovalPlan.storesToApply(apply: false, chosen: .system, remembered: [.nss("/n")]) == [])
    }

    @Test("what was done is not listed again; only what is left")
    func leftToDo() {
        #expect(TrustRemovalPlan.knownLeft(chosen: .system, chosenExplicitly: false, remembered: [.nss("/n")], done: [.system, .nss("/n")]) == [])
        #expect(TrustRemovalPlan.knownLeft(chosen: .system, chosenExplicitly: false, remembered: [.nss("/n")], done: []) == [.nss("/n")])
        #expect(TrustRemovalPlan.knownLeft(chosen: .system, chosenExplicitly: true, remembered: [], done: []) == [.system])
        #expect(TrustRemovalPlan.elsewhere(done: [.system], knownLeft: []) == [.nss(directory: nil), .macos, .ios, .android, .windows])
        #expect(TrustRemovalPlan.elsewhere(done: [], knownLeft: []) == [.debian, .fedora, .arch, .nss(directory: nil), .macos, .ios, .android, .windows])
    }

    @Test func theRecordFileIsPrivateAndGoneWhenEmpty() throws {
        let dir = NSTemporaryDirectory() + "tv-rec-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let home = TVHome(path: dir)
        let record = TrustInstallRecord().remembering(.nss("/n"), sha256: "AA", directory: "/")
        try record.write(home: home)
        let mode = try FileManager.default.attributesOfItem(atPath: TrustInstallRecord.path(home))[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(TrustInstallRecord.read(home: home) == record)
        try record.forgetting(.nss("/n"), sha256: "AA").write(home: home)
        #expect(!FileManager.default.fileExists(atPath: TrustInstallRecord.path(home)))
    }
}
