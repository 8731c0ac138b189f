// Validators for the text forms of IP addresses used in request targets and host names.

/// Checks the text form of an IPv6 address (RFC 4291 §2.2): eight groups of 1–4 hex digits
/// separated by colons, at most one `::` standing for one or more zero groups, optionally ending
/// in a dotted IPv4 address that counts as two groups. Zone identifiers (`%eth0`) are refused.
enum IPv6Text {
    /// Whether `text` (without brackets) is a valid IPv6 address.
    static func isValid(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        guard text.count >= 2, text.count <= 45 else { return false }
        var groups = 0
        var sawDoubleColon = false
        var index = 0
        // A leading "::".
        if text[0] == UInt8(ascii: ":") {
            guard text[1] == UInt8(ascii: ":") else { return false }
            sawDoubleColon = true
            index = 2
            if index == text.count { return true }
        }
        while index < text.count {
            // One group: hex digits, or a trailing IPv4 address.
            var digits = 0
            let start = index
            while index < text.count, text[index] != UInt8(ascii: ":") {
                if text[index] == UInt8(ascii: ".") {
                    guard IPv4Text.isValid(UnsafeBufferPointer(rebasing: text[start...])) else { return false }
                    groups += 2
                    return sawDoubleColon ? groups <= 6 : groups == 8
                }
                guard Self.isHexDigit(text[index]) else { return false }
                digits += 1
                index += 1
            }
            guard digits >= 1, digits <= 4 else { return false }
            groups += 1
            if index == text.count { break }
            // A colon: single, or the one "::".
            index += 1
            if index < text.count, text[index] == UInt8(ascii: ":") {
                guard !sawDoubleColon else { return false }
                sawDoubleColon = true
                index += 1
                if index == text.count { break }
            } else if index == text.count {
                return false // a trailing single colon
            }
        }
        return sawDoubleColon ? groups <= 7 : groups == 8
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0") ... UInt8(ascii: "9"), UInt8(ascii: "a") ... UInt8(ascii: "f"), UInt8(ascii: "A") ... UInt8(ascii: "F"): true
        default: false
        }
    }
}

/// Checks a dotted-quad IPv4 address (`192.0.2.1`): four decimal numbers 0–255 without leading
/// zeros (RFC 3986 §3.2.2 `IPv4address`).
enum IPv4Text {
    /// Whether `text` is a valid dotted-quad IPv4 address.
    static func isValid(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        var parts = 0
        var value = 0
        var digits = 0
        var leadingZero = false
        for byte in text {
            if byte == UInt8(ascii: ".") {
                guard digits > 0, parts < 3 else { return false }
                parts += 1
                value = 0
                digits = 0
                continue
            }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return false }
            if digits == 0 { leadingZero = byte == UInt8(ascii: "0") } else if leadingZero { return false }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
            digits += 1
            guard value <= 255 else { return false }
        }
        return parts == 3 && digits > 0
    }
}
