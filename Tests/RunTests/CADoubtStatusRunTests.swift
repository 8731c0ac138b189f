import Foundation
import Testing

/// A data folder whose CA is in doubt, as `tv status --json` and `tv diag` tell it to a session
/// running beside it (they said "missing" and advised `tv inspect on`: a trial; then the JSON held
/// "ca" twice: a re-check).
@Suite("tv status and tv diag with the data folder's CA in doubt")
struct CADoubtStatusRunTests {
    @Test("ca is \"in doubt\" once in the JSON, with caDoubt; diag's verdict says it is in doubt and why")
    func inDoubt() throws {
        let world = try RunWorld()
        let box = world.sandbox
        try "garbage\n".write(toFile: box.caDir + "/root-key.pem", atomically: true, encoding: .utf8)
        let tv = try world.run()
        let status = try box.tvArgs(["status", "--json"])
        #expect(status.status == 0, "\(status)")
        #expect(status.out.components(separatedBy: "\"ca\"").count == 2, "\(status.out)")
        let json = try #require(try JSONSerialization.jsonObject(with: status.stdout) as? JSON)
        #expect(json.string("ca") == "in doubt", "\(json)")
        #expect(json.string("caDoubt")?.contains("root-key.pem cannot be parsed") == true, "\(json)")
        let diag = try box.tv("diag")
        #expect(diag.out.hasPrefix("Nothing can be inspected until the data folder's CA is fixed; the running session takes it at once then. The CA is in doubt: "), "\(diag.out)")
        try tv.stop()
    }
}
