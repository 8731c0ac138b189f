import Capture

/// Cuts the packets of a time span out of pcapng files (draft-ietf-opsawg-pcapng) into one new
/// section: one Section Header Block, every input file's Interface Description Blocks (renumbered
/// in order), the Enhanced Packet Blocks whose timestamp falls in the span (their interface id
/// rewritten), and, when keys are wanted, the Decryption Secrets Blocks (§4.7) that precede or
/// sit among them, so Wireshark decrypts the TLS with no key file of its own. Secrets kept
/// are also gathered as key log text (`keyLog`).
///
/// Reads tv's own files: little-endian sections (§4.1's byte-order magic `0x1A2B3C4D` as
/// written); a file in the other order, or with a block whose length is not a multiple of 4,
/// shorter than 12 bytes or past the end, is refused with the section that says why.
struct PcapngCut {
    /// Why an input file cannot be cut.
    enum Problem: Error, Equatable {
        case unreadable(file: String, reason: String)
    }

    /// The span, µs since the epoch, both ends included.
    let from: Int64
    let to: Int64
    /// Whether Decryption Secrets Blocks are kept (`--no-keys` drops them).
    let keepSecrets: Bool
    /// When known, the client randoms of the flows the cut is for: a secret of any other TLS
    /// connection (or a line that names none) is left out of both the blocks and `keyLog` (a
    /// block is rewritten with the lines that stay, dropped when none does). nil: every secret
    /// of the span is kept.
    let clientRandoms: Set<TLSClientRandom>?

    /// The output so far (starts with the Section Header Block).
    private(set) var output: [UInt8]
    /// Key log lines of the secrets kept (SSLKEYLOGFILE format).
    private(set) var keyLog: [UInt8] = []
    /// Enhanced Packet Blocks kept.
    private(set) var packets = 0
    private var interfaces = 0

    init(from: Int64, to: Int64, keepSecrets: Bool, clientRandoms: Set<TLSClientRandom>? = nil, comment: String) {
        self.from = from
        self.to = to
        self.keepSecrets = keepSecrets
        self.clientRandoms = clientRandoms
        output = PcapngBlocks.sectionHeader(comment: comment)
    }

    /// Appends what `bytes` (a whole pcapng file named `file`) holds in the span.
    /// - Throws: `Problem.unreadable`.
    mutating func add(_ bytes: [UInt8], file: String) throws {
        var offset = 0
        var localInterfaces: [(output: UInt32, microsPerTick: Double)] = []
        var pendingSecrets: [ArraySlice<UInt8>] = []
        var inSpan = false
        func u32(_ at: Int) -> UInt32 {
            UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
        }
        while offset + 12 <= bytes.count {
            let type = u32(offset)
            let length = Int(u32(offset + 4))
            guard length >= 12, length % 4 == 0, offset + length <= bytes.count else {
                // A cut last block (a writer killed mid-write) ends the file; anything else is damage.
                if offset + 8 <= bytes.count, length >= 12, length % 4 == 0 { break }
                throw Problem.unreadable(file: file, reason: "a block at byte \(offset) has length \(length) (pcapng §3.1: a multiple of 4, at least 12, inside the file)")
            }
            let block = bytes[offset..<(offset + length)]
            let body = offset + 8
            switch type {
            case PcapngBlocks.sectionHeaderType:
                guard u32(body) == PcapngBlocks.byteOrderMagic else {
                    throw Problem.unreadable(file: file, reason: "its section is not little-endian (pcapng §4.1 byte-order magic); tv reads only the files it wrote")
                }
                localInterfaces = []
            case PcapngBlocks.interfaceDescriptionType:
                localInterfaces.append((UInt32(interfaces), PcapngCut.microsPerTick(bytes[body..<(offset + length - 4)])))
                interfaces += 1
                output += block
            case PcapngBlocks.enhancedPacketType:
                guard length >= 32 else {
                    throw Problem.unreadable(file: file, reason: "an Enhanced Packet Block at byte \(offset) is shorter than its fixed fields (pcapng §4.3)")
                }
                let interface = Int(u32(body))
                guard interface < localInterfaces.count else {
                    throw Problem.unreadable(file: file, reason: "a packet at byte \(offset) names interface \(interface), which no Interface Description Block before it describes (pcapng §4.3)")
                }
                let ticks = UInt64(u32(body + 4)) << 32 | UInt64(u32(body + 8))
                let micros = Int64(Double(ticks) * localInterfaces[interface].microsPerTick)
                guard micros >= from else { break }
                guard micros <= to else {
                    // Past the span: later secrets belong to later flows.
                    inSpan = false
                    pendingSecrets = []
                    break
                }
                if !inSpan {
                    inSpan = true
                    for secrets in pendingSecrets { keep(secrets) }
                    pendingSecrets = []
                }
                var copy = Array(block)
                let renumbered = localInterfaces[interface].output
                for i in 0..<4 { copy[8 + i] = UInt8(truncatingIfNeeded: renumbered >> (8 * UInt32(i))) }
                output += copy
                packets += 1
            case PcapngBlocks.decryptionSecretsType:
                if inSpan { keep(block) } else { pendingSecrets.append(block) }
            default:
                break
            }
            offset += length
        }
    }

    /// Keeps one Decryption Secrets Block (and its TLS key log lines) when keys are wanted.
    private mutating func keep(_ block: ArraySlice<UInt8>) {
        guard keepSecrets else { return }
        let b = Array(block)
        guard b.count >= 20 else {
            if clientRandoms == nil { output += block }
            return
        }
        func u32(_ at: Int) -> UInt32 { UInt32(b[at]) | UInt32(b[at + 1]) << 8 | UInt32(b[at + 2]) << 16 | UInt32(b[at + 3]) << 24 }
        let type = u32(8)
        let length = Int(u32(12))
        guard type == PcapngBlocks.tlsKeyLogSecrets, 16 + length <= b.count - 4 else {
            if clientRandoms == nil { output += block }
            return
        }
        guard let clientRandoms else {
            output += block
            keyLog += b[16..<(16 + length)]
            return
        }
        var kept: [UInt8] = []
        b[16..<(16 + length)].withUnsafeBytes { text in
            KeyLogLine.forEach(in: text) { line in
                guard let random = line.clientRandom(in: text), clientRandoms.contains(random) else { return }
                kept += text[line.line]
                kept.append(0x0a)
            }
        }
        guard !kept.isEmpty else { return }
        output += PcapngBlocks.decryptionSecrets(secrets: kept)
        keyLog += kept
    }

    /// The client randoms an SSLKEYLOGFILE text names (`KeyLogLine`: each well-formed line's
    /// second field, 64 hex digits), whatever the label.
    static func clientRandoms(keyLog: [UInt8]) -> Set<TLSClientRandom> {
        var randoms = Set<TLSClientRandom>()
        keyLog.withUnsafeBytes { text in
            KeyLogLine.forEach(in: text) { line in
                if let random = line.clientRandom(in: text) { randoms.insert(random) }
            }
        }
        return randoms
    }

    /// µs per timestamp unit from an Interface Description Block's options (`if_tsresol`,
    /// option 9, pcapng §4.2): 10^-6 s when absent.
    static func microsPerTick(_ body: ArraySlice<UInt8>) -> Double {
        let b = Array(body)
        var offset = 8  // LinkType, Reserved, SnapLen
        while offset + 4 <= b.count {
            let code = UInt16(b[offset]) | UInt16(b[offset + 1]) << 8
            let length = Int(UInt16(b[offset + 2]) | UInt16(b[offset + 3]) << 8)
            if code == PcapngBlocks.optionEnd { break }
            if code == PcapngBlocks.optionInterfaceTimestampResolution, length >= 1, offset + 4 < b.count {
                let value = b[offset + 4]
                let seconds = value & 0x80 == 0 ? pow10(-Int(value)) : pow2(-Int(value & 0x7F))
                return seconds * 1_000_000
            }
            offset += 4 + length + PcapngBlocks.padding(length)
        }
        return 1
    }

    private static func pow10(_ e: Int) -> Double {
        var v = 1.0
        for _ in 0..<abs(e) { v = e < 0 ? v / 10 : v * 10 }
        return v
    }

    private static func pow2(_ e: Int) -> Double {
        var v = 1.0
        for _ in 0..<abs(e) { v = e < 0 ? v / 2 : v * 2 }
        return v
    }
}
