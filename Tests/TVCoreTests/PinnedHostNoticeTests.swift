import FlowStore
import FlowTerms
import Foundation
import Proxy
import Synchronization
import Testing
@testable import TVCore

@Suite struct PinnedHostNoticeTests {
    static let curl = ClientIdentity(address: "127.0.0.1", helloFingerprint: "aaaaaaaaaaaa")

    @Test("the sentence names the client, the host and port, the kind, the reason and the way back")
    func sentence() {
        let key = PinKey(client: Self.curl, host: "api.example.com", port: 443)
        #expect(PinnedHostNotice.sentence(key: key, kind: .lacksRoot, reason: "R")
                == "127.0.0.1 (hello aaaaaaaaaaaa) lacks tv's root for api.example.com:443: its connections there pass through unread from now on; "
                + "give it the root (`tv ca export`; curl: --cacert or CURL_CA_BUNDLE, Python requests: REQUESTS_CA_BUNDLE, "
                + "Python and other OpenSSL programs: SSL_CERT_FILE, Node: NODE_EXTRA_CA_CERTS, Java: keytool -importcert into its truststore), "
                + "then `tv pinned forget api.example.com`.")
        #expect(PinnedHostNotice.sentence(key: key, kind: .pinned, reason: "R")
                == "127.0.0.1 (hello aaaaaaaaaaaa) pins its certificate for api.example.com:443, or checks it only after the handshake and lacks tv's root (curl built with GnuTLS does): its connections there pass through unread from now on (R). "
                + "`tv pinned forget api.example.com` tries inspecting again.")
    }

    @Test("the pinning memory announces a key once per kind, and not again for the same; forget then remember announces again; a reload knows them")
    func announcesOnce() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tv-pinned-notice-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try FlowStore(path: dir + "/flows.sqlite")
        let heard = Mutex<[String]>([])
        let memory = try PersistentPinningMemory(store: store) { key, kind, reason in
            heard.withLock { $0.append("\(key.target) \(kind.rawValue): \(reason)") }
        }
        let a = PinKey(client: Self.curl, host: "Pinned.Example.", port: 443)
        memory.remember(a, kind: .lacksRoot, reason: "r1")
        memory.remember(PinKey(client: Self.curl, host: "pinned.example", port: 443), kind: .lacksRoot, reason: "r2")
        memory.remember(PinKey(client: Self.curl, host: "other.example", port: 8443), kind: .pinned, reason: "r3")
        #expect(heard.withLock { $0 } == ["pinned.example:443 lacks_root: r1", "other.example:8443 pinned: r3"])
        memory.forget(host: "pinned.example")
        #expect(memory.recall(a) == nil)
        memory.remember(a, kind: .pinned, reason: "r4")
        #expect(heard.withLock { $0 }.last == "pinned.example:443 pinned: r4")
        memory.flush()
        // The rows, keyed by client, host and port, the latest kind and reason.
        let rows = try store.clientPins.list().map { "\($0.clientAddress) \($0.clientHello) \($0.host):\($0.port) \($0.kind.rawValue) \($0.reason) \($0.count)" }.sorted()
        #expect(rows == ["127.0.0.1 aaaaaaaaaaaa other.example:8443 pinned r3 1", "127.0.0.1 aaaaaaaaaaaa pinned.example:443 pinned r4 3"])
        // A memory loaded from the database knows them already: nothing new to say.
        let reloaded = try PersistentPinningMemory(store: store) { key, _, _ in heard.withLock { $0.append("again " + key.host) } }
        #expect(reloaded.recall(a) == .remembered(.pinned))
        reloaded.remember(PinKey(client: Self.curl, host: "other.example", port: 8443), kind: .pinned, reason: "r5")
        #expect(heard.withLock { $0 }.count == 3)
    }

    @Test("a host-wide pin an older tv remembered is honoured for every client and port, until forgotten")
    func hostWide() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tv-pinned-legacy-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try FlowStore(path: dir + "/flows.sqlite")
        try store.pinnedHosts.remember("old.example", reason: "the client rejected tv's certificate (alert unknown_ca)", at: 1)
        let memory = try PersistentPinningMemory(store: store)
        #expect(memory.recall(PinKey(client: Self.curl, host: "old.example", port: 443)) == .hostWide)
        #expect(memory.recall(PinKey(client: ClientIdentity(address: "::1", helloFingerprint: "b"), host: "OLD.example", port: 8443)) == .hostWide)
        #expect(memory.recall(PinKey(client: Self.curl, host: "new.example", port: 443)) == nil)
        memory.forget(host: "old.example")
        #expect(memory.recall(PinKey(client: Self.curl, host: "old.example", port: 443)) == nil)
    }
}
