import Foundation
import Testing

/// `tv ca trust --apply` and `tv ca remove --apply` on Debian's own system store, for real, in a
/// throwaway overlay of `/` (`ScratchRoot`, a private mount namespace: the machine's stores are not
/// touched). Debian's update-ca-certificates hands what it adds to its hooks, so Java's cacerts
/// (ca-certificates-java) gains the root; it hands them nothing when a file of
/// /usr/local/share/ca-certificates is deleted, so without tv's own line to the hooks Java kept
/// trusting a removed root (a re-check). Root only; keytool from default-jdk-headless
/// (Scripts/packages.sh).
@Suite("CLI: the Debian system store and Java's cacerts", .serialized,
       .enabled(if: getuid() == 0, "needs root for a mount namespace"))
struct DebianTrustCLITests {
    @Test("apply puts the root in the system bundle and Java's cacerts; remove --apply takes it out of both",
          .timeLimit(.minutes(4)))
    func applyThenRemoveReachesJava() throws {
        let tv = try TVBinary.require()
        try #require(FileManager.default.isExecutableFile(atPath: "/etc/ca-certificates/update.d/jks-keystore"),
                     "ca-certificates-java's hook is missing: install default-jdk-headless (Scripts/packages.sh)")
        try withSandbox { s in
            // Chrooted in the overlay; stdout carries only the lines compared, the tools' chatter
            // goes to stderr (shown when the test fails).
            let chrooted = try s.write("chrooted.sh", Self.prologue + """
                ./tv --data-dir "$data" ca trust --apply --yes --platform debian >&2
                name=$(ls /usr/local/share/ca-certificates | grep '^tunnelvision-')
                alias="debian:${name%.crt}.pem"
                trusted() {
                    if openssl verify -CAfile /etc/ssl/certs/ca-certificates.crt /tmp/root-copy.pem >/dev/null 2>&1
                    then echo "system bundle: trusted"; else echo "system bundle: not trusted"; fi
                    if keytool -list -cacerts -storepass changeit -alias "$alias" >/dev/null 2>&1
                    then echo "java: trusted"; else echo "java: not trusted"; fi
                }
                trusted
                ./tv --data-dir "$data" ca remove --apply --yes --platform debian >&2
                trusted
                [ -e "/etc/ssl/certs/${name%.crt}.pem" ] && echo "link left in /etc/ssl/certs" || true
                """)
            let result = try Self.runChrooted(s, tv: tv, script: chrooted)
            #expect(result.status == 0, "\(result)")
            #expect(result.out == "system bundle: trusted\njava: trusted\nsystem bundle: not trusted\njava: not trusted\n", "\(result)")
            #expect(result.err.contains("→ tell the hooks in /etc/ca-certificates/update.d (Java's cacerts) that /etc/ssl/certs/tunnelvision-"), "\(result)")
        }
    }

    @Test("a second copy of the root put in the system store by hand under another name: remove --apply says the root is still there, not that it took it out",
          .timeLimit(.minutes(4)))
    func aCopyByHandIsSaid() throws {
        let tv = try TVBinary.require()
        try withSandbox { s in
            let chrooted = try s.write("chrooted.sh", Self.prologue + """
                ./tv --data-dir "$data" ca trust --apply --yes --platform debian >/dev/null 2>&1
                cp /tmp/root-copy.pem /usr/local/share/ca-certificates/mine.crt
                update-ca-certificates >/dev/null 2>&1
                ./tv --data-dir "$data" ca remove --apply --yes --platform debian 2>&1 | grep -E '^(Took the root|tv: The root is still)' | sed 's/(its SHA-256 is [^)]*)/(SHA)/'
                openssl verify -CAfile /etc/ssl/certs/ca-certificates.crt /tmp/root-copy.pem >/dev/null 2>&1 && echo "system bundle: still trusted"
                """)
            let result = try Self.runChrooted(s, tv: tv, script: chrooted)
            #expect(result.status == 0, "\(result)")
            #expect(result.out == "tv: The root is still in the system trust store after the steps: another copy of it is there, under a name tv did not give it; find it (SHA) and take it out by hand.\nsystem bundle: still trusted\n", "\(result)")
        }
    }

    /// The start of each chrooted script: a CA in /root/tv-data, its root copied to /tmp/root-copy.pem.
    static let prologue = """
        set -eu
        cd /tmp
        data=/root/tv-data
        ./tv --data-dir "$data" ca create >/dev/null
        cp "$data/ca/root.pem" /tmp/root-copy.pem

        """

    /// Runs `script` (a file in the sandbox) with `tv` beside it, chrooted in a throwaway overlay
    /// of this machine's root in private mount and PID namespaces (`ScratchRoot`).
    static func runChrooted(_ s: Sandbox, tv: String, script: String) throws -> ProcessOutput {
        let namespace = try s.write("namespace.sh", """
            set -eu
            \(ScratchRoot.mountLines(folder: s.root + "/scratch", hideSwift: false))
            cp '\(tv)' '\(script)' "$r/tmp/"
            exec chroot "$r" /usr/bin/env -i \(ScratchRoot.environment) bash /tmp/chrooted.sh
            """)
        return try s.tool("unshare", ["--pid", "--fork", "--mount", "--propagation", "private", "bash", namespace], timeout: 200)
    }
}
