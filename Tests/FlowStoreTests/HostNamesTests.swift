import Testing
@testable import FlowStore

@Suite struct HostNamesTests {
    @Test func remembersNamesPerAddressNewestFirst() throws {
        try withStore { store, _ in
            let names = store.hostNames
            #expect(try names.names(forAddress: "192.0.2.1") == [])
            try names.remember(name: "a.example.", address: "192.0.2.1", at: 10)
            try names.remember(name: "B.example", address: "192.0.2.1", at: 20)
            try names.remember(name: "c.example", address: "192.0.2.2", at: 30)
            #expect(try names.names(forAddress: "192.0.2.1") == ["b.example", "a.example"])
            try names.remember(name: "a.example", address: "192.0.2.1", at: 40)
            #expect(try names.names(forAddress: "192.0.2.1") == ["a.example", "b.example"])
            #expect(try names.names(forAddress: "192.0.2.2") == ["c.example"])
        }
    }
}
