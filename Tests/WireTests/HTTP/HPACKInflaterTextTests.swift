import Testing
@testable import Wire

/// HPACK field values as text (RFC 7541 §6.2.2 literal fields, no Huffman coding): UTF-8 where
/// the bytes are UTF-8, else one ISO-8859-1 character a byte, so no byte is lost.
struct HPACKInflaterTextTests {
    @Test func valuesThatAreNotUTF8KeepEveryByte() throws {
        let inflater = try HPACKInflater()
        // 0x00: literal without indexing, new name; then name length, name, value length, value.
        let block: [UInt8] = [0x00, 0x07] + Array("x-latin".utf8) + [0x04] + Array("caf".utf8) + [0xE9]
            + [0x00, 0x06] + Array("x-utf8".utf8) + [0x05] + Array("caf".utf8) + [0xC3, 0xA9]
        let fields = try inflater.decode(block)
        #expect(fields.map(\.name) == ["x-latin", "x-utf8"])
        #expect(fields.map(\.value) == ["caf\u{E9}", "caf\u{E9}"])
        #expect(fields[0].value.unicodeScalars.map(\.value) == [0x63, 0x61, 0x66, 0xE9])
    }
}
