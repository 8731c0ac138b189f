import Capture
import TVHome

/// `tv packet FLOW N` from the stores to what is printed: the packet's row, the flow's first
/// row (when counts from it), the capture's row (deleted or not, its snap length), then its
/// record read at the row's offset (`CaptureRecord`).
public enum PacketDetailReading {
    /// - Throws: `PacketDetailRefusal` when the flow has no packet `n`; `FlowStoreError` when
    ///   the database cannot be read.
    public static func read(_ catalog: CaptureCatalog, flow: UInt64, n: Int64) throws -> PacketDetailPresentation {
        guard let row = try catalog.packet(flow: flow, n: n) else {
            throw PacketDetailRefusal.noPacket(flow: flow, n: n, count: try catalog.packetCount(flow: flow))
        }
        let first = n == 1 ? row : (try catalog.packet(flow: flow, n: 1) ?? row)
        let fileName = CaptureFolder.fileName(row.captureSeq)
        guard let (file, deleted) = try catalog.file(row.captureSeq) else {
            return PacketDetailPresentation(row: row, firstPacketMicros: first.timeMicros, fileName: fileName, snapLength: 0, outcome: .deleted)
        }
        // A closed file that ends before the row's offset never got those bytes (its writer was
        // killed with them queued): said as that, not as a file damaged after tv wrote it (a trial).
        // A file its killed writer left open, not yet repaired by the next start, ends where the
        // kill stopped it, its last packet perhaps cut: anything past that end, or cut there,
        // never reached it either (a trial read "changed or cut after tv wrote it" there).
        let leftOpen = !file.isRecording && file.endedMicros == nil
        let written = leftOpen ? min(file.bytes, file.bytesOnDisk ?? 0) : file.bytes
        var outcome: CaptureRecord.Outcome = deleted != nil
            ? .deleted
            : !file.isRecording && row.fileOffset >= written ? .neverWritten(fileBytes: written)
            : CaptureRecord.read(path: file.path, offset: row.fileOffset, snapLength: Int(file.snapLength),
                                 rowOriginalLength: Int(row.originalLength), rowTimeMicros: row.timeMicros, isRecording: file.isRecording)
        if leftOpen, case .damaged = outcome { outcome = .neverWritten(fileBytes: written) }
        return PacketDetailPresentation(row: row, firstPacketMicros: first.timeMicros, fileName: fileName,
                                        snapLength: Int(file.snapLength), outcome: outcome)
    }
}

/// Why `tv packet` has nothing to show.
public enum PacketDetailRefusal: UserFacingError, Equatable {
    /// The flow has no packet row `n` (`count` packets were captured for it).
    case noPacket(flow: UInt64, n: Int64, count: Int64)

    public var message: String {
        switch self {
        case let .noPacket(flow, n, count):
            if count == 0 {
                return "Flow \(flow) has no captured packets (packets are captured for tv exec and --mode tun sessions with capture.enabled); `tv flow \(flow)` shows what is known of it."
            }
            if n > count || count <= 500 {
                // A list capped at 500 says so (it read "lists them" of 1,860: a trial).
                let list = count > 500 ? "lists the first 500 of them (only the capture file has the rest)" : "lists them"
                return "Flow \(flow) has no packet \(n): \(Units.grouped(count)) were captured; `tv packets \(flow)` \(list)."
            }
            return "Flow \(flow)'s packet \(n) was captured, but tv keeps rows only for the first 500 of a connection's \(Units.grouped(count)), so it cannot be shown here; only its capture file has it, while that is kept (`tv captures`)."
        }
    }
}
