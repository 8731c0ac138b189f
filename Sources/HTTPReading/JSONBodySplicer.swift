import Foundation
import TVHome

/// Writes a JSON document that carries message bodies (HAR, `tv turns --http --json`) without
/// ever holding a body in memory: the document is built with a placeholder string where each
/// body goes (`placeholder`), serialized, and written out with every placeholder replaced by the
/// body streamed from the `BoundedBodyReader` — as JSON text (RFC 8259 §7 escapes) or base64
/// (RFC 4648 §4).
///
/// Placeholders carry a random nonce, so no string that came from the network can pass for one.
public struct JSONBodySplicer {
    /// How a body is written into its string.
    public enum Form: Sendable, Equatable {
        /// As text; a character cut off at the very end is left out.
        case text
        /// As base64.
        case base64
    }

    private struct Slot {
        var body: HTTPBody
        var reading: BodyReading
        var form: Form
    }

    private let nonce = UUID().uuidString
    private var slots: [Slot] = []

    /// A splicer with no placeholders yet (one per document).
    public init() {}

    /// A string value to put where `body` goes; `write` replaces it by the body's bytes that
    /// `reading` shows, written in `form`.
    public mutating func placeholder(_ body: HTTPBody, _ reading: BodyReading, form: Form) -> JSONValue {
        slots.append(Slot(body: body, reading: reading, form: form))
        return .string(marker(slots.count - 1))
    }

    private func marker(_ index: Int) -> String { "\u{1}tv-body-\(nonce)-\(index)\u{1}" }

    /// Writes `document` (serialized from a value holding this splicer's placeholders) to `out`
    /// piece by piece, each placeholder replaced by its body read through `reader`.
    ///
    /// The markers are found in the document's UTF-8 bytes from where the last one ended
    /// (memchr(3), then the marker compared): Foundation's `range(of:)` on the rest bridged all of it again at each body,
    /// so a HAR of 100,000 requests took minutes and 800 MB (a trial).
    public func write(_ document: String, reader: BoundedBodyReader, to out: (String) -> Void) {
        let start = Array("\"\\u0001tv-body-\(nonce)-".utf8)
        let end = Array("\\u0001\"".utf8)
        let bytes = Array(document.utf8)
        var position = 0
        func find(_ needle: [UInt8], from: Int) -> Int? {
            bytes.withUnsafeBufferPointer { haystack in
                var at = from
                while at + needle.count <= haystack.count {
                    guard let hit = memchr(haystack.baseAddress! + at, Int32(needle[0]), haystack.count - at) else { return nil }
                    at = UnsafeRawPointer(hit) - UnsafeRawPointer(haystack.baseAddress!)
                    if at + needle.count <= haystack.count, memcmp(haystack.baseAddress! + at, needle, needle.count) == 0 { return at }
                    at += 1
                }
                return nil
            }
        }
        while let open = find(start, from: position) {
            let digits = open + start.count
            guard let close = find(end, from: digits),
                  let index = Int(String(decoding: bytes[digits..<close], as: UTF8.self)), slots.indices.contains(index) else { break }
            out(String(decoding: bytes[position..<open], as: UTF8.self))
            out("\"")
            let slot = slots[index]
            switch slot.form {
            case .text: writeText(slot, reader: reader, to: out)
            case .base64: writeBase64(slot, reader: reader, to: out)
            }
            out("\"")
            position = close + end.count
        }
        out(String(decoding: bytes[position...], as: UTF8.self))
    }

    /// The body as escaped text; a piece that ends inside a character hands its start on.
    private func writeText(_ slot: Slot, reader: BoundedBodyReader, to out: (String) -> Void) {
        var carry: [UInt8] = []
        reader.stream(slot.body, slot.reading) { piece in
            let bytes = carry + piece
            let whole = bytes.count - PrintableText.cutCharacterLength(bytes)
            carry = Array(bytes[whole...])
            out(String(JSONValue.quote(String(decoding: bytes[..<whole], as: UTF8.self)).dropFirst().dropLast()))
        }
    }

    /// The body as base64; a piece's last one or two bytes wait for the next to make three.
    private func writeBase64(_ slot: Slot, reader: BoundedBodyReader, to out: (String) -> Void) {
        var carry: [UInt8] = []
        reader.stream(slot.body, slot.reading) { piece in
            let bytes = carry + piece
            let whole = bytes.count - bytes.count % 3
            carry = Array(bytes[whole...])
            out(Data(bytes[..<whole]).base64EncodedString())
        }
        if !carry.isEmpty { out(Data(carry).base64EncodedString()) }
    }
}
