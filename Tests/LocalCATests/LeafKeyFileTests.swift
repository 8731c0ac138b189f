import Foundation
import Testing
import TVHome
@testable import LocalCA

/// `leaf-key.pem` carries no trust: one missing or unusable is made again and said once, never a
/// doubt about the root (a trial's missing leaf key was told to delete the root devices trusted).
@Suite("The leaf key file")
struct LeafKeyFileTests {
    static let root = FileOwner(id: 0, name: "root")
    static let nobody = FileOwner(id: 65534, name: "nobody")

    /// A fresh CA in a temporary home.
    func withCA(_ body: (CAFolder, CertificateAuthority) throws -> Void) throws {
        let tmp = TemporaryFolder()
        defer { tmp.remove() }
        let folder = CAFolder(home: TVHome(path: tmp.path + "/home"))
        try body(folder, try folder.create(now: currentTime()))
    }

    func names(_ folder: CAFolder) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.directory).sorted()
    }

    @Test("what was done, said in two sentences, never advice to delete the root")
    func sentences() {
        #expect(LeafKeyRemade(path: "/h/ca/leaf-key.pem", problem: .missing, setAside: nil, keyType: .ecdsaP256, notSaved: nil).sentence
                == "The leaf key /h/ca/leaf-key.pem was missing; tv made a new one (ECDSA P-256). It is only the key tv's leaves carry: the root, and every device that trusts it, are unchanged.")
        #expect(LeafKeyRemade(path: "/h/ca/leaf-key.pem", problem: .unusable("cannot be parsed as a PEM private key"),
                              setAside: "/h/ca/leaf-key.pem.unusable-20260130T120500Z", keyType: .rsa2048, notSaved: nil).sentence
                == "The leaf key /h/ca/leaf-key.pem cannot be parsed as a PEM private key; tv moved it to /h/ca/leaf-key.pem.unusable-20260130T120500Z and made a new one (RSA 2048). It is only the key tv's leaves carry: the root, and every device that trusts it, are unchanged.")
        #expect(LeafKeyRemade(path: "/h/ca/leaf-key.pem", problem: .missing, setAside: nil, keyType: .ecdsaP256, notSaved: "Read-only file system").sentence
                == "The leaf key /h/ca/leaf-key.pem was missing, and tv could not write a new one there (Read-only file system), so this run uses a leaf key made in memory (ECDSA P-256). It is only the key tv's leaves carry: the root, and every device that trusts it, are unchanged; once /h/ca can be written, tv saves one.")
        #expect(LeafKeyRemade(path: "/h/ca/leaf-key.pem", problem: .unusable("is not a regular file"), setAside: nil, keyType: .ecdsaP256,
                              notSaved: "Read-only file system").sentence
                == "The leaf key /h/ca/leaf-key.pem is not a regular file, and tv could not move it aside (Read-only file system), so this run uses a leaf key made in memory (ECDSA P-256) and the file stays as it is. It is only the key tv's leaves carry: the root, and every device that trusts it, are unchanged; move that file aside yourself, and tv saves a new one.")
        for remade in [LeafKeyRemade(path: "/h/ca/leaf-key.pem", problem: .missing, setAside: nil, keyType: .ecdsaP256, notSaved: nil)] {
            #expect(!remade.sentence.contains("delete"))
            #expect(!remade.sentence.contains("root.pem"))
        }
    }

    @Test("where an unusable leaf key goes: beside it, named by the UTC time, never over another file")
    func asidePath() {
        // 2026-01-30 12:05:00 UTC.
        #expect(LeafKeyRemade.asidePath(for: "/h/ca/leaf-key.pem", now: 1_769_774_700) { _ in false }
                == "/h/ca/leaf-key.pem.unusable-20260130T120500Z")
        let taken: Set = ["/h/ca/leaf-key.pem.unusable-20260130T120500Z", "/h/ca/leaf-key.pem.unusable-20260130T120500Z-2"]
        #expect(LeafKeyRemade.asidePath(for: "/h/ca/leaf-key.pem", now: 1_769_774_700) { taken.contains($0) }
                == "/h/ca/leaf-key.pem.unusable-20260130T120500Z-3")
    }

    @Test("a leaf key file is judged as the root key is (FileTrust.secretFile), each problem its clause")
    func fileProblems() {
        #expect(LeafKeyProblem.of(FileFacts(kind: .regular, owner: Self.root, mode: 0o600), you: Self.root) == nil)
        #expect(LeafKeyProblem.of(FileFacts(kind: .regular, owner: Self.root, mode: 0o640), you: Self.root)
                == .unusable("can be read by other users (mode 0640)"))
        #expect(LeafKeyProblem.of(FileFacts(kind: .regular, owner: Self.nobody, mode: 0o600), you: Self.root)
                == .unusable("belongs to nobody, not to you (root), so the user nobody could know the key"))
        #expect(LeafKeyProblem.of(FileFacts(kind: .symbolicLink, owner: Self.root, mode: 0o777), you: Self.root) == .unusable("is a symbolic link"))
        #expect(LeafKeyProblem.of(FileFacts(kind: .directory, owner: Self.root, mode: 0o700), you: Self.root) == .unusable("is not a regular file"))
    }

    @Test("a missing leaf key is made again (0600), said once; the root and its key are untouched")
    func missing() throws {
        try withCA { folder, ca in
            let rootBefore = FileManager.default.contents(atPath: folder.rootPath)
            let rootKeyBefore = FileManager.default.contents(atPath: folder.rootKeyPath)
            try FileManager.default.removeItem(atPath: folder.leafKeyPath)
            guard case .present(let loaded) = folder.load() else { Issue.record("not present"); return }
            #expect(loaded.leafKeyRemade == LeafKeyRemade(path: folder.leafKeyPath, problem: .missing, setAside: nil, keyType: .ecdsaP256, notSaved: nil))
            #expect(loaded.root.der == ca.root.der)
            #expect(FileModes.permissions(of: folder.leafKeyPath) == 0o600)
            #expect(try PrivateKey.fromPEM(Array(FileManager.default.contents(atPath: folder.leafKeyPath)!)).pkcs8PEM() == loaded.leafKey.pkcs8PEM())
            #expect(FileManager.default.contents(atPath: folder.rootPath) == rootBefore)
            #expect(FileManager.default.contents(atPath: folder.rootKeyPath) == rootKeyBefore)
            #expect(try names(folder) == ["leaf-key.pem", "profile-identity.json", "root-key.pem", "root.pem"])
            // Once: the next read finds it and says nothing.
            guard case .present(let again) = folder.load() else { Issue.record("not present"); return }
            #expect(again.leafKeyRemade == nil)
            #expect(try again.leafKey.pkcs8PEM() == loaded.leafKey.pkcs8PEM())
        }
    }

    @Test("an unreadable leaf key is moved aside, never overwritten, and made again")
    func damaged() throws {
        try withCA { folder, _ in
            try Data("garbage\n".utf8).write(to: URL(fileURLWithPath: folder.leafKeyPath))
            guard case .present(let loaded) = folder.load() else { Issue.record("not present"); return }
            let remade = try #require(loaded.leafKeyRemade)
            #expect(remade.problem == .unusable("cannot be parsed as a PEM private key"))
            let aside = try #require(remade.setAside)
            #expect(aside.hasPrefix(folder.leafKeyPath + ".unusable-"))
            #expect(FileManager.default.contents(atPath: aside) == Data("garbage\n".utf8))
            #expect(remade.sentence.hasPrefix("The leaf key \(folder.leafKeyPath) cannot be parsed as a PEM private key; tv moved it to \(aside) and made a new one (ECDSA P-256)."))
            #expect(try PrivateKey.fromPEM(Array(FileManager.default.contents(atPath: folder.leafKeyPath)!)).type == .ecdsaP256)
        }
    }

    @Test("a leaf key others can read is replaced, keeping its type (an RSA 2048 key stays RSA 2048)")
    func exposedKeepsType() throws {
        try withCA { folder, _ in
            let rsa = try pooledKey(.rsa2048)
            try Data(try rsa.pkcs8PEM()).write(to: URL(fileURLWithPath: folder.leafKeyPath))
            chmod(folder.leafKeyPath, 0o640)
            guard case .present(let loaded) = folder.load() else { Issue.record("not present"); return }
            #expect(loaded.leafKeyRemade?.problem == .unusable("can be read by other users (mode 0640)"))
            #expect(loaded.leafKeyRemade?.keyType == .rsa2048)
            #expect(loaded.leafKeyType == .rsa2048)
            #expect(try loaded.leafKey.pkcs8PEM() != rsa.pkcs8PEM())
            #expect(FileModes.permissions(of: folder.leafKeyPath) == 0o600)
        }
    }

    @Test("a leaf key clients refuse (RSA 1024) is replaced with an ECDSA P-256 one")
    func weakKey() throws {
        try withCA { folder, _ in
            let weak = try PrivateKey.fromPEM(Array(try TestKeys.rsa1024PEM().utf8))
            try Data(try weak.pkcs8PEM()).write(to: URL(fileURLWithPath: folder.leafKeyPath))
            chmod(folder.leafKeyPath, 0o600)
            guard case .present(let loaded) = folder.load() else { Issue.record("not present"); return }
            #expect(loaded.leafKeyRemade?.problem == .unusable("holds a key tv cannot make leaves with (RSA 1024)"))
            #expect(loaded.leafKeyType == .ecdsaP256)
        }
    }

    @Test("a leaf key another user owns is replaced: that user could know it", .enabled(if: geteuid() == 0))
    func ownedByAnotherUser() throws {
        try withCA { folder, _ in
            chown(folder.leafKeyPath, 65534, 65534)
            guard case .present(let loaded) = folder.load() else { Issue.record("not present"); return }
            #expect(loaded.leafKeyRemade?.problem == .unusable("belongs to nobody, not to you (root), so the user nobody could know the key"))
            var st = stat()
            #expect(lstat(folder.leafKeyPath, &st) == 0 && st.st_uid == 0)
        }
    }

    @Test("without remaking, nothing is written or said: a key in memory stands in")
    func notRemaking() throws {
        try withCA { folder, _ in
            try FileManager.default.removeItem(atPath: folder.leafKeyPath)
            guard case .present(let loaded) = folder.load(remakingLeafKey: false) else { Issue.record("not present"); return }
            #expect(loaded.leafKeyRemade == nil)
            #expect(!FileManager.default.fileExists(atPath: folder.leafKeyPath))
            // create still refuses: the root is there.
            #expect(throws: CAError.alreadyExists(directory: folder.directory)) { try folder.create(now: currentTime()) }
            #expect(!FileManager.default.fileExists(atPath: folder.leafKeyPath))
        }
    }
}

/// Keys the tests need that tv never makes.
enum TestKeys {
    /// An RSA 1024 key, made with openssl(1).
    static func rsa1024PEM() throws -> String {
        let tmp = TemporaryFolder()
        defer { tmp.remove() }
        let made = Child.run("/usr/bin/openssl", ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024", "-out", tmp.path + "/k.pem"],
                             environment: ["PATH": "/usr/bin:/bin"], directory: tmp.path, stdin: Data(), timeout: 30)
        try #require(made.status == 0, "openssl genpkey failed")
        return String(decoding: FileManager.default.contents(atPath: tmp.path + "/k.pem") ?? Data(), as: UTF8.self)
    }
}
