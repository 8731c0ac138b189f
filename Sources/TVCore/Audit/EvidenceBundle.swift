import Capture
import FlowStore
import Foundation
import Recording
import TVHome

/// One file of an evidence bundle, gathered before anything is written.
public struct BundleFile: Sendable, Equatable {
    /// Its name inside the archive (ASCII, at most 100 bytes: `Ustar.header`).
    public var name: String
    public var bytes: [UInt8]
    public init(name: String, bytes: [UInt8]) {
        self.name = name
        self.bytes = bytes
    }
}

/// What `tv audit bundle` asks for.
public struct EvidenceBundleRequest: Sendable, Equatable {
    public var session: Int64
    /// Decrypted content (turns, the HAR, the decrypted capture); `--no-content` leaves it out.
    public var includeContent: Bool
    /// TLS secrets (the key log and the pcapng's Decryption Secrets Blocks); `--no-keys`.
    public var includeKeys: Bool
    /// tv's version, for the manifest and the HAR's creator.
    public var tvVersion: String
    /// The machine's name (gethostname).
    public var machine: String
    /// µs since the epoch, when the bundle is made.
    public var now: Int64

    public init(session: Int64, includeContent: Bool, includeKeys: Bool, tvVersion: String, machine: String, now: Int64) {
        self.session = session
        self.includeContent = includeContent
        self.includeKeys = includeKeys
        self.tvVersion = tvVersion
        self.machine = machine
        self.now = now
    }
}

/// An evidence bundle gathered in memory, told to the user before it is written (`contents`),
/// then written as one gzip-compressed ustar archive with `manifest.json` first.
///
/// The archive's files:
/// - `manifest.json`: every other file with its size and SHA-256, tv's version, the CA's
///   fingerprint, the machine's name, the session's span and settings (`BundleManifest`);
/// - `project.json`, `session.json`, `markers.json`: the audit records;
/// - `flows.json`: `{"flows": [...]}`, each flow as `tv flows --json` prints it, then its
///   `serverChain` (`BundleServerChain`) (five-tuple,
///   names and their origin, program, times, bytes, packets, status, the handshake facts): the
///   session's flows, and the connections open across its start (`"carriedIntoSession": true`);
/// - content, the HAR and the captures hold what happened within the span only, for every flow;
/// - `packets.pcapng`: the packets captured during the session's span (TUN modes), with the
///   Decryption Secrets Blocks of its inspected flows unless `--no-keys`;
/// - `keys.log`: the TLS secrets from those blocks (client legs) and from the session's
///   `AuditKeyLog` (both legs), each line once (SSLKEYLOGFILE format);
/// - with content: `decrypted.pcapng` (the decrypted capture's packets in the span, when one
///   was kept), `requests.har` (HAR 1.2 of the HTTP read from kept turns), `content/turns.json`
///   and one `content/flow-ID-turn-N.bin` per kept turn (its bytes as recorded).
public struct EvidenceBundle: Sendable, Equatable {
    public var session: AuditSession
    /// Flows in `flows.json`: the session's, and those carried into it.
    public var flows: Int
    /// Of `flows`, the connections open across the session's start (`carriedIntoSession` in
    /// `flows.json`; `AuditStore.flowIDs(carriedInto:)`).
    public var carriedFlows: Int
    /// Flows whose kept content is in the bundle.
    public var contentFlows: Int
    /// Packets cut into `packets.pcapng` (TUN modes' captures).
    public var packets: Int
    /// Packets cut into `decrypted.pcapng`.
    public var decryptedPackets: Int
    /// Key log lines in `keys.log`.
    public var keyLines: Int
    public var request: EvidenceBundleRequest
    /// Every file but the manifest, in archive order.
    public var files: [BundleFile]
    /// The manifest's fields other than the file list.
    public var manifest: BundleManifest

    /// Bytes of the files before compression.
    public var bytes: Int64 { files.reduce(Int64(0)) { $0 + Int64($1.bytes.count) } }

    /// Gathers the bundle of `request.session` from the stores and captures of `home`.
    /// - Throws: `AuditError.noSession`, `FlowStoreError`, `ContentError`, `PcapngCut.Problem`
    ///   (as `EvidenceBundleError.capture`).
    /// The manifest's `caSHA256` is the root the session's run minted from, as recorded in its
    /// settings (`AuditRecording.settingsKeys`); null when no run recorded one (no session ran
    /// while it recorded, or it was recorded before tv kept it), never the data folder's CA at
    /// bundle time, which may have been remade since or never used (`tv run --ca`).
    public static func gather(home: TVHome, request: EvidenceBundleRequest) throws -> EvidenceBundle {
        let store = try FlowStore(readingHome: home)
        defer { store.close() }
        let session = try store.audit.session(request.session)
        let project = try store.audit.project(named: session.projectName)
        let markers = try store.audit.markers(session: session.id)
        let end = session.ended ?? request.now
        let ids = try store.audit.flowIDs(session: session.id)
        // Connections open across the start: what they carried in the span is the session's too.
        let carried = try store.audit.flowIDs(carriedInto: session.started)
        var records: [FlowRecord] = []
        for id in ids + carried { if let record = try store.flow(id: id) { records.append(record) } }
        // Newest first, as `tv flows` lists them.
        records.sort { ($0.startTime, $0.id) > ($1.startTime, $1.id) }
        let carriedIDs = Set(carried)
        var files: [BundleFile] = []
        func json(_ name: String, _ value: JSONValue) {
            files.append(BundleFile(name: name, bytes: Array((value.serialized(pretty: true) + "\n").utf8)))
        }
        json("project.json", .object([("id", .int(project?.id ?? session.projectID)), ("name", .string(session.projectName)),
                                      ("note", .string(project?.note ?? "")), ("created", project.map { JSONValue.int($0.created) } ?? JSONValue.null)]))
        json("session.json", AuditPresentation.json(session))
        json("markers.json", .array(markers.map(AuditPresentation.json)))
        let certificates = try store.certificates(Set(records.flatMap(\.certificateChain)))
        // Each flow's captured packets, as `tv flows --json` gives them (the whole connection's,
        // like its other totals).
        let catalog = try CaptureCatalog.open(databasePath: home.databasePath, folder: CaptureFolder(path: home.captureDirectory), writing: false)
        let captured = try catalog.packetCounts(flows: records.map { UInt64(bitPattern: $0.id) })
        catalog.close()
        json("flows.json", .object([("flows", .array(records.map { record in
            let flow = BundleServerChain.json(record, packetsCaptured: captured[UInt64(bitPattern: record.id)] ?? 0, certificates: certificates)
            guard carriedIDs.contains(record.id), case .object(let fields) = flow else { return flow }
            return .object(fields + [("carriedIntoSession", .bool(true))])
        }))]))

        var packets = 0, decryptedPackets = 0
        var keyLog: [UInt8] = []
        // Both legs' secrets the audit key log kept (`LiveAuditKeys`: while the session recorded
        // and a tv session inspected). When there is one, its connections are the session's: the
        // captures' secrets of other connections in the span are left out.
        let recorded = FileManager.default.contents(atPath: AuditKeyLog.path(home: home, session: session.id)).map { Array($0) } ?? []
        let randoms = recorded.isEmpty ? nil : PcapngCut.clientRandoms(keyLog: recorded)
        let raw = try captureFiles(store: store, home: home, from: session.started, to: end)
        if !raw.isEmpty {
            var cut = PcapngCut(from: session.started, to: end, keepSecrets: request.includeKeys, clientRandoms: randoms,
                                comment: "tv audit session \(session.id): packets captured from \(session.started) to \(end) µs")
            for path in raw { try add(path, to: &cut) }
            if cut.packets > 0 {
                files.append(BundleFile(name: "packets.pcapng", bytes: cut.output))
                packets += cut.packets
                keyLog = cut.keyLog
            }
        }
        if !recorded.isEmpty { keyLog = AuditKeyLog.merged(keyLog, recorded) }
        if request.includeKeys && !keyLog.isEmpty { files.append(BundleFile(name: "keys.log", bytes: keyLog)) }

        var contentFlows = 0
        if request.includeContent {
            var cut = PcapngCut(from: session.started, to: end, keepSecrets: false,
                                comment: "tv audit session \(session.id): the decrypted capture from \(session.started) to \(end) µs")
            for path in decryptedCaptures(home: home) { try add(path, to: &cut) }
            if cut.packets > 0 {
                files.append(BundleFile(name: "decrypted.pcapng", bytes: cut.output))
                decryptedPackets = cut.packets
            }
            let content = try ContentStore(readingHome: home)
            defer { content.close() }
            var index: [JSONValue] = []
            var withContent: [Int64] = []
            for record in records.reversed() {
                // The turns the span saw begin (a flow's turns before `tv audit start` or after
                // its stop are not the session's: a trial's bundle held a request made after it).
                let turns = ((try? content.recordedTurns(flow: record.id)) ?? []).filter {
                    (session.started...end).contains(record.startTime + $0.turn.startOffset)
                }
                guard !turns.isEmpty else { continue }
                withContent.append(record.id)
                for turn in turns {
                    let name = "content/flow-\(record.id)-turn-\(turn.turn.number).bin"
                    files.append(BundleFile(name: name, bytes: turn.bytes))
                    index.append(.object([("flow", .int(record.id)), ("turn", .int(Int64(turn.turn.number))),
                                          ("direction", .string(turn.turn.direction.rawValue)),
                                          ("startOffset", .int(turn.turn.startOffset)),
                                          ("keptBytes", .int(Int64(turn.turn.keptBytes))),
                                          ("seenBytes", .int(Int64(turn.turn.seenBytes))),
                                          ("truncated", .bool(turn.turn.truncated)),
                                          ("incomplete", .bool(turn.turn.incomplete)), ("file", .string(name))]))
                }
            }
            contentFlows = withContent.count
            if !withContent.isEmpty { json("content/turns.json", .array(index)) }
            // Every flow's requests of the span, from its kept content or else its rows (as `tv
            // export har` writes them): a request of a flow without content was in the decrypted
            // capture and `tv requests`, and not in the HAR (a re-check).
            if let har = try har(home: home, flows: records.reversed().map(\.id), span: session.started...end, store: store, content: content, version: request.tvVersion) {
                files.append(BundleFile(name: "requests.har", bytes: har))
            }
        }
        let settings = AuditPresentation.settings(session.settings)
        var manifest = BundleManifest(tvVersion: request.tvVersion, machine: request.machine, caSHA256: settings["caSHA256"],
                                      created: request.now, project: session.projectName, session: session.id,
                                      from: session.started, to: session.ended, settings: session.settings,
                                      contentIncluded: files.contains { $0.name == "decrypted.pcapng" || $0.name.hasPrefix("content/") },
                                      keysIncluded: files.contains { $0.name == "keys.log" }, files: [])
        manifest.caSHA256s = AuditPresentation.roots(settings)
        return EvidenceBundle(session: session, flows: records.count, carriedFlows: carried.count, contentFlows: contentFlows, packets: packets,
                              decryptedPackets: decryptedPackets, keyLines: keyLog.split(separator: 0x0A).count, request: request, files: files, manifest: manifest)
    }

    /// Writes the archive to `path` (0600) whole or not at all: `manifest.json` first, then the
    /// files, gzip-compressed. A failure halfway leaves no file (`FileModes.writeAtomically`).
    /// - Throws: `FileWriteError`, `EvidenceBundleError`.
    public func write(to path: String) throws {
        try write(to: .path(path), output: SilentOutput())
    }

    /// Writes the archive to `file` as `write(to:)` does, or to `output`'s standard output as it
    /// is made (`-o -`).
    /// - Throws: `FileWriteError`, `EvidenceBundleError`.
    public func write(to file: OutputFile, output: some CommandOutput) throws {
        var manifest = self.manifest
        for file in files {
            guard let hash = SHA256Digest.hex(file.bytes) else { throw EvidenceBundleError.digest }
            manifest.files.append(.init(name: file.name, bytes: Int64(file.bytes.count), sha256: hash))
        }
        guard let text = BundleManifest.sealed(manifest.json.serialized(pretty: true) + "\n") else { throw EvidenceBundleError.digest }
        let all = [BundleFile(name: BundleManifest.fileName, bytes: Array(text.utf8))] + files
        let mtime = request.now / 1_000_000
        guard let gzip = GzipCompressor() else { throw EvidenceBundleError.compression }
        try file.write(mode: 0o600, output: output) { write in
            for file in all {
                guard let header = Ustar.header(name: file.name, size: Int64(file.bytes.count), mtime: mtime) else {
                    throw EvidenceBundleError.badName(file.name)
                }
                header.withUnsafeBytes { gzip.take($0, emit: write) }
                file.bytes.withUnsafeBytes { gzip.take($0, emit: write) }
                [UInt8](repeating: 0, count: Ustar.padding(Int64(file.bytes.count))).withUnsafeBytes { gzip.take($0, emit: write) }
            }
            Ustar.trailer.withUnsafeBytes { gzip.take($0, emit: write) }
            gzip.finish(emit: write)
        }
    }

    /// Live capture files whose time overlaps the span, oldest first.
    static func captureFiles(store: FlowStore, home: TVHome, from: Int64, to: Int64) throws -> [String] {
        try store.audit.captures(from: from, to: to).map { home.captureDirectory + "/" + CaptureFolder.fileName(Int64($0)) }
    }

    /// The decrypted capture files (`captures/decrypted-….pcapng`), by name (their start time).
    static func decryptedCaptures(home: TVHome) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: home.captureDirectory)) ?? []
        return names.filter { $0.hasPrefix("decrypted-") && $0.hasSuffix(".pcapng") }.sorted().map { home.captureDirectory + "/" + $0 }
    }

    static func add(_ path: String, to cut: inout PcapngCut) throws {
        guard let data = FileManager.default.contents(atPath: path) else { return }  // deleted meanwhile
        do { try cut.add(Array(data), file: path) } catch let PcapngCut.Problem.unreadable(file, reason) {
            throw EvidenceBundleError.capture(file: file, reason: reason)
        }
    }

    /// The HAR of `flows` (nil when none holds a request), through `HARReading` and a file in a
    /// folder of its own (mkdtemp, 0700) in the data folder, both removed at once. The folder is
    /// this call's alone: a name by process id was shared by `tv web`'s threads, and of two
    /// bundles made at once one took the other session's requests, and verified (a trial).
    static func har(home: TVHome, flows: [Int64], span: ClosedRange<Int64>, store: FlowStore, content: ContentStore, version: String) throws -> [UInt8]? {
        var template = Array((home.path + "/.audit-bundle-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw FileWriteError(path: home.path + "/.audit-bundle-XXXXXX", reason: String(cString: strerror(errno)))
        }
        let folder = String(cString: made)
        let path = folder + "/requests.har"
        defer { unlink(path); rmdir(folder) }
        do {
            try HARReading(flowIDs: flows, file: .path(path), creatorVersion: version, itemized: false, span: span)
                .run(flows: store, content: content, to: SilentOutput())
        } catch ContentRefusal.noHTTP {
            return nil
        }
        return FileManager.default.contents(atPath: path).map { Array($0) }
    }
}

/// What could not be done while making a bundle.
public enum EvidenceBundleError: UserFacingError, Equatable {
    case capture(file: String, reason: String)
    case badName(String)
    case digest
    case compression

    public var message: String {
        switch self {
        case let .capture(file, reason):
            return "The bundle was not written: \(file) cannot be read (\(reason)); `tv captures` shows the files."
        case let .badName(name):
            return "The bundle was not written: the file name '\(TerminalText.line(name))' does not fit a tar header; report this as a bug."
        case .digest:
            return "The bundle was not written: OpenSSL could not compute SHA-256; check the OpenSSL installation."
        case .compression:
            return "The bundle was not written: zlib could not start; check the zlib installation."
        }
    }
}

/// A `CommandOutput` that drops what it is handed (the HAR written inside a bundle speaks
/// through the bundle's own summary).
struct SilentOutput: CommandOutput {
    func out(_ text: String) {}
    func line(_ text: String) {}
    func lines(_ produce: (_ line: (String) -> Void) -> Void) { produce { _ in } }
    func note(_ text: String) {}
    func bytes(_ data: [UInt8]) {}
    var stdoutIsTerminal: Bool { false }
}
