import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `tv storage delete-everything` while a real `tv run --keep-content` runs (issue 19): the
/// session does the deletion, closing the content file it writes and emptying the history's
/// write-ahead log, so a query string a real curl sent is in no file of the data folder after.
@Suite("tv storage delete-everything during a live session", .serialized)
struct StorageRunTests {
    /// The files under `folder` whose bytes contain `needle`, relative to it, sorted.
    static func filesHolding(_ needle: String, in folder: String) -> [String] {
        let wanted = Data(needle.utf8)
        guard let walker = FileManager.default.enumerator(atPath: folder) else { return [] }
        var found: [String] = []
        while let name = walker.nextObject() as? String {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder + "/" + name, isDirectory: &isDirectory), !isDirectory.boolValue,
                  let bytes = FileManager.default.contents(atPath: folder + "/" + name) else { continue }
            if bytes.range(of: wanted) != nil { found.append(name) }
        }
        return found.sorted()
    }

    @Test("a query string curl sent through an inspecting, content-keeping session is in the data folder (content file, history); after delete-everything it is in no file, the message says so, and the session keeps recording")
    func deleteEverythingDuringASession() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect", "--keep-content")
        let secret = "tvsecret\(UInt64.random(in: 1_000_000_000...9_999_999_999))"
        let r = try world.curlThrough(tv, ["-sS", "--http1.1", "-o", "/dev/null", world.url("/index.html?token=" + secret)])
        #expect(r.status == 0, "\(r)")
        _ = try box.closedFlows(1)
        // tv flows asked the session to flush: the exchange row and the turns are written.
        let before = Self.filesHolding(secret, in: box.dataDir)
        #expect(before.contains { $0.hasPrefix("content/content-") }, "\(before)")
        #expect(before.contains { $0.hasPrefix("tunnelvision.sqlite3") }, "\(before)")

        let d = try box.tv("storage", "delete-everything", "--yes")
        #expect(d.status == 0, "\(d)")
        let lines = d.out.split(separator: "\n").map(String.init)
        try #require(lines.count == 2, "\(d)")
        #expect(lines[0].hasPrefix("Deleted 1 connection (with 1 exchange, 1 server certificate), 2 decrypted turns, 1 content segment ("), "\(d)")
        #expect(lines[1] == "The running session closed its open content file first, and the history's write-ahead log was emptied: nothing that was deleted is left in the data folder.", "\(d)")
        #expect(Self.filesHolding(secret, in: box.dataDir) == [], "the query string is still in the data folder")
        #expect(try box.json("flows")["flows"] as? [Any] != nil)

        // The session goes on recording, into a new content file.
        let again = try world.curlThrough(tv, ["-sS", "--http1.1", "-o", "/dev/null", world.url("/index.html?after=1")])
        #expect(again.status == 0, "\(again)")
        let rows = try box.closedFlows(1)
        #expect(rows.count == 1)
        let turns = try box.json("turns", String(try #require(rows.first?.int("id"))))
        #expect((turns["turns"] as? [Any])?.count == 2, "\(turns)")
        // Its loops forgot the certificates they had sent: the new flow's chain is stored again.
        let chain = try box.tool("python3", ["-c", """
            import sqlite3, sys
            db = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True)
            named = {f for (c,) in db.execute("SELECT chain FROM flows") for f in c.split()}
            stored = {s for (s,) in db.execute("SELECT sha256 FROM certificates")}
            print(len(named), named <= stored)
            """, box.dataDir + "/tunnelvision.sqlite3"])
        #expect(chain.out == "1 True\n", "\(chain)")
        _ = try tv.stop()
    }

    @Test("without a session: the deletion empties the write-ahead log, and says there was nothing when there was nothing")
    func deleteEverythingWithoutASession() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let empty = try box.tv("storage", "delete-everything", "--yes")
        #expect(empty.status == 0, "\(empty)")
        #expect(empty.out == "There was nothing to delete.\n", "\(empty)")
    }
}
