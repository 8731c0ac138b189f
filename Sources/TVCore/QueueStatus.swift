import Capture
import FlowStore
import Tunnel

/// Status values of the writer queues the other keys did not carry (added for `tv run
/// --metrics`; keys are added, never renamed): the flow writer's queue depth and what the
/// decrypted capture's queue dropped.
public enum QueueStatus {
    /// Flow events waiting in the flow writer's queue now (`FlowWriterCounters.pending`).
    public static let flowQueueEvents = "recording.flowQueueEvents"
    /// Begin and end events the decrypted capture's full queue dropped (only with `capture.decrypted`).
    public static let decryptedEventsDropped = "decryptedCapture.eventsDropped"
    /// Plaintext bytes the decrypted capture's full queue dropped (only with `capture.decrypted`).
    public static let decryptedBytesDropped = "decryptedCapture.bytesDropped"
    /// How the decrypted capture's file is written: `direct` (O_DIRECT) or `buffered` (the file
    /// system refused O_DIRECT); absent before its first write.
    public static let decryptedWriteMode = "decryptedCapture.writeMode"
    /// The decrypted capture file being written (its name in the captures folder); absent while
    /// none is open (before the first inspected flow, after a rotation, while writes fail).
    public static let decryptedRecording = "decryptedCapture.recording"
    /// Packets written to the decrypted capture's files, and how many files were opened.
    public static let decryptedPacketsWritten = "decryptedCapture.packetsWritten"
    public static let decryptedFilesOpened = "decryptedCapture.filesOpened"

    /// The values, as decimal text; the decrypted capture's only when it runs.
    public static func values(flows: FlowWriterCounters, decrypted: DecryptedCaptureCounters?) -> [String: String] {
        var values = [flowQueueEvents: String(flows.pending)]
        if let decrypted {
            values[decryptedEventsDropped] = String(decrypted.eventsDropped)
            values[decryptedBytesDropped] = String(decrypted.bytesDropped)
            if let mode = decrypted.writeMode { values[decryptedWriteMode] = mode.rawValue }
            if let name = decrypted.recording { values[decryptedRecording] = name }
            values[decryptedPacketsWritten] = String(decrypted.packetsWritten)
            values[decryptedFilesOpened] = String(decrypted.filesOpened)
        }
        return values
    }
}
