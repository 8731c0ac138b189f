import Testing
@testable import FlowStore

@Suite struct TextListTests {
    @Test func encodesReadablyAndRoundTrips() {
        #expect(TextList.encode(["h2", "http/1.1"]) == "h2,http/1.1")
        #expect(TextList.encode([]) == "")
        #expect(TextList.decode("") == [])
        #expect(TextList.encode(["a,b", "100%", "%2C"]) == "a%2Cb,100%25,%252C")
        let lists: [[String]] = [["h2", "http/1.1"], ["a,b", "100%", "%2C", ""], ["", ""], ["%", ",", "%%,,"]]
        for list in lists {
            #expect(TextList.decode(TextList.encode(list)) == list)
        }
        // A stray % that is not one of ours is kept as it is.
        #expect(TextList.decode("50%off") == ["50%off"])
    }
}
