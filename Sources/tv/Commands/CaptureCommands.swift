import Capture
import Recording
import CommandLineParser
import ControlChannel
import FlowStore
import Foundation
import Settings
import TVCore
import TVHome

/// `tv packets FLOW` and `tv captures` (list, rotate, delete, room): the packets a TUN session
/// captured, and the pcapng files that hold them.
enum CaptureCommands {
    static let json = OptionSpec("json", help: "Print as JSON.")

    static let packetsSpec = CommandSpec(
        name: "packets", summary: "List one flow's captured packets: time, direction, size, what each meant, flags.",
        discussion: "Packets are captured for connections made through `tv exec` and `tv run --mode tun` (capture.enabled). Times are relative to the flow's first packet. tv keeps rows for the first 500 packets of a flow and counts all of them; a capped list names both numbers. Each packet is titled by what it meant: opened (SYN), accepted (SYN-ACK), data, delivery confirmed (a bare ACK), finished sending (FIN), cut off (RST, whatever else is set; an ICMP destination unreachable), too big for the path (ICMP fragmentation needed, ICMPv6 packet too big).",
        options: [json],
        positionals: [PositionalSpec("FLOW", help: "The flow's id, as `tv flows` prints it.")])

    static let capturesSpec = CommandSpec(
        name: "captures", summary: "List, rotate, delete capture files (pcapng) and see the room left.",
        discussion: "Capture files are $TV_HOME/captures/capture-NNNNNN.pcapng (packets of tv exec and --mode tun) and decrypted-YYYYMMDD-HHMMSS.pcapng (inspected connections' plaintext, capture.decrypted), readable by Wireshark and tshark. The one being written is marked Recording: rotate it to close it before deleting or sharing it. Both kinds rotate by capture.rotateBytes and capture.rotateAge and go by captures.maxBytes and captures.maxAge; decrypted ones also by content.expiry, whichever is sooner.",
        options: [json],
        subcommands: [
            CommandSpec(name: "list", summary: "The capture files, newest first, with size and time (the default).", options: [json]),
            CommandSpec(name: "rotate", summary: "Close the files the running sessions are writing (packets and decrypted) and begin the next."),
            CommandSpec(name: "delete", summary: "Delete one capture file; the connections stay in your history.",
                        options: [OptionSpec("yes", help: "Do not ask for confirmation.")],
                        positionals: [PositionalSpec("SEQ|NAME", help: "The capture's number, or a decrypted capture's name (decrypted-….pcapng), as `tv captures` lists them.")]),
            CommandSpec(name: "room", summary: "Room left against captures.maxBytes and captures.maxAge.", options: [json]),
        ],
        defaultSubcommand: "list")

    static let handlers: [String: @Sendable (Invocation) throws -> Int32] = [
        "packets": packets, "captures list": list, "captures rotate": rotate, "captures delete": delete, "captures room": room,
    ]

    static func catalog(_ inv: Invocation, writing: Bool) throws -> CaptureCatalog {
        let home = try inv.existingHome()
        return try CaptureCatalog.open(databasePath: home.databasePath, folder: CaptureFolder(path: home.captureDirectory), writing: writing)
    }

    static func flowID(_ text: String) throws -> Int64 {
        guard let id = Int64(text), id > 0 else { throw UsageRefusal("'\(text)' is not a flow id; `tv flows` lists them.") }
        return id
    }

    /// The packet list of `id` (rows and count), for `tv packets` and `tv flow`.
    /// - Parameter carried: the packets the tunnel counted for the flow (its row's).
    static func packetList(_ catalog: CaptureCatalog, flow id: Int64, carried: Int64 = 0) throws -> PacketListPresentation {
        PacketListPresentation(flow: id, rows: try catalog.packets(flow: UInt64(id), limit: 500),
                               count: try catalog.packetCount(flow: UInt64(id)), carried: carried)
    }

    static func packets(_ inv: Invocation) throws -> Int32 {
        let id = try flowID(inv.command.positionals[0])
        try FlowCommands.askSessionToFlush(inv)
        let store = try FlowCommands.openStoreForReading(inv)
        defer { store.close() }
        guard let record = try store.flow(id: id) else { throw ContentRefusal.noFlow(id) }
        let catalog = try catalog(inv, writing: false)
        defer { catalog.close() }
        let list = try packetList(catalog, flow: id, carried: (record.packetsUp ?? 0) + (record.packetsDown ?? 0))
        if inv.json {
            inv.console.line(list.json().serialized(pretty: true))
        } else {
            for line in list.lines() { inv.console.line(line) }
        }
        return 0
    }

    static func list(_ inv: Invocation) throws -> Int32 {
        let home = try inv.existingHome()
        let catalog = try catalog(inv, writing: false)
        defer { catalog.close() }
        // A listing deletes nothing: what a deletion stopped half way left is the next capture
        // writer's to sweep (it swept here too, and took a file restored under a deleted name).
        let files = try catalog.files()
        if inv.json {
            inv.console.line(CapturesPresentation.json(files, decrypted: DecryptedCaptureFiles.listing(home: home),
                                                       folder: home.captureDirectory).serialized(pretty: true))
            return 0
        }
        let on = (try? inv.settingsStore().read())?[SettingKeys.captureEnabled] ?? SettingKeys.captureEnabled.defaultValue
        let deleted = files.isEmpty ? ((try? catalog.deletedCount()) ?? 0) : 0
        for line in CapturesPresentation.lines(files, folder: home.captureDirectory, captureOn: on, deleted: deleted) { inv.console.line(line) }
        let decrypted = CapturesPresentation.decryptedLines(DecryptedCaptureFiles.listing(home: home))
        if !decrypted.isEmpty { inv.console.line("") }
        for line in decrypted { inv.console.line(line) }
        return 0
    }

    /// Asks every running session, `tv run` and each `tv exec` (a new-user trial found a `tv exec`'s
    /// file listed as Recording and `rotate` saying no session ran), to close its file.
    static func rotate(_ inv: Invocation) throws -> Int32 {
        let home = try inv.existingHome()
        var responses: [ControlResponse] = []
        for socket in AuditKeysNotifier.sockets(home: home) {
            do {
                responses.append(try ControlClient(path: socket).send(ControlRequest(command: CaptureRotationRequest.command), timeoutSeconds: 20))
            } catch ControlError.notRunning {
                continue
            }
        }
        guard !responses.isEmpty else {
            throw UsageRefusal("No tv session is running for \(home.path), so no capture file is being written; there is nothing to rotate.", exitCode: 3)
        }
        // A session that captures nothing writes no file: not a failure, and not said beside one
        // that rotated (a `tv run` in proxy mode beside a `tv exec` printed "nothing to rotate"
        // and the rotation, and exited 1: a trial). When none captures: as with no session, exit 3.
        let capturing = responses.filter { $0.values["outcome"] != CaptureRotationRequest.notCapturing }
        guard !capturing.isEmpty else { throw UsageRefusal(TerminalText.line(responses[0].message), exitCode: 3) }
        if capturing.count == 1, !capturing[0].ok { throw UsageRefusal(TerminalText.line(capturing[0].message), exitCode: 1) }
        for response in capturing { inv.console.line(TerminalText.line(response.message)) }
        return capturing.allSatisfy(\.ok) ? 0 : 1
    }

    static func delete(_ inv: Invocation) throws -> Int32 {
        let text = inv.command.positionals[0]
        // A decrypted capture is named by its file name, as `tv captures` lists it (it said "is
        // not a capture number": a trial).
        if let name = DecryptedCaptureFiles.name(of: text) { return try deleteDecrypted(inv, name: name) }
        guard let seq = Int64(text), seq > 0 else {
            throw UsageRefusal("'\(TerminalText.line(text))' is not a capture number or a decrypted capture's name (decrypted-….pcapng); `tv captures` lists them.")
        }
        let catalog = try catalog(inv, writing: true)
        defer { catalog.close() }
        guard let (file, deleted) = try catalog.file(seq), deleted == nil else { throw CaptureError.noSuchCapture(seq: seq) }
        if file.isRecording { throw CaptureError.recording(seq: seq) }
        let evidence = AuditEvidence.read(from: catalog.database).captures.contains(Int(seq))
        inv.console.note(CapturesPresentation.deletionWarning(file, evidence: evidence))
        guard try confirmDeletion(inv) else { return 1 }
        let freed = try catalog.delete(seq, nowMicros: FlowCommands.nowMicros())
        inv.console.line(CapturesPresentation.deleted(file, freed: freed))
        return 0
    }

    /// `--yes`, or the user's yes at a terminal (said "Nothing was deleted." when not).
    /// - Throws: `UsageRefusal` without `--yes` and without a terminal to ask at.
    static func confirmDeletion(_ inv: Invocation) throws -> Bool {
        if inv.yes { return true }
        guard inv.console.stdinIsTerminal else {
            throw UsageRefusal("Deleting a capture needs confirmation; add --yes when running without a terminal.")
        }
        guard inv.console.confirm("Delete it?") else {
            inv.console.line("Nothing was deleted.")
            return false
        }
        return true
    }

    /// `tv captures delete decrypted-….pcapng`: a closed decrypted capture, asked first as a
    /// packet capture is; never the one a session writes.
    static func deleteDecrypted(_ inv: Invocation, name: String) throws -> Int32 {
        let home = try inv.existingHome()
        guard let file = DecryptedCaptureFiles.listing(home: home).first(where: { $0.name == name }) else {
            throw CaptureError.noSuchDecryptedCapture(name: name)
        }
        if file.isRecording { throw CaptureError.decryptedRecording(name: name) }
        // Held by an audit session (its bundle cuts its decrypted.pcapng from these files): said first.
        var evidence = false
        if let catalog = try? catalog(inv, writing: false) {
            defer { catalog.close() }
            if let spans = try? AuditStore.spans(in: catalog.database) {
                evidence = DecryptedCaptureRetention.isEvidence(file, spans: spans.map { (from: $0.from, to: $0.to) })
            }
        }
        inv.console.note(CapturesPresentation.deletionWarning(decrypted: file, evidence: evidence))
        guard try confirmDeletion(inv) else { return 1 }
        let freed = try DecryptedCaptureFiles.delete(home: home, name: name)
        inv.console.line(CapturesPresentation.deleted(decrypted: name, freed: freed))
        return 0
    }

    static func room(_ inv: Invocation) throws -> Int32 {
        let catalog = try catalog(inv, writing: false)
        defer { catalog.close() }
        let files = try catalog.files()
        let maxBytes: SettingLimit
        let maxAge: SettingLimit
        let contentExpiry: ContentExpiry
        do {
            let record = try inv.settingsStore().read()
            maxBytes = SettingLimit.bytes(record[SettingKeys.capturesMaxBytes])
            maxAge = SettingLimit.micros(record[SettingKeys.capturesMaxAge])
            contentExpiry = ContentExpiry(text: record[SettingKeys.contentExpiry]) ?? .default
        } catch let error as UserFacingError {
            // The settings file cannot be read: the limits are unknown, so no comparison is made.
            inv.console.line("tv cannot read the settings (\(error.message)), so the room left against captures.maxBytes and captures.maxAge is not shown.")
            return 1
        }
        let evidence = Set(AuditEvidence.read(from: catalog.database).captures.map(Int64.init))
        // The decrypted captures count in what is used and expire by the sooner of captures.maxAge
        // and content.expiry (they hold plaintext); those audit sessions hold never go (all of
        // them, when which cannot be read).
        let spans = try? AuditStore.spans(in: catalog.database).map { (from: $0.from, to: $0.to) }
        let decryptedFiles = DecryptedCaptureFiles.listing(home: try inv.home())
        let decrypted = decryptedFiles.map { file in
            CaptureRoom.DecryptedFile(bytes: file.bytes, modifiedMicros: file.modified, isRecording: file.isRecording,
                                      isEvidence: spans.map { DecryptedCaptureRetention.isEvidence(file, spans: $0) } ?? true)
        }
        let decryptedBytes = decrypted.reduce(Int64(0)) { $0 + $1.bytes }
        var packetAge: Int64?
        if case .limit(let age) = maxAge { packetAge = age }
        let decryptedAge = DecryptedCaptureRetention.maxAge(capturesMaxAge: packetAge, contentExpiry: contentExpiry.microseconds)
        let room = CaptureRoom.evaluate(files: files, decrypted: decrypted, decryptedMaxAgeMicros: decryptedAge, evidence: evidence,
                                        maxBytes: (SettingKeys.capturesMaxBytes.name, maxBytes),
                                        maxAge: (SettingKeys.capturesMaxAge.name, maxAge), nowMicros: FlowCommands.nowMicros())
        let home = try inv.home()
        let diskFree = DiskSpace.freeBytes(at: home.captureDirectory) ?? DiskSpace.freeBytes(at: home.path)
        if inv.json {
            var json = CapturesPresentation.roomJSON(room, decryptedBytes: decryptedBytes)
            if case .object(var fields) = json, let diskFree {
                fields.append(("diskFreeBytes", .int(diskFree)))
                json = .object(fields)
            }
            inv.console.line(json.serialized(pretty: true))
            return 0
        }
        for line in CapturesPresentation.roomLines(room, decryptedBytes: decryptedBytes, diskFree: diskFree) { inv.console.line(line) }
        return 0
    }
}

extension CaptureCommands {
    /// The packet part of `tv flow FLOW`: the first rows and the count; nothing for a flow with
    /// no packets captured (most flows of the proxy modes).
    /// Every packet of `flow` in a capture (`packet_counts`), for `tv flow ID --json`.
    static func capturedCount(_ inv: Invocation, flow id: Int64) throws -> Int64 {
        let catalog = try catalog(inv, writing: false)
        defer { catalog.close() }
        return try catalog.packetCount(flow: UInt64(id))
    }

    /// Every packet captured of each of `flows`, by id (`tv flows --json`).
    static func capturedCounts(_ inv: Invocation, flows ids: [Int64]) throws -> [Int64: Int64] {
        let catalog = try catalog(inv, writing: false)
        defer { catalog.close() }
        let counts = try catalog.packetCounts(flows: ids.map { UInt64(bitPattern: $0) })
        return Dictionary(uniqueKeysWithValues: counts.map { (Int64(bitPattern: $0.key), $0.value) })
    }

    static func flowPacketLines(_ inv: Invocation, flow id: Int64, carried: Int64 = 0) throws -> [String] {
        let catalog = try catalog(inv, writing: false)
        defer { catalog.close() }
        let list = try packetList(catalog, flow: id, carried: carried)
        if list.absence == .noneCaptured { return [] }
        return list.summaryLines(limit: 10)
    }
}
