import Foundation
import Testing
@testable import FlowStore
import TVHome

/// The id ranges of sessions run with `--store ''` (`StoreKeptLocal`).
@Suite("Flows kept out of the shared store by --store ''")
struct StoreKeptLocalTests {
    @Test("lines read as ranges, sorted and merged (touching ones too); an open line reaches Int64.max; lines that are not a range are skipped")
    func parse() {
        #expect(StoreKeptLocal.parse("") == [])
        #expect(StoreKeptLocal.parse("40 49\n10 19\n20 25\n") == [10 ... 25, 40 ... 49])
        #expect(StoreKeptLocal.parse("5 9\n7 0\n") == [5 ... Int64.max])
        #expect(StoreKeptLocal.parse("x 9\n0 4\n9 3\n1 2 3\n12 12\n") == [12 ... 12])
        #expect(StoreKeptLocal.contains([10 ... 25, 40 ... 49], 25) && !StoreKeptLocal.contains([10 ... 25, 40 ... 49], 26))
    }

    @Test("a kept-local session's line opens at its first id and closes at its last (or goes, with no flow); a killed one's is closed at the next session's first id; the file is 0600")
    func sessions() throws {
        let path = NSTemporaryDirectory() + "tv-kept-local-\(getpid())-\(UInt32.random(in: 0 ... .max))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let home = TVHome(path: path)
        let file = path + "/" + StoreKeptLocal.fileName
        func text() -> String { (try? String(contentsOfFile: file, encoding: .utf8)) ?? "<none>" }
        // A session with the store and no file: nothing written.
        #expect(StoreKeptLocal.sessionStarts(home: home, first: 5, keptLocal: false) == nil)
        #expect(text() == "<none>")
        #expect(StoreKeptLocal.sessionStarts(home: home, first: 10, keptLocal: true) == nil)
        #expect(text() == "10 0\n")
        StoreKeptLocal.sessionStops(home: home, first: 10, last: 14)
        #expect(text() == "10 14\n")
        // One that made no flow leaves no line.
        #expect(StoreKeptLocal.sessionStarts(home: home, first: 15, keptLocal: true) == nil)
        StoreKeptLocal.sessionStops(home: home, first: 15, last: nil)
        #expect(text() == "10 14\n")
        // Killed: open until the next session, which closes it before its own first id.
        #expect(StoreKeptLocal.sessionStarts(home: home, first: 20, keptLocal: true) == nil)
        #expect(StoreKeptLocal.ranges(folder: path) == [10 ... 14, 20 ... Int64.max])
        #expect(StoreKeptLocal.sessionStarts(home: home, first: 31, keptLocal: false) == nil)
        #expect(text() == "10 14\n20 30\n")
        #expect(StoreKeptLocal.ranges(folder: path) == [10 ... 14, 20 ... 30])
        // A `tv exec` starting beside a running kept-local session closes its line at the
        // exec's first id; the session's own stop closes it at its last id after all.
        #expect(StoreKeptLocal.sessionStarts(home: home, first: 40, keptLocal: true) == nil)
        #expect(StoreKeptLocal.sessionStarts(home: home, first: 4_294_967_336, keptLocal: false) == nil)
        #expect(text() == "10 14\n20 30\n40 4294967335\n")
        StoreKeptLocal.sessionStops(home: home, first: 40, last: 42)
        #expect(text() == "10 14\n20 30\n40 42\n")
        var st = stat()
        #expect(stat(file, &st) == 0 && st.st_mode & 0o777 == 0o600)
    }
}
