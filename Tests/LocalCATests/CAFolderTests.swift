import Foundation
import Synchronization
import Testing
import TVHome
@testable import LocalCA

/// `$TV_HOME/ca`: modes, refusal over an existing CA, and "doubt closes the door" (issue 2).
///
/// Tests run as root, so "unreadable" is simulated with a corrupt file or a folder where a file
/// should be.
@Suite("CAFolder")
struct CAFolderTests {
    /// A fresh home with a CA created in it.
    func withCA(_ body: (CAFolder, CertificateAuthority, TemporaryFolder) throws -> Void) throws {
        let tmp = TemporaryFolder()
        defer { tmp.remove() }
        let home = TVHome(path: tmp.path + "/home")
        try home.ensureExists()
        let folder = CAFolder(home: home)
        let ca = try folder.create(now: currentTime())
        try body(folder, ca, tmp)
    }

    @Test("create writes the four files with their modes; the folder is 0700")
    func modes() throws {
        try withCA { folder, ca, tmp in
            #expect(folder.directory == tmp.path + "/home/ca")
            #expect(FileModes.permissions(of: tmp.path + "/home") == 0o700)
            #expect(FileModes.permissions(of: folder.directory) == 0o700)
            #expect(FileModes.permissions(of: folder.rootKeyPath) == 0o600)
            #expect(FileModes.permissions(of: folder.leafKeyPath) == 0o600)
            #expect(FileModes.permissions(of: folder.rootPath) == 0o644)
            #expect(FileModes.permissions(of: folder.identityPath) == 0o644)
            // Nothing else (no temporary files left behind).
            let names = try FileManager.default.contentsOfDirectory(atPath: folder.directory).sorted()
            #expect(names == ["leaf-key.pem", "profile-identity.json", "root-key.pem", "root.pem"])
            // Keys are unencrypted PKCS#8 PEM; the root file is the certificate.
            let rootKeyText = String(decoding: FileManager.default.contents(atPath: folder.rootKeyPath)!, as: UTF8.self)
            #expect(rootKeyText.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
            #expect(try PrivateKey.fromPEM(Array(rootKeyText.utf8)).type == .ecdsaP256)
            #expect([UInt8](FileManager.default.contents(atPath: folder.rootPath)!) == ca.root.pem)
            // The leaf key is not the root key.
            #expect(!ca.root.matches(ca.leafKey))
        }
    }

    @Test("create makes a missing home and ca folder 0700")
    func makesFolders() throws {
        let tmp = TemporaryFolder()
        defer { tmp.remove() }
        let folder = CAFolder(home: TVHome(path: tmp.path + "/new/home"))
        try folder.create(rootKeyType: .ecdsaP384, leafKeyType: .ecdsaP256, now: currentTime())
        #expect(FileModes.permissions(of: tmp.path + "/new/home") == 0o700)
        #expect(FileModes.permissions(of: folder.directory) == 0o700)
        guard case .present(let ca) = folder.load() else { Issue.record("no CA"); return }
        #expect(ca.root.publicKeyDescription == "ECDSA P-384")
        #expect(ca.leafKey.type == .ecdsaP256)
    }

    @Test("load() reads back exactly what create wrote")
    func loadRoundTrip() throws {
        try withCA { folder, ca, _ in
            guard case .present(let loaded) = folder.load() else { Issue.record("not present"); return }
            #expect(loaded.root.der == ca.root.der)
            #expect(loaded.root.matches(ca.rootKey))
            let (loadedRootKey, rootKey) = (try loaded.rootKey.pkcs8PEM(), try ca.rootKey.pkcs8PEM())
            let (loadedLeafKey, leafKey) = (try loaded.leafKey.pkcs8PEM(), try ca.leafKey.pkcs8PEM())
            #expect(loadedRootKey == rootKey)
            #expect(loadedLeafKey == leafKey)
        }
    }

    @Test("an absent folder and an empty folder are 'absent', not doubt")
    func absent() throws {
        let tmp = TemporaryFolder()
        defer { tmp.remove() }
        let folder = CAFolder(directory: tmp.path + "/ca")
        guard case .absent = folder.load() else { Issue.record("missing folder should be absent"); return }
        try FileManager.default.createDirectory(atPath: folder.directory, withIntermediateDirectories: false)
        guard case .absent = folder.load() else { Issue.record("empty folder should be absent"); return }
        // Only the profile identity left (after remove()) is still "absent".
        _ = try ProfileIdentity.loadOrCreate(path: folder.identityPath)
        guard case .absent = folder.load() else { Issue.record("identity alone should be absent"); return }
    }

    @Test("create refuses over an existing CA and leaves every byte as it was")
    func refusesExisting() throws {
        try withCA { folder, _, tmp in
            let before = snapshot(tmp.path)
            #expect(throws: CAError.alreadyExists(directory: folder.directory)) {
                try folder.create(now: currentTime())
            }
            #expect(throws: CAError.alreadyExists(directory: folder.directory)) {
                try folder.create(rootKeyType: .rsa2048, now: currentTime())
            }
            #expect(sameSnapshot(before, snapshot(tmp.path)))
            #expect(CAError.alreadyExists(directory: folder.directory).message.contains("tv ca remake"))
        }
    }

    /// One way to damage a CA folder, and which file the doubt must name.
    struct Damage: CustomTestStringConvertible, Sendable {
        let name: String
        let apply: @Sendable (CAFolder) throws -> Void
        let blamed: @Sendable (CAFolder) -> String
        let problem: String
        var testDescription: String { name }
    }

    static let damages: [Damage] = [
        Damage(name: "corrupt root key", apply: { try Data("-----BEGIN PRIVATE KEY-----\ngarbage\n-----END PRIVATE KEY-----\n".utf8).write(to: URL(fileURLWithPath: $0.rootKeyPath)) },
               blamed: { $0.rootKeyPath }, problem: "cannot be parsed as a PEM private key"),
        Damage(name: "truncated root certificate", apply: { f in
                   let bytes = FileManager.default.contents(atPath: f.rootPath)!
                   try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: f.rootPath)) },
               blamed: { $0.rootPath }, problem: "cannot be parsed as a PEM certificate"),
        Damage(name: "a folder where the root key should be", apply: { f in
                   try FileManager.default.removeItem(atPath: f.rootKeyPath)
                   try FileManager.default.createDirectory(atPath: f.rootKeyPath, withIntermediateDirectories: false) },
               blamed: { $0.rootKeyPath }, problem: "is a folder where a file should be"),
        Damage(name: "a folder where the root certificate should be", apply: { f in
                   try FileManager.default.removeItem(atPath: f.rootPath)
                   try FileManager.default.createDirectory(atPath: f.rootPath, withIntermediateDirectories: false) },
               blamed: { $0.rootPath }, problem: "is a folder where a file should be"),
        Damage(name: "root key missing, certificate present", apply: { try FileManager.default.removeItem(atPath: $0.rootKeyPath) },
               blamed: { $0.rootKeyPath }, problem: "is missing while root.pem and leaf-key.pem are there"),
        Damage(name: "root key and leaf key missing", apply: { f in
                   try FileManager.default.removeItem(atPath: f.rootKeyPath)
                   try FileManager.default.removeItem(atPath: f.leafKeyPath) },
               blamed: { $0.rootKeyPath }, problem: "is missing while root.pem is there"),
        Damage(name: "certificate missing, keys present", apply: { try FileManager.default.removeItem(atPath: $0.rootPath) },
               blamed: { $0.rootPath }, problem: "is missing while root-key.pem and leaf-key.pem are there"),
        // Named with where it leads (a trial's read only "other CA files are there").
        Damage(name: "only a dangling symlink as the leaf key", apply: { f in
                   for path in [f.rootPath, f.rootKeyPath, f.leafKeyPath] { try FileManager.default.removeItem(atPath: path) }
                   try FileManager.default.createSymbolicLink(atPath: f.leafKeyPath, withDestinationPath: "/nonexistent/leaf.pem") },
               blamed: { $0.rootPath }, problem: "is missing while leaf-key.pem (a symbolic link to /nonexistent/leaf.pem, which does not exist) is there"),
        Damage(name: "a root key that does not match", apply: { f in
                   try Data(try PrivateKey.generate(.ecdsaP256).pkcs8PEM()).write(to: URL(fileURLWithPath: f.rootKeyPath)) },
               blamed: { $0.rootKeyPath }, problem: "is not the key of"),
        Damage(name: "a root key other users can read (0644)", apply: { chmod($0.rootKeyPath, 0o644) },
               blamed: { $0.rootKeyPath }, problem: "can be read or written by other users (mode 0644); if nobody else could have copied it, `chmod 600 "),
        Damage(name: "a dangling symlink as the root key", apply: { f in
                   try FileManager.default.removeItem(atPath: f.rootKeyPath)
                   try FileManager.default.createSymbolicLink(atPath: f.rootKeyPath, withDestinationPath: f.directory + "/nowhere") },
               blamed: { $0.rootKeyPath }, problem: "cannot be read"),
    ]

    @Test("a damaged CA is doubt naming the file; create and import refuse and touch nothing", arguments: damages)
    func doubt(_ damage: Damage) throws {
        try withCA { folder, _, tmp in
            try damage.apply(folder)
            let before = snapshot(tmp.path)
            guard case .doubt(let doubt) = folder.load() else {
                Issue.record("\(damage.name): load() did not answer doubt")
                return
            }
            #expect(doubt.path == damage.blamed(folder))
            #expect(doubt.problem.contains(damage.problem), "\(doubt.problem)")
            #expect(doubt.message.contains(damage.blamed(folder)))
            #expect(doubt.message.contains("will neither sign with it nor generate a new CA over it"))

            #expect(throws: CAError.inDoubt(doubt)) { try folder.create(now: currentTime()) }
            // Import is refused the same way, before its own files are even read.
            let pem = try tmp.write("other.pem", try CertificateAuthority.makeRoot(key: try pooledKey(.ecdsaP256), now: currentTime()).pem)
            let key = try tmp.write("other-key.pem", try pooledKey(.ecdsaP256).pkcs8PEM())
            let afterWrites = snapshot(tmp.path)
            #expect(throws: CAError.inDoubt(doubt)) {
                try folder.importCA(certificatePath: pem, keyPath: key, now: currentTime())
            }
            #expect(sameSnapshot(afterWrites, snapshot(tmp.path)))
            // Nothing but the two input files changed since the damage.
            var expected = before
            expected["other.pem"] = afterWrites["other.pem"]
            expected["other-key.pem"] = afterWrites["other-key.pem"]
            #expect(sameSnapshot(expected, snapshot(tmp.path)))
            // Status says doubt, and never shows a key.
            let report = CAStatusReport(state: folder.load(), folder: folder)
            #expect(report.state == .doubt)
            #expect(report.problemPath == damage.blamed(folder))
        }
    }

    /// The owner rule (`FileTrust.owner`) on the root's files: given to nobody (uid 65534) with
    /// their modes unchanged, as a trial's `chown nobody ca/root-key.pem` did.
    static let ownerDamages: [Damage] = [
        Damage(name: "a root key another user owns (0600)", apply: { chown($0.rootKeyPath, 65534, 65534) },
               blamed: { $0.rootKeyPath }, problem: "belongs to nobody, not to you (root), so the user nobody could have replaced the CA"),
        Damage(name: "a root certificate another user owns (0644)", apply: { chown($0.rootPath, 65534, 65534) },
               blamed: { $0.rootPath }, problem: "belongs to nobody, not to you (root), so the user nobody could have replaced the CA"),
    ]

    @Test("a root file another user owns is doubt, in the CA folder's own sentence; nothing signs with it", .enabled(if: geteuid() == 0), arguments: ownerDamages)
    func ownedByAnotherUser(_ damage: Damage) throws {
        try withCA { folder, _, _ in
            try damage.apply(folder)
            guard case .doubt(let doubt) = folder.load() else { Issue.record("\(damage.name): not doubt"); return }
            #expect(doubt == CADoubt(path: damage.blamed(folder), problem: damage.problem))
            #expect(throws: CAError.inDoubt(doubt)) { try folder.create(now: currentTime()) }
            // Back to root: present again.
            chown(damage.blamed(folder), 0, 0)
            guard case .present = folder.load() else { Issue.record("\(damage.name): not present once root's again"); return }
        }
    }

    @Test("a ca/ folder others may read and enter (0755) is tightened to 0700 when read; a 0700 one is left alone")
    func folderTightened() throws {
        try withCA { folder, _, _ in
            chmod(folder.directory, 0o755)
            guard case .present = folder.load() else { Issue.record("not present"); return }
            #expect(FileModes.permissions(of: folder.directory) == 0o700)
            chmod(folder.directory, 0o750)
            _ = folder.load(remakingLeafKey: false)
            #expect(FileModes.permissions(of: folder.directory) == 0o700)
        }
    }

    @Test("six creates at the same moment: one makes the CA, the others are told another tv made it and it is ready; none 'could not write'")
    func concurrentCreates() throws {
        let tmp = TemporaryFolder()
        defer { tmp.remove() }
        let home = TVHome(path: tmp.path + "/home")
        try home.ensureExists()
        let folder = CAFolder(home: home)
        let results = Mutex<[Result<String, any Error>]>([])
        let group = DispatchGroup()
        for _ in 0..<6 {
            group.enter()
            Thread.detachNewThread {
                let result = Result { try Hex.encode(folder.create(now: currentTime()).root.sha256) }
                results.withLock { $0.append(result) }
                group.leave()
            }
        }
        group.wait()
        let all = results.withLock { $0 }
        let made = all.compactMap { try? $0.get() }
        #expect(made.count == 1, "\(all)")
        for case .failure(let error) in all {
            let said = error as? CAError
            #expect(said == .madeAtTheSameMoment(directory: folder.directory) || said == .alreadyExists(directory: folder.directory), "\(error)")
        }
        guard case .present(let ca) = folder.load() else { Issue.record("no CA"); return }
        #expect(Hex.encode(ca.root.sha256) == made.first)
        #expect(CAError.madeAtTheSameMoment(directory: "/h/ca").message
                == "Another tv made the CA in /h/ca at the same moment, and it is ready (`tv ca status` shows it); this command made none of its own.")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.directory).sorted()
                == ["leaf-key.pem", "profile-identity.json", "root-key.pem", "root.pem"])
    }

    @Test("a file where the ca folder should be is doubt")
    func fileAsFolder() throws {
        let tmp = TemporaryFolder()
        defer { tmp.remove() }
        let home = TVHome(path: tmp.path)
        let folder = CAFolder(home: home)
        try Data("x".utf8).write(to: URL(fileURLWithPath: folder.directory))
        guard case .doubt(let doubt) = folder.load() else { Issue.record("not doubt"); return }
        #expect(doubt.path == folder.directory)
        #expect(throws: CAError.inDoubt(doubt)) { try folder.create(now: currentTime()) }
        #expect(FileManager.default.contents(atPath: folder.directory) == Data("x".utf8))
    }

    @Test("doubt says how to start over as CA/README does: delete the three files, keep profile-identity.json")
    func doubtSaysHowToStartOver() throws {
        let doubt = CADoubt(path: "/h/ca/root-key.pem", problem: "cannot be parsed as a PEM private key")
        #expect(doubt.message == "The CA is in doubt: /h/ca/root-key.pem cannot be parsed as a PEM private key; tv will neither sign with it nor generate a new CA over it — repair or restore that file, or, to start over on purpose, delete root.pem, root-key.pem and leaf-key.pem from /h/ca and keep profile-identity.json.")
        #expect(CADoubt.startOver(doubtPath: "/h/ca") == "move /h/ca aside")
        #expect(CADoubt.startOver(doubtPath: "/h/ca/leaf-key.pem")
                == "move leaf-key.pem aside and keep root.pem and root-key.pem (tv makes a new leaf key; it carries no trust)")
        try withCA { folder, _, _ in
            try Data("not a key".utf8).write(to: URL(fileURLWithPath: folder.rootKeyPath))
            let report = CAStatusReport(state: folder.load(), folder: folder)
            #expect(report.lines(now: currentTime()) == [
                "CA: in doubt — \(folder.rootKeyPath) cannot be parsed as a PEM private key",
                "Nothing will be generated over it. Repair or restore that file, or, to start over on purpose, delete root.pem, root-key.pem and leaf-key.pem from \(folder.directory) and keep profile-identity.json.",
            ])
        }
    }

    @Test("a root certificate that is not a CA is doubt")
    func notACA() throws {
        try withCA { folder, ca, _ in
            // Replace root + root key with a leaf and its own key: parses, matches, but is CA:FALSE.
            let leaf = try ca.issue(for: try LeafIdentity(names: ["a.test"]), keyType: .ecdsaP256, now: currentTime())
            try Data(leaf.certificate.pem).write(to: URL(fileURLWithPath: folder.rootPath))
            try Data(try leaf.key.pkcs8PEM()).write(to: URL(fileURLWithPath: folder.rootKeyPath))
            guard case .doubt(let doubt) = folder.load() else { Issue.record("not doubt"); return }
            #expect(doubt.path == folder.rootPath)
            #expect(doubt.problem.contains("not a CA certificate"))
        }
    }

    @Test("remove() deletes the three CA files and keeps the profile identity")
    func remove() throws {
        try withCA { folder, _, _ in
            let identity = try ProfileIdentity.loadOrCreate(path: folder.identityPath)
            try folder.remove()
            let names = try FileManager.default.contentsOfDirectory(atPath: folder.directory)
            #expect(names == ["profile-identity.json"])
            guard case .absent = folder.load() else { Issue.record("not absent after remove"); return }
            try folder.create(now: currentTime())
            #expect(try ProfileIdentity.loadOrCreate(path: folder.identityPath) == identity)
        }
    }

    @Test("the status report of a present CA carries its facts and no key material")
    func statusReport() throws {
        try withCA { folder, ca, _ in
            let report = CAStatusReport(state: folder.load(), folder: folder)
            #expect(report.state == .present)
            #expect(report.subject == ca.root.subject)
            #expect(report.keyType == "ECDSA P-256")
            #expect(report.leafKeyType == "ECDSA P-256")
            #expect(report.serialHex == ca.root.serialHex)
            #expect(report.sha256 == Hex.encode(ca.root.sha256, separator: ":", uppercase: true))
            #expect(report.sha1?.count == 59)
            let now = currentTime()
            let text = report.lines(now: now).joined(separator: "\n")
                + JSONValue.object(report.jsonFields()).serialized(pretty: true)
            let rootKeyBody = String(decoding: try ca.rootKey.pkcs8PEM(), as: UTF8.self)
                .split(separator: "\n").dropFirst().first.map(String.init) ?? "?"
            #expect(!text.contains("PRIVATE KEY"))
            #expect(!text.contains(rootKeyBody))
            #expect(report.jsonFields().map(\.0) == ["state", "directory", "subject", "keyType", "leafKeyType",
                                                     "notBefore", "notAfter", "serial", "sha256", "sha1", "certificate"])
        }
    }
}
