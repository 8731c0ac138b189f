import Foundation
import TVHome
import Testing
@testable import LocalCA

/// Why a CA key file may have been read by others, and its repair: exact values.
@Suite struct CAKeyExposureTests {
    static let root = FileOwner(id: 0, name: "root")

    @Test("a key readable by others is chmod-ed; a key that is a symbolic link is replaced by the file (chmod on a link changes nothing: a trial)")
    func exposure() {
        #expect(CAFolder.exposure("/h/ca/root-key.pem", FileFacts(kind: .regular, owner: Self.root, mode: 0o600)) == nil)
        #expect(CAFolder.exposure("/h/ca/root-key.pem", FileFacts(kind: .regular, owner: Self.root, mode: 0o644))
                == "can be read or written by other users (mode 0644); if nobody else could have copied it, `chmod 600 /h/ca/root-key.pem`")
        #expect(CAFolder.exposure("/h/ca/root-key.pem", FileFacts(kind: .symbolicLink, owner: Self.root, mode: 0o777))
                == "is a symbolic link, and tv keeps its keys as files of its own (0600); put the key file itself there (`cp --remove-destination \"$(readlink -f /h/ca/root-key.pem)\" /h/ca/root-key.pem`, then `chmod 600 /h/ca/root-key.pem`)")
    }

    @Test("a root key another user owns, mode 0600 or not: the CA folder's owner sentence (a trial's `chown nobody` key was used)")
    func anotherUsersKey() {
        let nobody = FileOwner(id: 65534, name: "nobody")
        #expect(CAFolder.exposure("/h/ca/root-key.pem", FileFacts(kind: .regular, owner: nobody, mode: 0o600), you: Self.root)
                == "belongs to nobody, not to you (root), so the user nobody could have replaced the CA")
        #expect(CAFolder.exposure("/h/ca/root-key.pem", FileFacts(kind: .regular, owner: nobody, mode: 0o644), you: Self.root)
                == "belongs to nobody, not to you (root), so the user nobody could have replaced the CA")
        #expect(CAFolder.exposure("/h/ca/root-key.pem", FileFacts(kind: .regular, owner: Self.root, mode: 0o600), you: nobody)
                == "belongs to root, not to you (nobody), so the user root could have replaced the CA")
    }

    @Test("tv run --ca FILE another user owns is refused by the same rule and sentence, before anything is made of it", .enabled(if: geteuid() == 0))
    func sessionCAOfAnotherUser() throws {
        let tmp = TemporaryFolder()
        defer { tmp.remove() }
        let key = try pooledKey(.ecdsaP256)
        let root = try CertificateAuthority.makeRoot(key: key, now: currentTime())
        let file = try tmp.write("ca.pem", try key.pkcs8PEM() + root.pem)
        chmod(file, 0o600)
        _ = try CertificateAuthority.fromCombinedPEM(path: file, now: currentTime())
        chown(file, 65534, 65534)
        #expect(throws: CAError.sessionCARefused(file: file, reason: "it holds the CA's private key and belongs to nobody, not to you (root), so the user nobody could have replaced the CA; use a file of your own")) {
            try CertificateAuthority.fromCombinedPEM(path: file, now: currentTime())
        }
        #expect(CAError.sessionCARefused(file: "/x/ca.pem", reason: "it holds the CA's private key and belongs to nobody, not to you (root), so the user nobody could have replaced the CA; use a file of your own").message
                == "/x/ca.pem cannot be this session's CA (--ca): it holds the CA's private key and belongs to nobody, not to you (root), so the user nobody could have replaced the CA; use a file of your own.")
    }
}
