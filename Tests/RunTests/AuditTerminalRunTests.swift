import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 23 where a person watches: the run banner's strip, a marker in `tv top` at its time,
/// `tv audit bundle` and `tv audit delete` saying what they do and asking on a real
/// pseudo-terminal (Python's pty) before doing it, and a bundle whose disk fills halfway leaving
/// no file behind. Through the real `tv` binary with curl to the test nginx.
@Suite("tv audit on a terminal: banner strip, markers in tv top, bundle and delete ask first, a failed bundle leaves nothing (issue 23)", .serialized)
struct AuditTerminalRunTests {
    /// `tv --data-dir <box> ARGS…` on a pseudo-terminal, `answer` typed at its question.
    func ask(_ box: Sandbox, _ arguments: [String], answer: String, watch: String,
             sourceLocation: SourceLocation = #_sourceLocation) throws -> PseudoTerminal.Shown {
        try PseudoTerminal.run(try TVBinary.require(), ["--data-dir", box.dataDir] + arguments, answer: answer, watch: watch,
                               in: box.work, environment: box.environment, sourceLocation: sourceLocation)
    }

    @Test("tv run --audit: the banner's strip; tv top --once places the marker between the flows around it and --json names it; bundle and delete on a terminal tell, ask, and do nothing on n")
    func onATerminal() throws {
        let world = try RunWorld()
        let box = world.sandbox
        #expect(try box.tv("audit", "project", "new", "app").status == 0)
        let tv = try world.run("--inspect", "--keep-content", "--audit", "app")

        // The banner shows the recording session as a strip, one line of its own.
        let strips = tv.log().split(separator: "\n").map(String.init).filter { $0.contains("● Audit") }
        let span = strips.first.map { $0.dropFirst("  ● Audit: project 'app', session 1, recording for ".count) } ?? ""
        #expect(strips.count == 1 && strips[0].hasPrefix("  ● Audit: project 'app', session 1, recording for ")
                && span.range(of: #"^[0-9.]+ (µs|ms|s)$"#, options: .regularExpression) != nil, "\(tv.log())")

        // A flow, the marker, a flow: tv top shows the marker between them.
        #expect(try world.curlThrough(tv, ["--http1.1", world.url("/index.html?before")]).out == "hello from nginx\n")
        let first = try #require(try box.closedFlows(1).first?.int("id"))
        #expect(try box.tv("audit", "mark", "login screen").status == 0)
        #expect(try world.curlThrough(tv, ["--http1.1", world.url("/index.html?after")]).out == "hello from nginx\n")
        let second = try #require(try box.closedFlows(2).compactMap { $0.int("id") }.max())
        let top = try box.tv("top", "--once")
        let lines = top.out.split(separator: "\n").map(String.init)
        let row = { (id: Int) in lines.firstIndex { $0.hasPrefix("  \(id) ") } ?? -1 }
        let marker = lines.firstIndex { $0.hasPrefix("  ── ") && $0.hasSuffix(" UTC  marker: login screen (session 1)") } ?? -1
        #expect(top.status == 0 && row(second) >= 0 && row(second) + 1 == marker && marker + 1 == row(first), "\(top)")
        #expect(lines.contains { $0.hasPrefix("  ● Audit: project 'app', session 1, recording for ") && $0.hasSuffix(", 1 marker") }, "\(top)")
        let json = try box.json("top", "--once")
        let markers = json["markers"] as? [JSON] ?? []
        #expect(markers.count == 1 && markers.first?.string("text") == "login screen" && markers.first?.int("session") == 1, "\(json)")
        #expect(json.string("audit")?.hasPrefix("● Audit: project 'app', session 1, recording for ") == true, "\(json)")
        _ = try tv.stop()

        // tv audit bundle says what is inside before anything is written; n writes nothing.
        let file = box.work + "/evidence.tar.gz"
        let no = try ask(box, ["audit", "bundle", "1", "-o", file], answer: "n", watch: file)
        let told = no.before ?? ""
        // The files counted as `tv audit verify` counts them, the manifest named apart (a trial read 95 here and 94 there).
        #expect(told.contains(" files and their manifest, "), "\(told)")
        #expect(told.contains("The bundle of session 1 (project 'app') will hold:\n  2 flows, ") && told.contains(" before compression\n")
                && told.contains("\n  decrypted content: included (2 flows with kept content;")
                && told.contains("\n  TLS keys: included (") && told.contains("\n  to \(file) (0600)\nWrite it? [y/N] "), "\(no)")
        #expect(no.existed == false && no.status == 1 && no.after == "n\nNothing was written.\n", "\(no)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: box.work).filter { $0.contains("evidence") } == [], "not even a temporary file")
        let bare = try ask(box, ["audit", "bundle", "1", "-o", file, "--no-content", "--no-keys"], answer: "", watch: file)
        #expect((bare.before ?? "").contains("\n  decrypted content: left out (--no-content)\n  TLS keys: left out (--no-keys)\n")
                && bare.status == 1 && !FileManager.default.fileExists(atPath: file), "\(bare)")
        let yes = try ask(box, ["audit", "bundle", "1", "-o", file], answer: "y", watch: file)
        #expect(yes.existed == false && yes.status == 0 && yes.after.hasPrefix("y\nWrote the evidence bundle of session 1 to \(file): 2 flows, "), "\(yes)")
        let verify = try box.tv("audit", "verify", file)
        #expect(verify.status == 0 && verify.out.contains("is intact"), "\(verify)")

        // tv audit delete says what it takes with it and asks; n keeps the session, y deletes it.
        let keep = try ask(box, ["audit", "delete", "1"], answer: "n", watch: file)
        #expect((keep.before ?? "").hasPrefix("Deleting session 1 of project 'app' removes its record, its 1 marker and its TLS key log (both legs' secrets), and its 2 flows, ")
                && (keep.before ?? "").hasSuffix(" kept turns stop being evidence: retention may delete them from then on.\nDelete it? [y/N] "), "\(keep)")
        #expect(keep.status == 1 && keep.after == "n\nNothing was deleted.\n", "\(keep)")
        let kept = try JSONSerialization.jsonObject(with: try box.tv("audit", "sessions", "--json").stdout) as? [JSON] ?? []
        #expect(kept.count == 1 && kept.first?.int("id") == 1, "\(kept)")
        #expect(try box.tv("audit", "show", "1").out.contains("login screen"))
        let gone = try ask(box, ["audit", "delete", "1"], answer: "y", watch: file)
        #expect(gone.status == 0 && gone.after == "y\nDeleted session 1 and 1 marker; 2 flows are no longer evidence.\n", "\(gone)")
        #expect(try box.tv("audit", "sessions", "--json").out.trimmingCharacters(in: .whitespacesAndNewlines) == "[]")
    }

    @Test("tv audit bundle -o onto a 64 KiB tmpfs that fills during the write: the failure in one sentence and no file, whole or temporary, left",
          .enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
    func diskFillsHalfway() throws {
        let world = try RunWorld()
        let box = world.sandbox
        // 600 KiB of random bytes, kept as content: the bundle cannot compress below the tmpfs.
        let body = (0..<600 * 1024).map { _ in UInt8.random(in: 0...255) }
        try Data(body).write(to: URL(fileURLWithPath: world.www + "/big.bin"))
        #expect(try box.tv("audit", "project", "new", "app").status == 0)
        let tv = try world.run("--inspect", "--keep-content", "--audit", "app")
        let got = try world.curlThrough(tv, ["--http1.1", "-o", "/dev/null", "-w", "%{size_download}", world.url("/big.bin")])
        #expect(got.out == "\(600 * 1024)", "\(got)")
        _ = try box.closedFlows(1)
        _ = try tv.stop()

        // Whole, on the ordinary disk, it is over twice the tmpfs (the kept body is cut at the
        // content limit, yet random): the temporary file takes the writer's first 64 KiB flush,
        // and the next finds the disk full.
        let whole = try box.tv("audit", "bundle", "1", "-o", "whole.tar.gz", "--yes")
        let size = (try? FileManager.default.attributesOfItem(atPath: box.work + "/whole.tar.gz")[.size] as? Int) ?? 0
        #expect(whole.status == 0 && size > 128 * 1024, "\(whole) \(size) bytes")

        let small = box.work + "/small"
        try FileManager.default.createDirectory(atPath: small, withIntermediateDirectories: false)
        let mount = Shell.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", small])
        try #require(mount.status == 0, "\(mount.out)\(mount.err)")
        defer { Shell.run(["umount", "-l", small]) }
        let failed = try box.tv("audit", "bundle", "1", "-o", "small/evidence.tar.gz", "--yes")
        #expect(failed.status == 1, "\(failed)")
        #expect(failed.err == "tv: Could not write small/evidence.tar.gz (No space left on device); check the folder's permissions and free space, then try again.\n", "\(failed)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: small) == [], "the half-written file is deleted")
        let free = Shell.run(["df", "--output=used", "-B1", small]).out.split(separator: "\n").last?.trimmingCharacters(in: .whitespaces)
        #expect(free == "0", "the tmpfs holds nothing: \(free ?? "?")")
    }
}
