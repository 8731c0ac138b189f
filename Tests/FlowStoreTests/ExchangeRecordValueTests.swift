import FlowTerms
import Testing

/// `ExchangeRecord` keeps its fields in one buffer shared by copies (issue 16's cost): it must
/// still behave as a value — a write to one copy never shows in another, on any thread — and
/// compare field by field.
@Suite struct ExchangeRecordValueTests {
    private func record() -> ExchangeRecord {
        ExchangeRecord(flowID: 7, sequence: 2, httpVersion: "HTTP/1.1", method: "GET", scheme: "https",
                       authority: "example.test", path: "/a", requestTime: 1_000)
    }

    @Test("a write to a copy leaves the original as it was; equality is by fields")
    func copiesAreValues() {
        let original = record()
        var copy = original
        #expect(copy == original)
        copy.status = 404
        copy.path = "/b"
        copy.contentType = "text/html; charset=utf-8, a type longer than a small string"
        copy.state = .complete
        #expect(original.status == nil)
        #expect(original.path == "/a")
        #expect(original.contentType == nil)
        #expect(original.state == .open)
        #expect(copy.status == 404)
        #expect(copy.path == "/b")
        #expect(copy.contentType == "text/html; charset=utf-8, a type longer than a small string")
        #expect(copy.state == .complete)
        #expect(copy != original)
        // Two buffers holding the same fields are equal.
        copy.status = nil
        copy.path = "/a"
        copy.contentType = nil
        copy.state = .open
        #expect(copy == original)
        #expect(copy.duration == nil)
        copy.endTime = 1_250
        #expect(copy.duration == 250)
        #expect(original.endTime == nil)
    }

    @Test("copies handed to other threads and written there stay apart")
    func copiesAcrossThreads() async {
        let original = record()
        let results = await withTaskGroup(of: (Int, ExchangeRecord).self) { group in
            for index in 0 ..< 8 {
                group.addTask {
                    var mine = original
                    for step in 0 ..< 1_000 { mine.requestWireBytes = Int64(index * 10_000 + step) }
                    mine.sequence = index
                    return (index, mine)
                }
            }
            var out: [Int: ExchangeRecord] = [:]
            for await (index, record) in group { out[index] = record }
            return out
        }
        #expect(original.requestWireBytes == 0)
        #expect(original.sequence == 2)
        for index in 0 ..< 8 {
            #expect(results[index]?.sequence == index)
            #expect(results[index]?.requestWireBytes == Int64(index * 10_000 + 999))
            #expect(results[index]?.path == "/a")
        }
    }
}
