import Foundation

/// Where a newest-first page of the shared history stopped: the last row's (start time, id,
/// instance id). Ids are per instance, so the instance breaks ties between two instances' flows
/// that started in the same microsecond with the same id. Its text form is opaque: base64url of
/// `start.id.instance`, no padding.
struct SharedFlowCursor: Equatable {
    let startTime: Int64
    let id: Int64
    let instance: String

    init(startTime: Int64, id: Int64, instance: String) {
        self.startTime = startTime
        self.id = id
        self.instance = instance
    }

    /// Reads a cursor from its text form.
    /// - Throws: `FlowStoreError.badCursor` when `text` is not one `string` produced.
    init(_ text: String) throws {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard !text.contains("="), let data = Data(base64Encoded: base64), let plain = String(data: data, encoding: .utf8)
        else { throw FlowStoreError.badCursor(text) }
        let parts = plain.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let start = Int64(parts[0]), let id = Int64(parts[1]), !parts[2].isEmpty else {
            throw FlowStoreError.badCursor(text)
        }
        self.init(startTime: start, id: id, instance: String(parts[2]))
    }

    /// The opaque text form, safe in a shell word and a URL.
    var string: String {
        Data("\(startTime).\(id).\(instance)".utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
