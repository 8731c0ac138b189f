import Capture
import FlowTerms
import Settings
import TVHome
import Tunnel
import ControlChannel

/// The packet capture of a TUN session (`tv exec`, `--mode tun`): the writer made from the
/// settings as the session starts (`capture.enabled`, `capture.snaplen`, rotation), what the
/// session says about it, its status values and `tv captures rotate`. A capture that cannot
/// start does not stop the session: it is said once, and the session runs without it.
final class SessionCapture: Sendable {
    /// Nil when capture is off or could not start.
    let writer: CaptureWriter?
    /// One sentence for the start (nil: nothing to say beyond the banner).
    let notice: String?

    /// - Parameters:
    ///   - record: the settings as the session starts (their values apply until it ends).
    ///   - onRotated: called when a file closes and the next opens (`CaptureConfiguration.onRotated`).
    init(home: TVHome, record: SettingsRecord, onRotated: (@Sendable () -> Void)? = nil) {
        guard record[SettingKeys.captureEnabled] else {
            writer = nil
            notice = nil
            return
        }
        let plan = CaptureSettingsPlan(record)
        var configuration = CaptureConfiguration(folder: CaptureFolder(path: home.captureDirectory), databasePath: home.databasePath,
                                                 snapLength: plan.snapLength, rotation: plan.rotation)
        configuration.rowsPerFlow = 500
        configuration.onRotated = onRotated
        do {
            writer = try CaptureWriter(configuration: configuration)
            notice = plan.unreadable.isEmpty ? nil : CaptureSettingsPlan.unreadableSentence(plan.unreadable)
        } catch {
            writer = nil
            notice = "Packets are not captured this session: " + CaptureSessionWords.reason(error)
        }
    }

    /// The recorder the TUN engine gets.
    var recorder: (any PacketRecorder)? { writer }

    /// `capture.*` values for `tv status`.
    var statusValues: [String: String] {
        guard let writer else { return ["capture.enabled": "off"] }
        let queue = writer.queueCounters
        let counters = writer.counters
        var values = [
            "capture.enabled": "on",
            "capture.packetsWritten": String(counters.packetsWritten),
            "capture.packetsDropped": String(queue.packetsDropped),
            "capture.packetsFailed": String(counters.packetsFailed),
            "capture.secretsDropped": String(queue.secretsDropped),
            // Packets waiting for their connection's client secret (`CaptureHoldPolicy`).
            "capture.packetsHeld": String(counters.packetsHeld),
            "capture.snapLength": String(writer.snapLength),
        ]
        if let seq = counters.recordingSequence {
            values["capture.recording"] = String(seq)
            values["capture.recordingPackets"] = String(counters.recordingPackets)
        }
        if let failure = counters.lastFailure { values["capture.lastFailure"] = failure }
        // `direct`: O_DIRECT, past the page cache; `buffered`: the file system refused O_DIRECT.
        if let mode = counters.writeMode { values["capture.writeMode"] = mode.rawValue }
        return values
    }

    /// `tv captures rotate`: closes the file being written and opens the next.
    /// - Returns: ok and one sentence.
    func rotate() -> (ok: Bool, message: String, values: [String: String]) {
        guard let writer else { return (false, CaptureSessionWords.notCapturing, ["outcome": CaptureRotationRequest.notCapturing]) }
        let (closed, opened) = writer.rotate()
        return (opened != nil, CaptureSessionWords.rotated(closed: closed, opened: opened),
                ["closed": closed.map(String.init) ?? "", "opened": opened.map(String.init) ?? ""])
    }

    /// Writes what is queued and closes the file. Safe twice.
    /// - Returns: what to say when packets were lost (nil: none).
    @discardableResult
    func stop() -> String? {
        guard let writer else { return nil }
        writer.stop()
        let counters = writer.counters
        return CapturesPresentation.lossSentence(dropped: writer.queueCounters.packetsDropped, failed: counters.packetsFailed, why: counters.firstFailure)
    }
}

/// The session's capture settings read into values: snap length, rotation, and the names of
/// settings whose text could not be read (their limit is off for the session, and that is said).
struct CaptureSettingsPlan: Equatable {
    var snapLength: Int
    var rotation: CaptureRotation
    var unreadable: [String]

    init(_ record: SettingsRecord) {
        let snap = record[SettingKeys.captureSnapLength]
        snapLength = snap <= 0 ? 0 : min(snap, 262_144)
        unreadable = []
        rotation = CaptureRotation()
        switch SettingLimit.bytes(record[SettingKeys.captureRotateBytes]) {
        case .limit(let n): rotation.maximumBytes = n
        case .off: break
        case .unreadable: unreadable.append(SettingKeys.captureRotateBytes.name)
        }
        switch SettingLimit.micros(record[SettingKeys.captureRotateAge]) {
        case .limit(let n): rotation.maximumAgeMicros = n
        case .off: break
        case .unreadable: unreadable.append(SettingKeys.captureRotateAge.name)
        }
    }

    static func unreadableSentence(_ names: [String]) -> String {
        "tv could not read \(names.joined(separator: " and ")), so capture files are not rotated by \(names.count == 1 ? "it" : "them") this session; `tv settings set NAME VALUE` with a value like 64MB or 1h fixes it."
    }
}

/// The control request `tv captures rotate` sends to each running session (`tv run`'s control
/// socket, every `tv exec`'s own): the session closes its capture file and opens the next.
public enum CaptureRotationRequest {
    public static let command = "rotate-capture"
    /// The answer's `outcome` value when the session captures nothing: no capture file is
    /// being written (the command exits 3, tv web answers 409, as with no session at all).
    public static let notCapturing = "not-capturing"
}

/// `tv captures rotate`'s answer from a session (`tv run`'s control socket, a `tv exec`'s own):
/// its packet capture's file and its decrypted capture's file are closed and the next begun. The
/// decrypted capture was not rotated at all, and a `tv run` writing one said it captured nothing
/// (a trial).
enum SessionCaptureRotation {
    static func answer(packets: SessionCapture?, decrypted: DecryptedCapture?) -> ControlResponse {
        let capturing = packets?.writer != nil
        guard capturing || decrypted != nil else {
            return ControlResponse(ok: false, message: CaptureSessionWords.notCapturing, values: ["outcome": CaptureRotationRequest.notCapturing])
        }
        var ok = true
        var sentences: [String] = []
        var values: [String: String] = [:]
        if capturing, let packets {
            let result = packets.rotate()
            ok = result.ok
            sentences.append(result.message)
            values = result.values
        }
        if let decrypted {
            let (closed, running) = decrypted.rotate()
            sentences.append(CaptureSessionWords.decryptedRotated(closed: closed, running: running))
            values["decryptedClosed"] = closed ?? ""
        }
        return ControlResponse(ok: ok, message: sentences.joined(separator: " "), values: values)
    }
}

/// Sentences of a session's capture.
enum CaptureSessionWords {
    static let notCapturing = "The running session captures no packets (capture.enabled is off, or it is not a TUN session) and writes no decrypted capture (capture.decrypted is off, or it inspects nothing); there is nothing to rotate."

    /// The decrypted capture's part of a rotation's answer.
    static func decryptedRotated(closed: String?, running: Bool) -> String {
        guard running else { return "The decrypted capture has stopped; there is nothing to rotate." }
        guard let closed else {
            return "No decrypted capture file is open (no inspected packet since the start or the last rotation, or its writes fail: see `tv status`); the next opens with the next inspected packet."
        }
        return "Closed the decrypted capture \(closed); the next opens with the next inspected packet."
    }

    static func rotated(closed: Int64?, opened: Int64?) -> String {
        switch (closed, opened) {
        case let (closed?, opened?): return "Closed capture \(closed); capture \(opened) is being recorded now."
        case let (nil, opened?): return "Capture \(opened) is being recorded now."
        case let (closed?, nil): return "Closed capture \(closed), but the next file could not be opened; packets are not captured until one can be (see `tv status`)."
        case (nil, nil): return "No capture file could be opened; packets are not captured (see `tv status`)."
        }
    }

    static func reason(_ error: any Error) -> String {
        if let error = error as? any UserFacingError { return error.message }
        return "\(error)"
    }
}
