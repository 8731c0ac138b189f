import Foundation
import Testing

/// The Debian package `Scripts/test` built before the suite (`TV_TEST_PACKAGE_DEB`, a path), or
/// nil when the suite runs without it (`swift test` alone, or `TV_TEST_PACKAGE=0 Scripts/test`).
enum BuiltPackage {
    static let path: String? = ProcessInfo.processInfo.environment["TV_TEST_PACKAGE_DEB"].flatMap { $0.isEmpty ? nil : $0 }

    /// The .deb, which must exist when Scripts/test named it: a failed or lost build fails the
    /// test instead of skipping it.
    static func require(sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let deb = try #require(path, sourceLocation: sourceLocation)
        try #require(FileManager.default.fileExists(atPath: deb),
                     "Scripts/test built the Debian package at \(deb), but it is not there; Scripts/package's output before the suite says why.",
                     sourceLocation: sourceLocation)
        return deb
    }
}

/// `Scripts/package` (issue 22): the .deb built from a static-stdlib release tv installs with
/// `apt-get install` on Debian 12 and runs with no Swift toolchain. `Scripts/test` builds the .deb
/// before the suite (a release build of a few minutes, never beside the suite) and names it in
/// TV_TEST_PACKAGE_DEB. Root only: the install goes into a mount namespace's throwaway overlay of
/// `/`, so the machine itself is not changed.
@Suite("CLI: Scripts/package (issue 22)", .serialized,
       .enabled(if: BuiltPackage.path != nil, "no .deb to test: Scripts/test builds one first (or set TV_TEST_PACKAGE_DEB=$(Scripts/package))"),
       .enabled(if: getuid() == 0, "needs root for a mount namespace"))
struct PackageCLITests {
    @Test("the .deb: control and Depends, its files, no Swift library in ldd, and its unit passes systemd-analyze verify")
    func debContents() throws {
        let deb = try BuiltPackage.require()
        try withSandbox { s in
            #expect(deb.hasSuffix("_amd64.deb") && (deb as NSString).lastPathComponent.hasPrefix("tv_"), "\(deb)")
            let info = try s.tool("dpkg-deb", ["--info", deb]).out
            #expect(info.contains("\n Package: tv\n") && info.contains("\n Architecture: amd64\n"), "\(info)")
            let depends = info.split(separator: "\n").first { $0.hasPrefix(" Depends: ") }.map(String.init) ?? ""
            // libpq5 and libmicrohttpd12 are opened on first use, not linked: still Depends.
            for library in ["libssl3", "libsqlite3-0", "libnghttp2-14", "zlib1g", "libbrotli1", "libzstd1", "libidn2-0", "libc6", "libpq5", "libmicrohttpd12"] {
                #expect(depends.contains(library), "\(depends)")
            }
            #expect(!depends.contains("swift"), "\(depends)")
            let contents = try s.tool("dpkg-deb", ["--contents", deb]).out
            for path in ["./usr/bin/tv", "./usr/share/man/man1/tv.1.gz", "./usr/share/man/man1/tv-run.1.gz", "./usr/share/man/man1/tv-service.1.gz",
                         "./usr/share/bash-completion/completions/tv", "./usr/share/zsh/vendor-completions/_tv",
                         "./usr/share/fish/vendor_completions.d/tv.fish", "./lib/systemd/system/tv.service",
                         "./usr/share/doc/tv/README.md.gz", "./usr/share/doc/tv/CA.md.gz", "./usr/share/doc/tv/copyright"] {
                #expect(contents.contains(" \(path)\n"), "\(path) in\n\(contents)")
            }

            let root = s.root + "/unpacked"
            try #require(try s.tool("dpkg", ["-x", deb, root]).status == 0)
            let ldd = try s.tool("ldd", [root + "/usr/bin/tv"]).out
            #expect(!ldd.contains("libswift") && !ldd.contains("libFoundation") && !ldd.contains("libdispatch") && !ldd.contains("not found"), "\(ldd)")
            #expect(!ldd.contains("libpq") && !ldd.contains("libmicrohttpd") && !ldd.contains("libgnutls"), "\(ldd)")
            // The packaged unit, its ExecStart pointed at the unpacked tv and man looking in the
            // unpacked pages (verify runs `man` for each Documentation= page).
            let unit = s.text(root + "/lib/systemd/system/tv.service")
            #expect(unit.contains("\nExecStart=/usr/bin/tv --data-dir /var/lib/tunnelvision run --quiet\n"), "\(unit)")
            try FileManager.default.createDirectory(atPath: s.root + "/unit", withIntermediateDirectories: true)
            try Data(unit.replacingOccurrences(of: "ExecStart=/usr/bin/tv ", with: "ExecStart=\(root)/usr/bin/tv ").utf8)
                .write(to: URL(fileURLWithPath: s.root + "/unit/tv.service"))
            let verify = try Run.process("systemd-analyze", ["verify", s.root + "/unit/tv.service"], in: s.work,
                                         environment: s.environment.merging(["MANPATH": root + "/usr/share/man"]) { $1 }, timeout: 60)
            #expect(verify.status == 0 && !verify.all.contains("tv.service"), "\(verify)")
        }
    }

    /// A real `apt-get install ./tv_….deb` into this machine's root seen through an overlay whose
    /// writable layer is a tmpfs in a private mount namespace (gone when the namespace ends), with
    /// /opt/swift an empty tmpfs: dpkg records it installed, `tv` on PATH is /usr/bin/tv, it runs
    /// `--version`, inspects one curl request to an openssl s_server on 127.0.0.1 and lists the
    /// flow, and `apt-get remove` takes it away again.
    @Test("apt-get install of the .deb into a throwaway overlay root with /opt/swift hidden: --version, one inspected curl request, apt-get remove",
          .timeLimit(.minutes(8)))
    func aptInstallsAndRuns() throws {
        let deb = try BuiltPackage.require()
        try withSandbox { s in
            let hostBefore = try s.tool("dpkg-query", ["-W", "-f=${Status}", "tv"])
            let name = (deb as NSString).lastPathComponent
            let serverPort = freeLoopbackPort(), proxyPort = freeLoopbackPort()
            // Runs chrooted in the overlay; stdout carries only the lines the test compares, the
            // tools' chatter goes to stderr (shown when the test fails).
            let chrooted = try s.write("chrooted.sh", """
                set -eu
                cd /tmp
                apt-get install -y -q --no-install-recommends /tmp/\(name) >&2
                dpkg-query -W -f='${Status}\\n' tv
                command -v tv
                if command -v swift >&2; then echo "swift is on PATH"; fi
                [ -z "$(ls -A /opt/swift)" ]
                tv --version
                data=/root/tv-data
                tv --data-dir "$data" ca create >/dev/null
                openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=localhost -addext subjectAltName=DNS:localhost \\
                    -keyout server.key -out server.pem -days 1 2>/dev/null
                openssl s_server -accept \(serverPort) -cert server.pem -key server.key -www -quiet >/dev/null 2>&1 &
                server=$!
                tv --data-dir "$data" run --quiet --inspect --upstream-insecure --listen 127.0.0.1:\(proxyPort) &
                run=$!
                for i in $(seq 200); do tv --data-dir "$data" status >/dev/null 2>&1 && break; sleep 0.1; done
                curl -sS -o /dev/null -w '%{http_code}\\n' -x http://127.0.0.1:\(proxyPort) --cacert "$data/ca/root.pem" https://localhost:\(serverPort)/
                tv --data-dir "$data" stop >/dev/null
                wait $run || true
                kill -9 $server
                tv --data-dir "$data" flows --json | python3 -c 'import json,sys; f=json.load(sys.stdin)["flows"]; print(len(f), f[0]["status"])'
                apt-get remove -y -q tv >&2
                dpkg-query -W -f='${Status}\\n' tv 2>/dev/null || echo "tv is not installed"
                [ ! -e /usr/bin/tv ] && echo "/usr/bin/tv removed"
                """)
            let namespace = try s.write("namespace.sh", """
                set -eu
                \(ScratchRoot.mountLines(folder: s.root + "/scratch", hideSwift: true))
                cp '\(deb)' '\(s.work)/chrooted.sh' "$r/tmp/"
                exec chroot "$r" /usr/bin/env -i \(ScratchRoot.environment) DEBIAN_FRONTEND=noninteractive bash /tmp/chrooted.sh
                """)
            // Its own PID namespace too: whatever the script leaves running ends with it.
            let result = try s.tool("unshare", ["--pid", "--fork", "--mount", "--propagation", "private", "bash", namespace], timeout: 420)
            #expect(result.status == 0, "\(result)")
            let version = try s.tvArgs(["--version"], dataDir: false).out
            #expect(result.out == "install ok installed\n/usr/bin/tv\n" + version + "200\n1 inspected\n"
                        + "tv is not installed\n/usr/bin/tv removed\n", "\(result)")
            // The machine itself never saw it: dpkg's own record of tv is as it was.
            #expect(try s.tool("dpkg-query", ["-W", "-f=${Status}", "tv"]).all == hostBefore.all)
        }
    }
}
