import FlowStore
import Foundation
import Synchronization
import Testing
@testable import TVCore

@Suite struct PinnedHostNoticeTests {
    @Test("the sentence names the host, the reason, what happens and the way back")
    func sentence() {
        #expect(PinnedHostNotice.sentence(host: "api.example.com", reason: "the client rejected tv's certificate (alert bad_certificate)")
                == "api.example.com is kept private from now on (the client rejected tv's certificate (alert bad_certificate)): "
                + "tv passes it through unread. If that client only lacked tv's root, give it the root, then `tv pinned forget api.example.com`.")
    }

    @Test("the pinning memory announces a host once, as normalized, and not again for the same host; forget then remember announces again")
    func announcesOnce() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tv-pinned-notice-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try FlowStore(path: dir + "/flows.sqlite")
        let heard = Mutex<[String]>([])
        let memory = try PersistentPinningMemory(store: store.pinnedHosts) { host, reason in
            heard.withLock { $0.append("\(host): \(reason)") }
        }
        memory.remember("Pinned.Example.", reason: "r1")
        memory.remember("pinned.example", reason: "r2")
        memory.remember("other.example", reason: "r3")
        #expect(heard.withLock { $0 } == ["pinned.example: r1", "other.example: r3"])
        memory.forget("pinned.example")
        memory.remember("pinned.example", reason: "r4")
        #expect(heard.withLock { $0 } == ["pinned.example: r1", "other.example: r3", "pinned.example: r4"])
        memory.flush()
        // A memory loaded from the database knows them already: nothing new to say.
        let reloaded = try PersistentPinningMemory(store: store.pinnedHosts) { host, _ in heard.withLock { $0.append("again " + host) } }
        reloaded.remember("other.example", reason: "r5")
        #expect(heard.withLock { $0 }.count == 3)
    }
}
