import Foundation

/// Where a newest-first page of flows stopped: the (start time, id) of the last row shown.
/// The next page is every row strictly before it in `ORDER BY start_time DESC, id DESC`.
///
/// Its text form (what `tv flows --after` takes) is opaque: base64url of `start.id`, no padding.
public struct FlowCursor: Sendable, Equatable {
    /// The last row's start time (µs since the epoch).
    public let startTime: Int64
    /// The last row's id.
    public let id: Int64

    /// The cursor after the row that started at `startTime` (µs) with `id`.
    public init(startTime: Int64, id: Int64) {
        self.startTime = startTime
        self.id = id
    }

    /// Reads a cursor from its text form.
    /// - Throws: `FlowStoreError.badCursor` when `text` is not one `string` produced.
    public init(_ text: String) throws {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard !text.contains("="), !text.contains("+"), !text.contains("/"),
              let data = Data(base64Encoded: base64),
              let plain = String(data: data, encoding: .utf8)
        else { throw FlowStoreError.badCursor(text) }
        let parts = plain.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let start = Int64(parts[0]), let id = Int64(parts[1]) else {
            throw FlowStoreError.badCursor(text)
        }
        self.init(startTime: start, id: id)
    }

    /// The opaque text form, safe in a shell word and a URL.
    public var string: String {
        Data("\(startTime).\(id)".utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
