import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// libpq and libmicrohttpd are opened when `--store` / `tv web` first need them (issue 21's
/// memory at rest), not linked: the built `tv` does not name them, and a machine without them
/// runs everything else and says which package a command that needs one lacks.
@Suite("CLI: libraries opened on first use (issue 21)")
struct LazyLibraryCLITests {
    @Test("readelf -d of the built tv: libssl.so.3 is NEEDED, libpq.so.5 and libmicrohttpd.so.12 are not")
    func notLinked() throws {
        let tv = try TVBinary.require()
        let dynamic = try Run.process("readelf", ["-d", tv], in: NSTemporaryDirectory(), environment: ProcessInfo.processInfo.environment, timeout: 20)
        try #require(dynamic.status == 0, "\(dynamic)")
        let needed = dynamic.out.split(separator: "\n").filter { $0.contains("(NEEDED)") }.map(String.init)
        #expect(needed.contains { $0.contains("[libssl.so.3]") }, "\(needed)")
        #expect(!needed.contains { $0.contains("libpq") || $0.contains("libmicrohttpd") }, "\(needed)")
    }

    /// Each command runs in a private mount namespace where the library's file is /dev/null
    /// (dlopen: "file too short"), so the machine's own copy stays untouched.
    @Test("without the library: tv web and tv flows --store each say which Debian package to install, exit 1; tv itself still starts",
          .enabled(if: getuid() == 0, "needs root for a mount namespace"),
          arguments: [("libmicrohttpd.so.12", ["web", "--listen", "127.0.0.1:0"], "tv web needs libmicrohttpd12, which could not be opened (", "libmicrohttpd12"),
                      ("libpq.so.5", ["flows", "--store", "postgresql://127.0.0.1:1/tv"], "The shared store needs libpq5, which could not be opened (", "libpq5")])
    func missingLibrary(soname: String, arguments: [String], opening: String, package: String) throws {
        let tv = try TVBinary.require()
        try withSandbox { s in
            let lookup = try s.tool("ldconfig", ["-p"])
            let path = try #require(lookup.out.split(separator: "\n").first { $0.hasPrefix("\t\(soname) ") && $0.contains("x86-64") }?
                .components(separatedBy: " => ").last, "\(soname) in \(lookup.out)")
            let real = (path as NSString).resolvingSymlinksInPath
            let script = "mount --bind /dev/null \"$1\" && shift && exec \"$@\""
            let run = try s.tool("unshare", ["--mount", "--propagation", "private", "sh", "-c", script, "sh", real, tv, "--data-dir", s.dataDir] + arguments)
            #expect(run.status == 1, "\(run)")
            // `tv web` says its start-up errors bare, other commands after "tv: ".
            let err = run.err.trimmingCharacters(in: .whitespacesAndNewlines)
            let said = err.hasPrefix("tv: ") ? String(err.dropFirst(4)) : err
            #expect(said.hasPrefix(opening) && said.contains(soname) && said.hasSuffix("); install it with apt-get install \(package) and try again."), "\(said)")
            #expect(!said.contains("\n"), "one sentence: \(said)")
            // tv itself starts without it (a linked library would stop ld.so before main).
            let plain = try s.tool("unshare", ["--mount", "--propagation", "private", "sh", "-c", script, "sh", real, tv, "--version"])
            #expect(plain.status == 0 && plain.out.hasPrefix("tv "), "\(plain)")
        }
    }
}
