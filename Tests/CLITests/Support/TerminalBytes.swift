import Foundation

/// What must never reach a terminal from the network (issue 12 §4): the names of the raw control
/// and bidi characters found in `data` — ESC, BEL, NUL, DEL, and in UTF-8 the 8-bit CSI and OSC
/// (U+009B, U+009D) and the bidi controls U+202E, U+2066, U+2069. Empty when there are none.
func rawTerminalControls(in data: Data) -> [String] {
    let forbidden: [(String, [UInt8])] = [
        ("ESC", [0x1B]), ("BEL", [0x07]), ("NUL", [0x00]), ("DEL", [0x7F]), ("CSI", [0xC2, 0x9B]), ("OSC", [0xC2, 0x9D]),
        ("RLO", [0xE2, 0x80, 0xAE]), ("LRI", [0xE2, 0x81, 0xA6]), ("PDI", [0xE2, 0x81, 0xA9]),
    ]
    let bytes = [UInt8](data)
    return forbidden.compactMap { name, sequence in
        bytes.indices.contains { i in i + sequence.count <= bytes.count && bytes[i..<(i + sequence.count)].elementsEqual(sequence) } ? name : nil
    }
}
