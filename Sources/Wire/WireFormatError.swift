/// Why a byte sequence does not follow its wire format: one sentence meant for a log line or a
/// refusal shown to the user (for example "The server_name extension declares 12 bytes but only
/// 9 remain.").
///
/// Internal to the parsers; every public result carries only `reason`.
struct WireFormatError: Error, Sendable, Equatable {
    /// One clear sentence, ending with a full stop.
    let reason: String

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
