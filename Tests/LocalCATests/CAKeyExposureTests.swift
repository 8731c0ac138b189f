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
}
