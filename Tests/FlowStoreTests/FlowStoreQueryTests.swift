import Testing
@testable import FlowStore

@Suite struct FlowStoreQueryTests {
    @Test func keysetPagesVisitEveryRowOnceWhenTimesTie() throws {
        try withStore { store, _ in
            let written = try writeFlows((0..<250).map { _ in sampleFlow(start: 1_000) }, to: store)
            #expect(written.map(\.id) == Array(1...250))
            var seen: [Int64] = []
            var pages = 0
            var query = FlowQuery(limit: 7)
            while true {
                let page = try store.flows(query)
                pages += 1
                seen += page.flows.map(\.id)
                guard let next = page.nextCursor else { break }
                #expect(page.flows.count == 7)
                query.after = next
            }
            #expect(pages == 36)  // 35 full pages of 7 and one of 5
            #expect(seen == Array((1...250).reversed()))
        }
    }

    @Test func pagesAreNewestFirstByTimeThenId() throws {
        try withStore { store, _ in
            _ = try writeFlows([sampleFlow(start: 20), sampleFlow(start: 30), sampleFlow(start: 10),
                                sampleFlow(start: 30), sampleFlow(start: 20)], to: store)
            let first = try store.flows(FlowQuery(limit: 2))
            #expect(first.flows.map(\.id) == [4, 2])
            #expect(first.nextCursor == FlowCursor(startTime: 30, id: 2).string)
            let second = try store.flows(FlowQuery(limit: 2, after: first.nextCursor))
            #expect(second.flows.map(\.id) == [5, 1])
            let third = try store.flows(FlowQuery(limit: 2, after: second.nextCursor))
            #expect(third.flows.map(\.id) == [3])
            #expect(third.nextCursor == nil)
            // A page that ends exactly at the last row says there is no more.
            let exact = try store.flows(FlowQuery(limit: 5))
            #expect(exact.flows.count == 5)
            #expect(exact.nextCursor == nil)
        }
    }

    @Test func filtersByHostSubstringOverNameAndAddresses() throws {
        try withStore { store, _ in
            _ = try writeFlows([
                sampleFlow(start: 1, host: "api.Example.com", server: "192.0.2.10", client: "10.0.0.1"),  // 1
                sampleFlow(start: 2, host: nil, server: "198.51.100.7", client: "10.0.0.2"),               // 2
                sampleFlow(start: 3, host: "cdn.test", server: "192.0.2.11", client: "10.0.0.99"),         // 3
                sampleFlow(start: 4, host: "a_b.test", server: "203.0.113.5", client: "10.0.0.3"),         // 4
                sampleFlow(start: 5, host: "axb.test", server: "203.0.113.6", client: "10.0.0.3"),         // 5
            ], to: store)
            func ids(_ host: String) throws -> [Int64] { try store.flows(FlowQuery(host: host)).flows.map(\.id) }
            #expect(try ids("example") == [1])
            #expect(try ids("EXAMPLE.COM") == [1])
            #expect(try ids("198.51.100") == [2])
            #expect(try ids("192.0.2.1") == [3, 1])
            #expect(try ids("10.0.0.99") == [3])
            #expect(try ids("a_b") == [4])  // `_` is literal, not a wildcard
            #expect(try ids(".test") == [5, 4, 3])
            #expect(try ids("nothing") == [])
            #expect(try ids("") == [5, 4, 3, 2, 1])
            #expect(try store.count(FlowQuery(host: ".test")) == 3)
        }
    }

    @Test func filtersByStatusAndTime() throws {
        try withStore { store, _ in
            _ = try writeFlows([
                sampleFlow(start: 100, status: .inspected),     // 1
                sampleFlow(start: 200, status: .keptPrivate),   // 2
                sampleFlow(start: 300, status: .inspected),     // 3
                sampleFlow(start: 400, status: .failed),        // 4
                sampleFlow(start: 500, status: .notEncrypted),  // 5
            ], to: store)
            func ids(_ query: FlowQuery) throws -> [Int64] { try store.flows(query).flows.map(\.id) }
            #expect(try ids(FlowQuery(status: .inspected)) == [3, 1])
            #expect(try ids(FlowQuery(status: .encrypted)) == [])
            #expect(try ids(FlowQuery(since: 300)) == [5, 4, 3])
            #expect(try ids(FlowQuery(from: 200, to: 400)) == [3, 2])  // to is exclusive
            #expect(try ids(FlowQuery(to: 200)) == [1])
            #expect(try ids(FlowQuery(status: .inspected, since: 150)) == [3])
            #expect(try ids(FlowQuery(status: .inspected, from: 0, to: 1_000, limit: 1)) == [3])
            #expect(try store.flows(FlowQuery(status: .inspected, limit: 1)).nextCursor
                == FlowCursor(startTime: 300, id: 3).string)
            #expect(try store.count(FlowQuery(status: .inspected)) == 2)
            #expect(try store.count(FlowQuery(from: 200, to: 400)) == 2)
            #expect(try store.count(FlowQuery()) == 5)
        }
    }

    @Test func aForgedCursorIsRefused() throws {
        try withStore { store, _ in
            #expect(throws: FlowStoreError.badCursor("zzz")) { try store.flows(FlowQuery(after: "zzz")) }
        }
    }
}
