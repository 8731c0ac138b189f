@testable import FlowStore
import FlowTerms
import Foundation
import Recording
@testable import Proxy
import Testing
import TVHome
@testable import TVCore

/// Issue 23: `certificates` rows no flow's chain names any more go when retention or
/// delete-everything deletes flows; a row whose DER arrived within the hour stays through
/// retention (a loop may still think the writer holds it), and an audit session's chains stay.
@Suite(.serialized) struct CertificatePruningTests {
    let day: Int64 = 86_400_000_000
    let hour: Int64 = 3_600_000_000

    @Test("orphans: the candidates no chain names, in their order")
    func orphans() {
        #expect(CertificatePruning.orphans(candidates: ["aa", "bb", "cc", "dd"], chains: ["aa bb", "bb", ""]) == ["cc", "dd"])
        #expect(CertificatePruning.orphans(candidates: ["aa"], chains: []) == ["aa"])
        #expect(CertificatePruning.orphans(candidates: [], chains: ["aa"]) == [])
        // A fingerprint is named whole, never as part of a longer one.
        #expect(CertificatePruning.orphans(candidates: ["a", "aab"], chains: ["aa aabb"]) == ["a", "aab"])
    }

    @Test("a loop hands a DER once, again after 30 minutes, after 4,096 others, and after the process forgot every certificate")
    func sentCertificates() {
        var sent = SentCertificates()
        let minute: UInt64 = 60_000_000_000
        func note(_ sha256: String, _ at: UInt64, _ forgets: UInt64) -> Bool { sent.note(sha256, now: 5 + at * minute, forgets: forgets) }
        var answers: [Bool] = []
        answers.append(note("aa", 0, 0))
        answers.append(note("aa", 29, 0))
        answers.append(note("bb", 29, 0))
        answers.append(note("aa", 30, 0))
        let afterAge = sent.fingerprints
        answers.append(note("aa", 31, 0))
        answers.append(note("aa", 31, 1))
        answers.append(note("aa", 31, 1))
        #expect(answers == [true, false, true, true, false, true, false])
        #expect(afterAge == ["aa"])
        var fresh = 0
        for i in 1..<SentCertificates.limit where note("x\(i)", 31, 1) { fresh += 1 }
        #expect(fresh == SentCertificates.limit - 1 && sent.fingerprints.count == SentCertificates.limit)
        let overLimit = note("aa", 31, 1)
        #expect(overLimit && sent.fingerprints == ["aa"])
    }

    func withHome(_ body: (TVHome, FlowStore) throws -> Void) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tv-certs-\(getpid())-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let home = TVHome(path: path)
        try home.ensureExists()
        let store = try FlowStore(home: home)
        defer { store.close() }
        try body(home, store)
    }

    /// A closed flow started at `start` whose server sent `chain`, written through a real writer
    /// with the DER of each (a certificate's DER: its fingerprint's bytes, enough for the table).
    func writeFlow(_ store: FlowStore, start: Int64, chain: [String]) throws {
        var flow = FlowRecord(startTime: start, clientAddress: "127.0.0.1", clientPort: 50_000, serverAddress: "10.0.0.1",
                              serverPort: 443, host: "a.test", hostOrigin: .sni, status: .inspected)
        flow.duration = 1_000
        flow.certificateChain = chain
        flow.newCertificates = chain.map { SeenCertificate(sha256: $0, der: Array($0.utf8)) }
        let writer = try store.makeWriter()
        defer { writer.close() }
        _ = writer.open(flow)
        writer.flush()
    }

    func stored(_ database: SQLiteDatabase) throws -> [String] {
        var out: [String] = []
        try database.prepare("SELECT sha256 FROM certificates ORDER BY sha256").forEachRow { out.append($0.string(at: 0) ?? "") }
        return out
    }

    @Test("retention takes the certificates only the deleted flows named and stored over an hour ago; delete-everything takes every one no remaining flow names, keeps an audit session's, and makes this process's loops send DER again")
    func prunedWithTheirFlows() throws {
        try withHome { home, store in
            let now = StorageClock.now()
            try writeFlow(store, start: now - 40 * day, chain: ["aa", "bb"])
            try writeFlow(store, start: now - 39 * day, chain: ["ee"])
            try writeFlow(store, start: now - 1 * day, chain: ["bb", "cc"])
            try writeFlow(store, start: now - 40 * day, chain: ["dd"])
            let database = try SQLiteDatabase(path: home.databasePath)
            defer { database.close() }
            // All but dd's DER arrived two hours ago; dd's just now (a loop may still hold it).
            try database.execute("UPDATE certificates SET stored_at = \(now - 2 * hour) WHERE sha256 <> 'dd'")
            #expect(try stored(database) == ["aa", "bb", "cc", "dd", "ee"])

            let manager = try StorageManager(home: home)
            defer { manager.close() }
            let limits = StorageLimits(historyMaxAge: 30 * day, capturesMaxBytes: nil, capturesMaxAge: nil)
            let report = try manager.applyLimits(limits, recording: nil, now: now)
            #expect(report.flowsDeleted == 3 && report.certificatesDeleted == 2, "\(report)")
            #expect(try stored(database) == ["bb", "cc", "dd"])
            #expect(StoragePresentation.report(report, automatic: true).first == "Deleted 3 connections (with 2 server certificates).")

            // A flow of an audit session: evidence, kept with its chain.
            _ = try store.audit.newProject(name: "app", note: "", now: now)
            _ = try store.audit.start(project: "app", note: "", settings: "{}", now: now)
            try writeFlow(store, start: now, chain: ["ff", "cc"])
            _ = try store.audit.stop(now: now + 1)
            let forgets = ServerCertificateMemory.forgets
            let everything = try manager.deleteEverything(recording: nil, now: now + 2)
            #expect(everything.flowsDeleted == 1 && everything.certificatesDeleted == 2, "\(everything)")
            #expect(try stored(database) == ["cc", "ff"])
            #expect(ServerCertificateMemory.forgets == forgets + 1)
            // Nothing left to prune: nothing said about certificates, nothing forgotten.
            let again = try manager.deleteEverything(recording: nil, now: now + 3)
            #expect(again.certificatesDeleted == 0 && ServerCertificateMemory.forgets == forgets + 1)
        }
    }

    @Test("the writer refreshes stored_at when a loop hands a known certificate's DER again")
    func storedAtRefreshed() throws {
        try withHome { home, store in
            try writeFlow(store, start: StorageClock.now(), chain: ["aa"])
            let database = try SQLiteDatabase(path: home.databasePath)
            defer { database.close() }
            try database.execute("UPDATE certificates SET stored_at = 5")
            try writeFlow(store, start: StorageClock.now(), chain: ["aa"])
            let value = try database.scalar("SELECT stored_at FROM certificates WHERE sha256 = 'aa'")
            guard case let .integer(storedAt) = value else { Issue.record("\(value)"); return }
            #expect(storedAt > StorageClock.now() - 60_000_000, "\(storedAt)")
        }
    }
}
