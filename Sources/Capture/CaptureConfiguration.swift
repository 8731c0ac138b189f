/// What a capture writer needs: where the files and the database are, the snap length, rotation.
public struct CaptureConfiguration: Sendable {
    /// `$TV_HOME/captures`.
    public var folder: CaptureFolder
    /// `$TV_HOME/tunnelvision.sqlite3` (tables `captures`, `packets`, `packet_counts`).
    public var databasePath: String
    /// Bytes of each packet kept in the file (the IDB's if_snaplen); 0: whole packets.
    public var snapLength: Int
    public var rotation: CaptureRotation
    /// Rows kept per flow in `packets` (the seed's HistoryPolicy.packetsPerFlow); every packet is
    /// still written to the file and counted.
    public var rowsPerFlow: Int = 500
    /// How long the writer gathers packets after it wakes, ms.
    public var lingerMillis: Int = 50
    /// Seconds between fdatasync(2)s of the open file while packets arrive (also on rotation and
    /// stop; all of them off the writer thread, `BackgroundSync`). A killed writer loses nothing
    /// written (the page cache stays); this bounds what a power loss takes.
    public var syncInterval: Double = 5
    /// Seconds a packet may wait in the writer's direct buffer (the file's tail past its last
    /// whole block) before it is written to the file (`CaptureTailSchedule`).
    public var tailInterval: Double = 1
    /// Queue bounds (per batch).
    public var batchItems: Int = 16_384
    public var batchBytes: Int = 16 << 20
    /// Files written with O_DIRECT where the file system allows it (`CaptureFileAppender`);
    /// false: through the page cache.
    public var directWrites: Bool = true
    /// The O_DIRECT buffer, bytes (rounded down to whole blocks).
    public var directBufferBytes: Int = CaptureFileAppender.defaultBufferBytes
    /// What the writer may hold back so a connection's client secret precedes its Finished
    /// (`CaptureHoldPolicy`).
    public var holdLimits = CaptureHoldPolicy.Limits()
    /// Called on the writer thread each time a file was closed and the next opened (a rotation
    /// limit, or `tv captures rotate`): the session applies the capture limits then, rather than
    /// at its next periodic pass (a trial's folder held 457 MiB against `captures.maxBytes` 5MB
    /// for minutes). Must not block.
    public var onRotated: (@Sendable () -> Void)?

    public init(folder: CaptureFolder, databasePath: String, snapLength: Int, rotation: CaptureRotation) {
        self.folder = folder
        self.databasePath = databasePath
        self.snapLength = snapLength
        self.rotation = rotation
    }
}
