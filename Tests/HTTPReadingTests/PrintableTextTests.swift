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
        #expect(PrintableText.text(b("a\u{1}b")) == nil)
        #expect(PrintableText.text([0x89, 0x50, 0x4e, 0x47]) == nil)
        // A lone 0x80 is no UTF-8: binary, though U+0080 (c2 80) is not.
        #expect(PrintableText.text([0x7b, 0x80, 0x7d]) == nil)
    }

    /// DEL and the C1 controls in valid UTF-8 are text, drawn escaped by every view: a JSON body
    /// holding U+0080 was a hex dump on tv web and text in `tv request` (a trial).
    @Test func delAndC1ControlsInUTF8AreText() {
        #expect(PrintableText.text([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc2, 0x80, 0x22, 0x7d]) == "{\"a\":\"\u{80}\"}")
        #expect(PrintableText.text(b("a\u{85}")) == "a\u{85}")   // NEL
        #expect(PrintableText.text(b("a\u{9b}2J")) == "a\u{9b}2J")   // the 8-bit CSI
        #expect(PrintableText.text(b("a\u{7f}")) == "a\u{7f}")
        #expect(PrintableText.text(b("a\u{9f}\u{a0}")) == "a\u{9f}\u{a0}")
        // The one rule, scalar by scalar: a C0 control but tab, LF and CR makes bytes binary.
        let binary = (0...0xA0).filter { PrintableText.makesBinary(Unicode.Scalar($0)!) }
        #expect(binary == Array(0...0x08) + [0x0b, 0x0c] + Array(0x0e...0x1f))
    }

    /// The scanner, fed in pieces of any size, decides as `text` does on the whole.
    @Test func theScannerDecidesAsTheWhole() {
        let samples: [[UInt8]] = [b("{\"a\":\"\u{80}\u{9b}\"}"), b("a\u{1b}[31m"), b("tab\tand\r\n"), [0x61, 0xc2], [0x61, 0x80], b("é\u{85}€")]
        for bytes in samples {
            for size in 1...4 {
                var scanner = PrintableText.Scanner()
                var start = 0
                while start < bytes.count {
                    scanner.take(bytes[start..<min(start + size, bytes.count)])
                    start += size
                }
                #expect(scanner.printable == (PrintableText.text(bytes) != nil), "\(bytes) in pieces of \(size)")
            }
        }
    }
}
