import FlowStore
import Foundation
import Recording
import TVHome

/// What the three stores occupy now, each beside its limit (`tv storage`).
public struct StorageFigures: Sendable, Equatable {
    /// The history: the database file (with its WAL), its rows, and the part SQLite keeps free
    /// after deletions (given back only by `tv storage compact`).
    public var databaseBytes: Int64
    public var freeBytes: Int64
    public var flows: Int
    public var oldestFlowStart: Int64?
    /// The capture files.
    public var captureFiles: Int
    public var captureBytes: Int64
    public var recordingCapture: Int?
    /// Capture files in the folder the history never described (a database moved aside, files
    /// copied in): left alone by retention and not counted against the limits or the total.
    public var unknownCaptureFiles: Int = 0
    public var unknownCaptureBytes: Int64 = 0
    /// The decrypted captures (`captures/decrypted-*.pcapng`, under the captures' limits), and
    /// the one a running session writes (its name).
    public var decryptedCaptureFiles: Int
    public var decryptedCaptureBytes: Int64
    public var recordingDecryptedCapture: String?
    /// Decrypted content: the segment files and the kept turns.
    public var contentBytes: Int64
    public var contentTurns: Int
    /// The limits in force.
    public var limits: StorageLimits

    public init(databaseBytes: Int64, freeBytes: Int64, flows: Int, oldestFlowStart: Int64?, captureFiles: Int,
                captureBytes: Int64, recordingCapture: Int?, decryptedCaptureFiles: Int = 0, decryptedCaptureBytes: Int64 = 0,
                recordingDecryptedCapture: String? = nil, contentBytes: Int64, contentTurns: Int, limits: StorageLimits) {
        self.databaseBytes = databaseBytes
        self.freeBytes = freeBytes
        self.flows = flows
        self.oldestFlowStart = oldestFlowStart
        self.captureFiles = captureFiles
        self.captureBytes = captureBytes
        self.recordingCapture = recordingCapture
        self.decryptedCaptureFiles = decryptedCaptureFiles
        self.decryptedCaptureBytes = decryptedCaptureBytes
        self.recordingDecryptedCapture = recordingDecryptedCapture
        self.contentBytes = contentBytes
        self.contentTurns = contentTurns
        self.limits = limits
    }

    /// Everything tv keeps in the data folder's three stores.
    public var totalBytes: Int64 { databaseBytes + captureBytes + decryptedCaptureBytes + contentBytes }

    /// Reads the figures of `home` (read-only: works on a full disk).
    /// - Throws: `FlowStoreError`.
    /// The file being recorded is the one a live writer holds locked.
    public static func read(home: TVHome, limits: StorageLimits) throws -> StorageFigures {
        let database = try FlowSchema.openForReading(home.databasePath)
        defer { database.close() }
        func integer(_ sql: String) throws -> Int64? {
            if case let .integer(n) = try database.scalar(sql) { return n }
            return nil
        }
        var bytes: Int64 = 0
        for suffix in ["", "-wal", "-shm"] {
            var st = stat()
            if stat(home.databasePath + suffix, &st) == 0 { bytes += Int64(st.st_size) }
        }
        let free = (try integer("PRAGMA freelist_count") ?? 0) * (try integer("PRAGMA page_size") ?? 0)
        // The hourly rollup's sum: exact, and one row per hour of history instead of a count of every flow.
        var flows = 0
        if case let .integer(total) = try database.scalar(FlowActivityPlan.totalSQL) { flows = Int(total) }
        let oldest = try integer("SELECT min(start_time) FROM flows")
        let captures = CaptureFiles(home: home)
        let recording = captures.recording()
        let rows = try CaptureRowSequences.read(database)
        let unknown = captures.unknown(rows: Set(rows.live.keys), deleted: rows.deleted, recording: recording)
        let files = captures.onDisk().filter { unknown[$0.key] == nil }
        let content = try ContentStore(readingHome: home)
        defer { content.close() }
        let usage = try content.usage()
        let decrypted = DecryptedCaptureFiles(home: home).onDisk()
        var figures = StorageFigures(databaseBytes: bytes, freeBytes: free, flows: flows, oldestFlowStart: oldest,
                                     captureFiles: files.count, captureBytes: files.values.reduce(0) { $0 + $1.bytes },
                                     recordingCapture: recording, decryptedCaptureFiles: decrypted.count,
                                     decryptedCaptureBytes: decrypted.reduce(0) { $0 + $1.bytes },
                                     recordingDecryptedCapture: decrypted.first(where: \.isRecording)?.name,
                                     contentBytes: usage.fileBytes, contentTurns: usage.turns, limits: limits)
        figures.unknownCaptureFiles = unknown.count
        figures.unknownCaptureBytes = unknown.values.reduce(0, +)
        return figures
    }
}
