import Foundation
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
        try Data("not a key\n".utf8).write(to: URL(fileURLWithPath: box.caDir + "/leaf-key.pem"))
        let tv = try world.run("--quiet")
        #expect(tv.log() == "tv: Inspection is on in the settings, but the CA is in doubt (\(box.caDir)/leaf-key.pem cannot be parsed as a PEM private key), so this session passes TLS through without inspecting it; repair or restore that file (`tv ca status` says more).\n", "\(tv.log())")
        #expect(try box.status()?.string("inspection") == "off")
        // Passed through: the client sees the origin's own certificate.
        let r = try box.curl(["-x", tv.proxyURL, "--cacert", world.pki.upstreamCA, world.url("/index.html")])
        #expect(r.out == "hello from nginx\n", "\(r)")
        #expect(try box.closedFlows(1).first?.string("status") == "encrypted")
        try tv.stop()
    }
}
