import FlowStore
import FlowTerms
import Foundation
import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// The TLS secrets of both legs of every inspected flow while an audit session records
/// (followed by `LiveAuditKeys` in `tv run` and `tv exec`), for the evidence bundle's `keys.log`: each NSS key log line
/// (SSLKEYLOGFILE format: label, client_random, secret) as OpenSSL derives it, appended to
/// `audit-keys/session-ID.log` in the data folder (folder 0700, file 0600; key material never
/// goes into the flow database). The handshake only copies the line into a bounded batch; a
/// writer thread appends it. A full batch drops the line and counts it (`counters`).
public final class AuditKeyLog: TLSSecretsRecorder {
    /// The key log of audit session `session` in `home`.
    public static func path(home: TVHome, session: Int64) -> String {
        folder(home: home) + "/session-\(session).log"
    }

    /// The folder of the key logs (`audit-keys` in the data folder).
    public static func folder(home: TVHome) -> String { home.path + "/audit-keys" }

    /// Makes the key logs and their folder the owner's alone again (bits only taken away), as
    /// the captures and content are at every session start: they hold TLS secrets, and a
    /// trial's `chmod 644` log in a 755 folder stayed so.
    public static func tightenModes(home: TVHome) {
        let folder = folder(home: home)
        var info = stat()
        guard lstat(folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { return }
        try? FileModes.makeDirectory(folder, mode: 0o700)
        FileModes.tightenFiles(in: folder)
    }

    /// Where the lines go.
    public let path: String
    private let queue: BoundedWriterQueue<AuditKeyLogThread>

    /// Opens (creates 0600, or appends to) `path`, its folder made 0700, and starts the writer.
    /// - Throws: `FileWriteError` when the folder or file cannot be made.
    public init(path: String, lingerMillis: Int = 50) throws {
        self.path = path
        let folder = PathText.folder(of: path)
        if mkdir(folder, 0o700) != 0 && errno != EEXIST {
            throw FileWriteError(path: folder, reason: Errno(errno).phrase)
        }
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FileWriteError(path: path, reason: Errno(errno).phrase) }
        _ = fchmod(fd, 0o600)
        let queue = BoundedWriterQueue<AuditKeyLogThread>(batch: AuditKeyLogBatch(), counters: AuditKeyLogCounters(),
                                                          lingerMillis: lingerMillis, lingerAfterWrite: false)
        self.queue = queue
        let thread = Thread { queue.run(AuditKeyLogThread(fd: fd)) }
        thread.name = "tv audit key log"
        thread.start()
    }

    deinit { queue.stop() }

    /// The lines of `first`, then those of `second` not already in it, each ending in a line
    /// feed (blank lines left out). Pure.
    static func merged(_ first: [UInt8], _ second: [UInt8]) -> [UInt8] {
        var seen = Set<ArraySlice<UInt8>>()
        var out: [UInt8] = []
        for line in (first + [0x0a] + second).split(separator: 0x0a) where seen.insert(line).inserted {
            out += line
            out.append(0x0a)
        }
        return out
    }

    /// Lines queued and dropped so far.
    public var counters: AuditKeyLogCounters { queue.read { counters, _, _ in counters } }

    /// Writes what is queued, closes the file and ends the thread.
    public func stop() { queue.stop() }

    public func record(keyLogLine line: UnsafeRawBufferPointer) { _ = queue.enqueue(line) }
}

/// The audit key log queue's counters (under its mutex).
public struct AuditKeyLogCounters: Sendable, Equatable {
    /// Lines taken into a batch.
    public var linesQueued: UInt64 = 0
    /// Lines dropped because the batch was full or the queue was stopping (never waited for).
    public var linesDropped: UInt64 = 0
    public init(linesQueued: UInt64 = 0, linesDropped: UInt64 = 0) {
        self.linesQueued = linesQueued
        self.linesDropped = linesDropped
    }
}

/// Key log lines waiting for the writer, each with its line feed, at most `maximumBytes`.
public struct AuditKeyLogBatch: WriterBatch {
    public typealias Offer = UnsafeRawBufferPointer
    public typealias Outcome = Bool
    public typealias Counters = AuditKeyLogCounters

    public private(set) var bytes: [UInt8] = []
    public private(set) var count = 0
    public let maximumBytes: Int

    public init(maximumBytes: Int = 1 << 20) { self.maximumBytes = maximumBytes }

    public var isWorthWritingNow: Bool { bytes.count * 2 >= maximumBytes }

    public mutating func add(_ line: UnsafeRawBufferPointer, refusing: Bool,
                             counters: inout AuditKeyLogCounters) -> (added: Int, outcome: Bool) {
        guard !refusing, bytes.count + line.count + 1 <= maximumBytes else {
            counters.linesDropped &+= 1
            return (0, false)
        }
        bytes.append(contentsOf: line)
        bytes.append(0x0a)
        count += 1
        counters.linesQueued &+= 1
        return (1, true)
    }

    public mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        count = 0
    }
}

/// The writer thread's side: appends each batch to the file, closes it at the end.
final class AuditKeyLogThread: QueueWriter {
    typealias Batch = AuditKeyLogBatch
    private let fd: Int32

    init(fd: Int32) { self.fd = fd }

    func tick() {}
    var idleDeadline: DispatchTime? { nil }
    func idleDeadlinePassed() {}

    func write(_ batch: AuditKeyLogBatch) -> Int {
        var done = 0
        while done < batch.bytes.count {
            let n = batch.bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return batch.count }
            done += n
        }
        return 0
    }

    func stop() { close(fd) }
}

/// Hands each key log line to two recorders (the capture's secrets and the audit key log).
struct SecretsFanOut: TLSSecretsRecorder {
    let first: any TLSSecretsRecorder
    let second: any TLSSecretsRecorder

    func record(keyLogLine line: UnsafeRawBufferPointer) {
        first.record(keyLogLine: line)
        second.record(keyLogLine: line)
    }

    func noSecretWillCome(clientRandom: [UInt8]) {
        first.noSecretWillCome(clientRandom: clientRandom)
        second.noSecretWillCome(clientRandom: clientRandom)
    }
}
