import Testing
@testable import HTTPReading

@Suite struct PrintableTextTests {
    @Test func textTabsAndLineEndsAreText() {
        #expect(PrintableText.text(b("GET / HTTP/1.1\r\n\tok")) == "GET / HTTP/1.1\r\n\tok")
        #expect(PrintableText.text(b("")) == "")
    }

    @Test func aCharacterCutAtTheEndIsTolerated() {
        let euro = b("price: €")   // € is e2 82 ac
        #expect(PrintableText.text(euro.dropLast(1)) == "price: ")
        #expect(PrintableText.text(euro.dropLast(2)) == "price: ")
        // A broken sequence in the middle is not text.
        #expect(PrintableText.text(b("a") + [0xe2, 0x82] + b("b")) == nil)
    }

    @Test func controlBytesMakeItBinary() {
        #expect(PrintableText.text([0x41, 0x00, 0x42]) == nil)
        #expect(PrintableText.text([0x1b] + b("[31m")) == nil)
        #expect(PrintableText.text(b("a\u{7f}")) == nil)
        #expect(PrintableText.text(b("a\u{85}")) == nil)   // C1 control (NEL)
        #expect(PrintableText.text([0x89, 0x50, 0x4e, 0x47]) == nil)
    }
}
