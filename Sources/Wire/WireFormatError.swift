/// Why a byte sequence does not follow its wire format: one sentence meant for a log line or a
/// refusal shown to the user (for example "The server_name extension declares 12 bytes but only
/// 9 remain.").
///
/// Parsers throw it internally and hand the `reason` on in their results; `HTTP1Head.bodyFraming`
/// returns it.
public struct WireFormatError: Error, Sendable, Hashable {
    /// One clear sentence, ending with a full stop.
    public let reason: String

    init(_ reason: String) {
        self.reason = reason
    }
}

extension WireFormatError {
    /// "1 extra byte", "3 extra bytes": a count with its noun for reasons.
    static func count(_ value: Int, _ noun: String) -> String {
        "\(value) \(noun)\(value == 1 ? "" : "s")"
    }
}
