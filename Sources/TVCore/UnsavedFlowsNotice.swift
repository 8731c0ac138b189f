import TVHome

/// A live session reports that flows are not being saved (a full disk, say): the history a
/// reading command shows lacks its newest flows, and the rows it shows open may have ended
/// since (pure). Said by `tv flows` and `tv storage` (text, and `unsavedFlows` in their JSON),
/// and first by `tv diag`. During a trial's full disk `tv flows` showed the last saved rows as
/// open ("2 min 09 s so far", all false), `tv storage` 1,052 connections against 6,326 accepted,
/// and `tv diag` "flows 0 not saved", none saying why.
public struct UnsavedFlowsNotice: Sendable, Equatable {
    /// The session's process id (nil when it named none).
    public var pid: Int32?
    /// What the session did not save (its `recording.*` values).
    public var losses: RecordingLosses

    /// The notice for a session whose flow writes fail now, or whose flows wait in memory;
    /// nil otherwise.
    public init?(pid: Int32?, losses: RecordingLosses) {
        guard losses.flowsFailing || losses.flowsWaiting > 0 else { return nil }
        self.pid = pid
        self.losses = losses
    }

    /// From a session's `status` or flush answer values (`pid`, `recording.*`); nil when they
    /// say flows are being saved, or carry no recording values (an older session).
    public init?(values: [String: String]) {
        guard let losses = RecordingLosses(values: values) else { return nil }
        self.init(pid: values["pid"].flatMap { Int32($0) }, losses: losses)
    }

    /// "The newest flows are missing: the running tv session (pid 4242) cannot save them
    /// (3,569 wait in memory, 0 given up so far; rows shown open may have ended since). The disk
    /// holding the data folder is full (…)…": the cause is the sentence of the failure's kind, as
    /// `tv status` says it.
    public var sentence: String {
        let session = pid.map { "the running tv session (pid \($0))" } ?? "the running tv session"
        let counts = "\(Units.grouped(Int64(losses.flowsWaiting))) wait in memory, \(Units.grouped(Int64(losses.flowsNotSaved))) given up so far"
        let cause = losses.lastFlowError.map { " " + TerminalText.line($0) } ?? ""
        return "The newest flows are missing: \(session) cannot save them (\(counts); rows shown open may have ended since).\(cause)"
    }

    /// `{"pid", "flowsWaiting", "flowsGivenUp", "cause", "sentence"}`.
    public var json: JSONValue {
        .object([("pid", pid.map { .int(Int64($0)) } ?? .null), ("flowsWaiting", .int(Int64(losses.flowsWaiting))),
                 ("flowsGivenUp", .int(Int64(losses.flowsNotSaved))), ("cause", losses.lastFlowError.map(JSONValue.string) ?? .null),
                 ("sentence", .string(sentence))])
    }

    /// The `unsavedFlows` field of a reading command's JSON: one object per session not saving,
    /// an empty array when every session saves (or none runs).
    public static func json(_ notices: [UnsavedFlowsNotice]) -> JSONValue {
        .array(notices.map(\.json))
    }
}
