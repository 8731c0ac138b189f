import Foundation
import Testing

/// `tv settings show|get|set` through the built binary: validation, refusals and saving.
@Suite("CLI: tv settings", .serialized)
struct SettingsCLITests {
    @Test("content settings are validated, saved and read back; content.keep needs inspection on")
    func contentSettings() throws {
        try withSandbox { s in
            let shown = try s.tv("settings")
            #expect(shown.status == 0)
            // Columns are as wide as the longest key and value, so the test reads the words.
            #expect(shown.out.split(separator: "\n").contains { $0.split(separator: " ").prefix(3) == ["content.expiry", "1d", "default"] }, "\(shown)")
            let expiry = try s.tv("settings", "set", "content.expiry", "1w")
            #expect(expiry.status == 0, "\(expiry)")
            #expect(expiry.out == "Saved content.expiry = 1w (was 1d).\n")
            #expect(try s.tv("settings", "get", "content.expiry").out == "1w\n")
            let bad = try s.tv("settings", "set", "content.expiry", "forever")
            #expect(bad.status != 0)
            #expect(try s.tv("settings", "get", "content.expiry").out == "1w\n")
            // The default in another spelling: saved, but nothing in force changed (a trial read
            // "Saved content.flowBudget = 1048576 (was 1048576)").
            let same = try s.tv("settings", "set", "content.flowBudget", "1MB")
            #expect(same.status == 0 && same.out == "Saved content.flowBudget = 1048576, its default, now set explicitly; nothing in force changed.\n", "\(same)")
            let budget = try s.tv("settings", "set", "content.flowBudget", "2048")
            #expect(budget.status == 0, "\(budget)")
            #expect(try s.tv("settings", "get", "content.flowBudget").out == "2048\n")
            let keep = try s.tv("settings", "set", "content.keep", "on")
            #expect(keep.status == 1)
            #expect(keep.err.contains("needs inspection on"))
            #expect(try s.tv("settings", "get", "content.keep").out == "off\n")
            let inspection = try s.tv("settings", "set", "inspection.enabled", "on")
            #expect(inspection.status == 2)
            #expect(inspection.err == "tv: Inspection is turned on and off with `tv inspect on` / `tv inspect off`, which check trust first.\n")
            // Every setting `tv settings` lists can be set (log.requests was listed and refused once).
            let log = try s.tv("settings", "set", "log.requests", "on")
            #expect(log.status == 0, "\(log)")
            #expect(log.out.hasPrefix("Saved log.requests = on (was off).\n"), "\(log)")
            #expect(try s.tv("settings", "get", "log.requests").out == "on\n")
            #expect(try s.tv("settings", "set", "log.requests", "loud").err == "tv: log.requests takes on or off, not 'loud'.\n")
            let unknown = try s.tv("settings", "get", "nope")
            #expect(unknown.status == 2)
            // A value that is not one exits 2, whichever setting (content's exited 1: a trial).
            for (key, value) in [("content.expiry", "abc"), ("content.flowBudget", "abc"), ("capture.snaplen", "abc"), ("history.maxAge", "abc"),
                                 ("trust.store", "bogus"), ("trust.store", "file:/nonexistent-folder/b.pem"), ("tls.clientCerts", "notjson")] {
                #expect(try s.tv("settings", "set", key, value).status == 2, "\(key)")
            }
            // store.url: checked as it is saved (a trial found it could never be set).
            let store = try s.tv("settings", "set", "store.url", "postgresql://tv@db.test/history")
            #expect(store.status == 0 && store.out.hasPrefix("Saved store.url = postgresql://tv@db.test/history (was '').\n"), "\(store)")
            let password = try s.tv("settings", "set", "store.url", "postgresql://tv:secret@db.test/history")
            #expect(password.status == 2 && password.err.hasPrefix("tv: The store URL postgresql://tv:***@db.test/history cannot be used: it holds a password"), "\(password)")
            #expect(try s.tv("settings", "get", "store.url").out == "postgresql://tv@db.test/history\n")
            #expect(try s.tv("settings", "set", "store.url", "").out.hasPrefix("Saved store.url = '' (was postgresql://tv@db.test/history).\n"))
            // A password put in the settings file by hand is never printed back.
            let file = s.dataDir + "/settings.json"
            var values = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any])
            values["store.url"] = "postgresql://tv:Hunter2@db.test/h"
            try JSONSerialization.data(withJSONObject: values).write(to: URL(fileURLWithPath: file))
            #expect(try s.tv("settings", "get", "store.url").out == "postgresql://tv:***@db.test/h\n")
            for arguments in [["settings", "show"], ["settings", "show", "--json"], ["settings", "show", "--json", "--meanings"]] {
                let shown = try s.tvArgs(arguments)
                #expect(shown.status == 0 && shown.out.contains("postgresql://tv:***@db.test/h") && !shown.out.contains("Hunter2"), "\(arguments)")
            }
            // An empty --store names no server (libpq read it as localhost:5432).
            let empty = try s.tvArgs(["store", "instances", "--store", ""])
            #expect(empty.status == 2 && empty.err == "tv: --store takes a postgresql://HOST[:PORT]/DATABASE URL; it was empty.\n", "\(empty)")
            let replaced = try s.tv("settings", "set", "store.url", "")
            #expect(replaced.out.hasPrefix("Saved store.url = '' (was postgresql://tv:***@db.test/h).\n") && !replaced.all.contains("Hunter2"), "\(replaced)")
            let json = try s.tv("settings", "show", "--json")
            let parsed = try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any]
            #expect(parsed?["content.expiry"] as? String == "1w")
            #expect(parsed?["content.flowBudget"] as? Int == 2048)
            #expect(parsed?["inspection.enabled"] as? Bool == false)
        }
    }
}
