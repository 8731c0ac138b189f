/// Decodes hexadecimal text ("16 03 01", "160301"; whitespace ignored) into bytes; traps on a
/// non-hex character, which would be a broken fixture.
func hex(_ parts: String...) -> [UInt8] {
    var bytes: [UInt8] = []
    var high: UInt8?
    for character in parts.joined().utf8 {
        let nibble: UInt8
        switch character {
        case UInt8(ascii: "0") ... UInt8(ascii: "9"): nibble = character - UInt8(ascii: "0")
        case UInt8(ascii: "a") ... UInt8(ascii: "f"): nibble = character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A") ... UInt8(ascii: "F"): nibble = character - UInt8(ascii: "A") + 10
        case UInt8(ascii: " "), UInt8(ascii: "\n"): continue
        default: fatalError("not a hex digit in a fixture: \(character)")
        }
        if let h = high {
            bytes.append(h << 4 | nibble)
            high = nil
        } else {
            high = nibble
        }
    }
    precondition(high == nil, "odd number of hex digits in a fixture")
    return bytes
}
