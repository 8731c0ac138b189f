import Foundation
import LocalCA
import Testing

/// Issue 12 §9: inspection asked for and not happening is never silent. With inspection saved on
/// (`tv setup` against a file: trust store) and the CA then in doubt, `tv run --quiet` runs,
/// passes TLS through, and says why.
@Suite("tv run: inspection saved on, CA in doubt (issue 12 §9)", .serialized)
struct InspectionDoubtRunTests {
    @Test("tv run --quiet says the CA is in doubt and that TLS passes through; status says inspection off")
    func savedInspectionWithACAInDoubt() throws {
        let world = try RunWorld(createCA: false)
        let box = world.sandbox
        let bundle = try box.write("bundle.pem", "")
        let setup = try box.tv("setup", "--trust-store", "file:" + bundle, "--yes")
        #expect(setup.status == 0, "\(setup)")
        try Data("not a key\n".utf8).write(to: URL(fileURLWithPath: box.caDir + "/root-key.pem"))
        let tv = try world.run("--quiet")
        #expect(tv.log() == "tv: Inspection is on in the settings, but the CA is in doubt (\(box.caDir)/root-key.pem cannot be parsed as a PEM private key), so this session passes TLS through without inspecting it; repair or restore that file (`tv ca status` says more).\n", "\(tv.log())")
        #expect(try box.status()?.string("inspection") == "off")
        // Passed through: the client sees the origin's own certificate.
        let r = try box.curl(["-x", tv.proxyURL, "--cacert", world.pki.upstreamCA, world.url("/index.html")])
        #expect(r.out == "hello from nginx\n", "\(r)")
        #expect(try box.closedFlows(1).first?.string("status") == "encrypted")
        try tv.stop()
    }

    @Test("an expired root: tv ca status says it cannot sign and what to do (exit 1), tv ca issue and tv run --inspect refuse; nothing is minted from it")
    func expiredRoot() throws {
        let world = try RunWorld()
        let box = world.sandbox
        // The data folder's own CA, its root replaced by one made 3,660 days ago (ten years,
        // backdated two days: it ended 8 days ago) with the same key.
        let folder = CAFolder(directory: box.caDir)
        let key = try PrivateKey.fromPEM(Array(FileManager.default.contents(atPath: folder.rootKeyPath) ?? Data()))
        let old = try CertificateAuthority.makeRoot(key: key, now: Int64(Date().timeIntervalSince1970) - 3_660 * 86_400)
        try Data(old.pem).write(to: URL(fileURLWithPath: folder.rootPath))
        let ended = Timestamp.utc(old.notAfter)
        let status = try box.tv("ca", "status")
        #expect(status.status == 1, "\(status)")
        #expect(status.out.contains("(EXPIRED)"), "\(status)")
        #expect(status.out.contains("  The CA cannot sign: its root expired on \(ended). Every certificate it made would be refused, so nothing can be inspected with it.\n"), "\(status)")
        #expect(status.out.contains("  Next: Make a new one with `tv ca remake` (devices that trusted the old root must be given the new one). (`tv ca remake`)\n"), "\(status)")
        let issued = try box.tv("ca", "issue", "a.test")
        #expect(issued.status == 1)
        #expect(issued.err == "tv: The CA cannot sign: its root expired on \(ended); make a new one with `tv ca remake` (devices that trusted the old root must be given the new one).\n", "\(issued)")
        #expect(!FileManager.default.fileExists(atPath: box.work + "/a.test.pem"))
        let run = try box.tv("run", "--inspect", "--listen", "127.0.0.1:\(freeLoopbackPort())")
        #expect(run.status == 1, "\(run)")
        #expect(run.err.hasSuffix("tv: --inspect asks to inspect this session, but the CA cannot sign: its root expired on \(ended); make a new one with `tv ca remake` (devices that trusted the old root must be given the new one), or run without --inspect.\n"), "\(run)")
    }
}
