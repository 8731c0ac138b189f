import FlowStore
import FlowTerms
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One capture file as `captures` lists it.
public struct CaptureFile: Sendable, Equatable {
    public var seq: Int64
    public var path: String
    /// µs since the epoch.
    public var startedMicros: Int64
    /// µs since the epoch; nil while recording (or left open by a writer that died, until the next
    /// writer starts and closes it).
    public var endedMicros: Int64?
    public var bytes: Int64
    public var packets: Int64
    /// The file's snap length (0: whole packets).
    public var snapLength: Int64
    /// True when a live writer holds the file (its flock): the one marked Recording.
    public var isRecording: Bool
    /// The file's size in the folder now (lstat), nil when it is not there: `bytes` is what the
    /// writer recorded, which a file cut or removed by hand no longer holds.
    public var bytesOnDisk: Int64?

    /// `bytesOnDisk` nil here means as recorded (`bytes`); set the property to nil for a file
    /// that is gone (`CaptureCatalog.files` asks the folder).
    public init(seq: Int64, path: String, startedMicros: Int64, endedMicros: Int64?, bytes: Int64, packets: Int64,
                snapLength: Int64, isRecording: Bool, bytesOnDisk: Int64? = nil) {
        self.seq = seq
        self.path = path
        self.startedMicros = startedMicros
        self.endedMicros = endedMicros
        self.bytes = bytes
        self.packets = packets
        self.snapLength = snapLength
        self.isRecording = isRecording
        self.bytesOnDisk = bytesOnDisk ?? bytes
    }

    /// The size of the file at `path` now, nil when there is none (or it cannot be asked).
    static func sizeOnDisk(_ path: String) -> Int64? {
        var st = stat()
        return lstat(path, &st) == 0 ? Int64(st.st_size) : nil
    }
}

/// One row of `packets`: where a packet of a flow is, and what it was.
public struct PacketRow: Sendable, Equatable {
    public var flow: UInt64
    /// 1-based index within the flow.
    public var n: Int64
    public var captureSeq: Int64
    /// Byte offset of the packet's Enhanced Packet Block in the capture file.
    public var fileOffset: Int64
    /// µs since the epoch.
    public var timeMicros: Int64
    public var direction: Direction
    /// Bytes on the wire and bytes in the file.
    public var originalLength: Int64
    public var includedLength: Int64
    /// Nil when not TCP.
    public var tcpFlags: UInt8?
    public var meaning: PacketMeaning

    public init(flow: UInt64, n: Int64, captureSeq: Int64, fileOffset: Int64, timeMicros: Int64, direction: Direction,
                originalLength: Int64, includedLength: Int64, tcpFlags: UInt8?, meaning: PacketMeaning) {
        self.flow = flow
        self.n = n
        self.captureSeq = captureSeq
        self.fileOffset = fileOffset
        self.timeMicros = timeMicros
        self.direction = direction
        self.originalLength = originalLength
        self.includedLength = includedLength
        self.tcpFlags = tcpFlags
        self.meaning = meaning
    }
}

/// Reading (and deleting) captures and packet rows; a command's own connection.
public struct CaptureCatalog {
    public let database: SQLiteDatabase
    public let folder: CaptureFolder

    public init(database: SQLiteDatabase, folder: CaptureFolder) {
        self.database = database
        self.folder = folder
    }

    /// How many captures' files were deleted (`tv captures delete`, the captures' limits).
    /// - Throws: `FlowStoreError`.
    public func deletedCount() throws -> Int {
        let select = try database.prepare("SELECT count(*) FROM captures WHERE deleted_at IS NOT NULL")
        guard try select.step() else { return 0 }
        return Int(select.int64(at: 0))
    }

    /// The captures whose files were not deleted, newest first. A file's path is always this
    /// folder's name for its seq, never the row's `path` column: a copied or moved data folder
    /// keeps the rows of the folder it came from, and `tv captures delete` in a copy deleted the
    /// original's file (a trial). The column says where the file was written, nothing more.
    public func files() throws -> [CaptureFile] {
        var out: [CaptureFile] = []
        let select = try database.prepare("""
            SELECT seq, path, started_at, ended_at, bytes, packets, snaplen, recording FROM captures
            WHERE deleted_at IS NULL ORDER BY seq DESC
            """)
        try select.forEachRow { row in
            let path = folder.filePath(row.int64(at: 0))
            let recording = row.int64(at: 7) != 0 && CaptureFolder.isRecording(path)
            var file = CaptureFile(seq: row.int64(at: 0), path: path, startedMicros: row.int64(at: 2), endedMicros: row.optionalInt64(at: 3),
                                   bytes: row.int64(at: 4), packets: row.int64(at: 5), snapLength: row.int64(at: 6), isRecording: recording)
            file.bytesOnDisk = CaptureFile.sizeOnDisk(path)
            out.append(file)
        }
        return out
    }

    /// The capture `seq` (also a deleted one: `deletedMicros` says so), nil when never made.
    public func file(_ seq: Int64) throws -> (file: CaptureFile, deletedMicros: Int64?)? {
        let select = try database.prepare("""
            SELECT seq, path, started_at, ended_at, bytes, packets, snaplen, recording, deleted_at FROM captures WHERE seq = ?
            """)
        try select.bind([.integer(seq)])
        guard try select.step() else { return nil }
        let path = folder.filePath(seq)
        let deleted = select.optionalInt64(at: 8)
        let recording = deleted == nil && select.int64(at: 7) != 0 && CaptureFolder.isRecording(path)
        var file = CaptureFile(seq: seq, path: path, startedMicros: select.int64(at: 2), endedMicros: select.optionalInt64(at: 3),
                               bytes: select.int64(at: 4), packets: select.int64(at: 5), snapLength: select.int64(at: 6), isRecording: recording)
        file.bytesOnDisk = CaptureFile.sizeOnDisk(path)
        return (file, deleted)
    }

    /// Every packet captured for `flow` (0 when none).
    public func packetCount(flow: UInt64) throws -> Int64 {
        try database.scalar("SELECT coalesce(max(packets), 0) FROM packet_counts WHERE flow_id = ?", [.integer(Int64(bitPattern: flow))]).int64 ?? 0
    }

    /// Every packet captured for each of `flows` (0 for a flow with none): one statement, a
    /// primary-key probe per flow.
    public func packetCounts(flows: [UInt64]) throws -> [UInt64: Int64] {
        guard !flows.isEmpty else { return [:] }
        let select = try database.prepare("SELECT coalesce(max(packets), 0) FROM packet_counts WHERE flow_id = ?")
        var out: [UInt64: Int64] = [:]
        for flow in flows {
            try select.bind([.integer(Int64(bitPattern: flow))])
            out[flow] = try select.step() ? select.int64(at: 0) : 0
        }
        return out
    }

    /// The packet rows of `flow` in order, at most `limit`.
    /// - Throws: `FlowStoreError`; `DamagedRow`-style values are skipped (a direction or meaning
    ///   this version does not know is not a packet it can describe).
    public func packets(flow: UInt64, limit: Int = 500) throws -> [PacketRow] {
        let select = try database.prepare("""
            SELECT n, capture_seq, file_offset, time_us, direction, orig_len, incl_len, tcp_flags, meaning FROM packets
            WHERE flow_id = ? ORDER BY n LIMIT ?
            """)
        try select.bind([.integer(Int64(bitPattern: flow)), .integer(Int64(limit))])
        var out: [PacketRow] = []
        try select.forEachRow { row in
            guard let direction = row.string(at: 4).flatMap(Direction.init(rawValue:)),
                  let meaning = row.string(at: 8).flatMap(PacketMeaning.init(rawValue:)) else { return }
            out.append(PacketRow(flow: flow, n: row.int64(at: 0), captureSeq: row.int64(at: 1), fileOffset: row.int64(at: 2),
                                 timeMicros: row.int64(at: 3), direction: direction, originalLength: row.int64(at: 5),
                                 includedLength: row.int64(at: 6), tcpFlags: row.optionalInt64(at: 7).map { UInt8(truncatingIfNeeded: $0) },
                                 meaning: meaning))
        }
        return out
    }

    /// The packet row `n` of `flow`, nil when there is none.
    public func packet(flow: UInt64, n: Int64) throws -> PacketRow? {
        try packets(flow: flow, limit: Int(max(n, 1))).first { $0.n == n }
    }

    /// Deletes capture `seq`'s file; its row stays (marked deleted, so its number is never given
    /// again) and so do the connections and packet rows recorded while it was written.
    /// The row is marked first, in one transaction, then the file is unlinked
    /// (`CaptureDeletion.order`): a crash in between leaves a file under a deleted row, which the
    /// next `sweepDeleted` removes, never a live row naming a file that is gone.
    /// - Returns: the bytes the unlinked file held (0 when it was already gone from the folder).
    /// - Throws: `CaptureError.noSuchCapture`, `.recording` (a live writer holds it),
    ///   `.cannotDelete` (the row is marked; the file stays for the next sweep), `.store`.
    @discardableResult
    public func delete(_ seq: Int64, nowMicros: Int64) throws -> Int64 {
        guard let (file, deleted) = try self.file(seq), deleted == nil else {
            // A file of that name the history does not describe is said, not left unexplained
            // ("There is no capture 1" beside capture-000001.pcapng in the folder: a re-check).
            let path = folder.filePath(seq)
            if access(path, F_OK) == 0 { throw CaptureError.notInHistory(seq: seq, path: path) }
            throw CaptureError.noSuchCapture(seq: seq)
        }
        if CaptureFolder.isRecording(file.path) { throw CaptureError.recording(seq: seq) }
        var freed: Int64 = 0
        for step in CaptureDeletion.order {
            switch step {
            case .markRowDeleted:
                let update = try database.prepare("UPDATE captures SET deleted_at = ?, recording = 0 WHERE seq = ? AND deleted_at IS NULL")
                try update.bind([.integer(nowMicros), .integer(seq)])
                try database.transaction { _ = try update.step() }
            case .unlinkFile:
                let size = CaptureFile.sizeOnDisk(file.path) ?? 0
                if unlink(file.path) == 0 {
                    freed = size
                } else if errno != ENOENT {
                    throw CaptureError.cannotDelete(path: file.path, reason: String(cString: strerror(errno)))
                }
            case .markRowUnlinked:
                try Self.markUnlinked(seq, nowMicros: nowMicros, in: database)
            }
        }
        return freed
    }

    /// Unlinks the files left under rows marked deleted (a deletion that stopped between its two
    /// steps, `CaptureDeletion`), unless a live writer holds one.
    /// - Returns: the sequences whose files were removed, ascending.
    /// - Throws: `FlowStoreError` reading the rows; a file that cannot be unlinked is left for
    ///   the next sweep.
    @discardableResult
    public func sweepDeleted() throws -> [Int64] {
        var deleted: [Int64] = []
        let select = try database.prepare("SELECT seq FROM captures WHERE deleted_at IS NOT NULL AND unlinked_at IS NULL ORDER BY seq")
        try select.forEachRow { deleted.append($0.int64(at: 0)) }
        var swept: [Int64] = []
        // Only names in the capture folder, whatever a row's path says.
        for seq in deleted {
            let path = folder.filePath(seq)
            let state = CaptureDeletion.State(rowDeleted: true, filePresent: access(path, F_OK) == 0)
            let recording = CaptureFolder.isRecording(path)
            if CaptureDeletion.sweeps(state, isRecording: recording), unlink(path) == 0 {
                swept.append(seq)
            }
            // Gone now (swept, or already): the deletion is done.
            if !recording, access(path, F_OK) != 0 { try? Self.markUnlinked(seq, nowMicros: Int64(Date().timeIntervalSince1970 * 1e6), in: database) }
        }
        return swept
    }

    /// Marks capture `seq`'s deletion finished (`captures.unlinked_at`): a file of its name is no
    /// longer the deletion's to remove.
    /// - Throws: `FlowStoreError`.
    public static func markUnlinked(_ seq: Int64, nowMicros: Int64, in database: SQLiteDatabase) throws {
        let update = try database.prepare("UPDATE captures SET unlinked_at = ? WHERE seq = ? AND deleted_at IS NOT NULL AND unlinked_at IS NULL")
        try update.bind([.integer(nowMicros), .integer(seq)])
        _ = try update.step()
    }
}

extension CaptureCatalog {
    /// A catalog on `databasePath`: read-only when `writing` is false (works on a full disk),
    /// else writable and migrated.
    /// - Throws: `FlowStoreError`.
    public static func open(databasePath: String, folder: CaptureFolder, writing: Bool) throws -> CaptureCatalog {
        if writing {
            let database = try SQLiteDatabase(path: databasePath)
            try FlowSchema.migrate(database)
            return CaptureCatalog(database: database, folder: folder)
        }
        return CaptureCatalog(database: try FlowSchema.openForReading(databasePath), folder: folder)
    }

    /// Closes the connection.
    public func close() { database.close() }
}
