import Wire
import Capture
import FlowTerms
import TVHome
import Tunnel

/// `tv packet FLOW N`: one packet down to its bytes (the seed's Packet detail). The facts its
/// row keeps (when inside the connection, direction, size, what it meant and its flags), the
/// header grid read from its bytes (`PacketHeaderGrid`), then the bytes as hex + ASCII. Whatever
/// keeps the bytes from being drawn, or drawn whole, is said in its own sentence: a deleted
/// capture, a read failure (worth trying again), a snap length cut (permanent), the display cap.
public struct PacketDetailPresentation: Sendable, Equatable {
    /// Bytes drawn at most (the display's cap; the file keeps them all).
    public static let displayCap = 2_048

    public var row: PacketRow
    /// The time of the flow's first packet (µs since the epoch): `when` counts from it.
    public var firstPacketMicros: Int64
    /// The capture file's name (`capture-000003.pcapng`).
    public var fileName: String
    /// The file's snap length (0: whole packets).
    public var snapLength: Int
    public var outcome: CaptureRecord.Outcome

    public init(row: PacketRow, firstPacketMicros: Int64, fileName: String, snapLength: Int, outcome: CaptureRecord.Outcome) {
        self.row = row
        self.firstPacketMicros = firstPacketMicros
        self.fileName = fileName
        self.snapLength = snapLength
        self.outcome = outcome
    }

    /// The bytes read, when they were.
    var bytes: [UInt8]? {
        if case .bytes(let b) = outcome { return b }
        return nil
    }

    /// Whether the packet's bytes were read (drawn, perhaps cut by the snap length or the
    /// display cap); false when `absence` says why not.
    public var bytesShown: Bool { bytes != nil }

    /// The dissection of the bytes read (nil when none were, or they are not IP).
    var dissection: Result<PacketDissection, PacketDissectionFailure>? { bytes.map(PacketDissector.dissect) }

    /// The sentence for what kept the bytes from being drawn, nil when they were read.
    public var absence: String? {
        switch outcome {
        case .bytes: return nil
        case .deleted:
            return "\(fileName) was deleted: those bytes are gone; the connection stays in your history."
        case .readFailed(let reason):
            return "The bytes could not be read from \(fileName) (\(reason)); try `tv packet \(row.flow) \(row.n)` again."
        case .damaged(let reason):
            return "\(fileName) is damaged where this packet was written (\(reason)): it was changed or cut after tv wrote it, "
                + "so these bytes cannot be drawn; the connection stays in your history."
        case .neverWritten(let bytes):
            return "Packet \(row.n) of flow \(row.flow) never reached \(fileName): the session writing it ended (killed, or crashed) before it wrote its last packets, "
                + "and the file keeps the \(Units.grouped(bytes)) bytes written before; the connection stays in your history."
        case .notYetWritten:
            return "Packet \(row.n) of flow \(row.flow) is still in the capture writer's buffer, not yet in \(fileName); "
                + "it is written within a second (or when tv stops): try `tv packet \(row.flow) \(row.n)` again."
        case let .notThisPacket(length, micros):
            let differs = Int64(length) != row.originalLength
                ? "\(Units.grouped(Int64(length))) bytes, this one was \(Units.grouped(row.originalLength))"
                : "captured \(Units.duration(microseconds: abs(micros - row.timeMicros))) \(micros < row.timeMicros ? "before" : "after") this one"
            return "The record at this packet's place in \(fileName) is of another packet (\(differs)), so it is not drawn."
        }
    }

    /// The sentence for a packet the snap length cut, nil when it was kept whole.
    public var snapLengthCut: String? {
        guard let bytes, bytes.count < row.originalLength else { return nil }
        return "The capture kept \(Units.grouped(Int64(bytes.count))) of this packet's \(Units.grouped(row.originalLength)) bytes: "
            + "its snap length (\(snapLength)) cut the rest when it was written, and that is permanent; "
            + "`tv settings set capture.snaplen BYTES` keeps more from the next session."
    }

    /// The sentence for the display cap, nil when every byte read is drawn.
    public var displayCapNote: String? {
        guard let bytes, bytes.count > Self.displayCap else { return nil }
        return "Showing the first \(Units.grouped(Int64(Self.displayCap))) of the \(Units.grouped(Int64(bytes.count))) bytes kept "
            + "(the display's cap, 2 KB); the file holds them all."
    }

    /// Why the bytes read do not read as IP, nil when they do.
    var notIP: String? {
        guard case .failure(let failure)? = dissection else { return nil }
        switch failure {
        case .tooShortForIP(let count): return "The \(count) bytes kept are too few to read an IP header from."
        case .notIP(let version): return "These bytes are not an IP packet (version \(version))."
        case .badHeaderLength(let length): return "These bytes are not a valid IPv4 packet (header length \(length))."
        }
    }

    /// Where the bytes kept ran out, for a cut packet (the grid shows what was before it).
    var cutNote: String? {
        guard case .success(let d)? = dissection, let layer = d.cut else { return nil }
        switch layer {
        case .ip: return "The bytes kept end inside the IP header."
        case .transport: return "The bytes kept end inside the transport header."
        case .payload: return nil
        }
    }

    var sections: [PacketHeaderGrid.Section] {
        guard case .success(let d)? = dissection else { return [] }
        return PacketHeaderGrid.sections(d)
    }

    /// The lines people read.
    public var lines: [String] {
        var out = ["Packet \(row.n) of flow \(row.flow)"]
        let flags = row.tcpFlags.map { TCPFlags.acronyms($0) } ?? ""
        out.append("  when        " + Units.offsetSeconds(row.timeMicros - firstPacketMicros) + " after the flow's first packet ("
                   + Units.utcMicros(row.timeMicros) + ")")
        out.append("  direction   " + DirectionWords.label(row.direction))
        out.append("  size        " + Units.grouped(row.originalLength) + " bytes")
        out.append("  meaning     " + row.meaning.words + (flags.isEmpty ? "" : " (\(flags))"))
        for section in sections {
            out.append(section.title)
            let width = section.fields.map(\.name.count).max() ?? 0
            for field in section.fields {
                // One line each: a DNS name carrying a newline drew a forged line (a trial).
                out.append("  " + field.name + String(repeating: " ", count: width - field.name.count + 2) + TerminalText.line(field.value))
            }
        }
        for note in [cutNote, notIP].compactMap({ $0 }) { out.append(note) }
        if let absence {
            out.append(absence)
            return out
        }
        let kept = bytes ?? []
        out.append("Bytes (\(Units.grouped(Int64(kept.count))) kept, \(fileName) at offset \(row.fileOffset))")
        out += BytePreview.hexDump(Array(kept.prefix(Self.displayCap))).map { "  " + $0 }
        for note in [snapLengthCut, displayCapNote].compactMap({ $0 }) { out.append(note) }
        return out
    }

    /// `--json`: the row's facts, the header grid, the bytes (hex, up to the display cap) and
    /// each sentence under its own key (null when it does not apply).
    public var json: JSONValue {
        func opt(_ s: String?) -> JSONValue { s.map { .string($0) } ?? .null }
        let kept = bytes
        return .object([
            ("flow", .int(Int64(bitPattern: row.flow))), ("n", .int(row.n)),
            ("timeMicros", .int(row.timeMicros)), ("offsetMicros", .int(row.timeMicros - firstPacketMicros)),
            ("direction", .string(row.direction.rawValue)), ("size", .int(row.originalLength)),
            ("meaning", .string(row.meaning.rawValue)),
            // As `tv packets --json` has them (a list of acronyms; the capture's sequence number,
            // its file's name beside it): the two disagreed (a trial).
            ("tcpFlags", row.tcpFlags.map { PacketListPresentation.flagsJSON($0) } ?? .null),
            ("capture", .int(row.captureSeq)), ("captureFile", .string(fileName)), ("fileOffset", .int(row.fileOffset)),
            ("headers", PacketHeaderGrid.json(sections)),
            ("bytesKept", kept.map { .int(Int64($0.count)) } ?? .null),
            ("hex", kept.map { .string($0.prefix(Self.displayCap).map { Self.hexByte($0) }.joined()) } ?? .null),
            ("absence", opt(absence)), ("snapLengthCut", opt(snapLengthCut)), ("displayCap", opt(displayCapNote)),
            ("notIP", opt(notIP)),
        ])
    }

    static func hexByte(_ b: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(b >> 4)], digits[Int(b & 0xf)]])
    }
}
