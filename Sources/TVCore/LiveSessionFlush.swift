import ControlChannel
import Dispatch
import TVHome

/// A reading command (`tv flows`, `tv flow`, `tv turns`, `tv export har`, `tv packets`, `tv packet`)
/// asks a live session of the same data folder to write what its writers hold before it reads
/// (flows, content, and in `--mode tun` the capture: its queue, rows and held-back tail; with
/// `capture.decrypted` the decrypted capture too), so a flow that just ended shows closed, with
/// its bytes and packets, instead of "open" or not at all (the writers batch for up to a few
/// hundred milliseconds, and a capture file's tail reaches the disk up to a second later).
///
/// Bounded twice, so a hung session never holds up a read: the session waits for its writers at
/// most `sessionWaitMillis` (500 ms), and the command waits for the answer at most
/// `answerWaitSeconds` (1 s); then it reads what is there, and says the newest rows may lag.
public enum LiveSessionFlush {
    /// The most the session waits for its writers before it answers.
    public static let sessionWaitMillis = 500
    /// The most a reading command waits for the session's answer.
    public static let answerWaitSeconds = 1
    /// The control-socket request (`flush`).
    public static let request = ControlRequest(command: "flush")

    public enum Outcome: Sendable, Equatable {
        /// No session runs for this data folder (or it cannot be reached): the file is current.
        case noSession
        /// The session wrote everything it held when asked.
        case flushed
        /// The session did not finish (or answer) within the bounds: the newest rows may lag.
        case behind
    }

    /// What the sessions answered: the outcome, and each session that says it is not saving
    /// flows (its answer's `values`: `UnsavedFlowsNotice`).
    public struct Answer: Sendable, Equatable {
        public var outcome: Outcome
        public var unsaved: [UnsavedFlowsNotice]

        public init(outcome: Outcome, unsaved: [UnsavedFlowsNotice] = []) {
            self.outcome = outcome
            self.unsaved = unsaved
        }
    }

    /// The session's side: every writer flushed in turn (flows first), each waiting no later than
    /// the shared deadline (`sessionWaitMillis` from now); every one is asked even after one was
    /// late. Ok when all finished in time. `values` go with the answer (the session's pid and
    /// `recording.*`: what it could not save).
    public static func answer(flushing writers: [(DispatchTime) -> Bool], values: [String: String] = [:]) -> ControlResponse {
        let deadline = DispatchTime.now() + .milliseconds(sessionWaitMillis)
        var allDone = true
        for flush in writers where !flush(deadline) { allDone = false }
        return allDone
            ? ControlResponse(ok: true, message: "flushed", values: values)
            : ControlResponse(ok: false, message: "the writers did not finish within \(sessionWaitMillis) ms", values: values)
    }

    /// Asks every session of `home` that runs: `tv run`'s, then each `tv exec`'s (a `tv exec`
    /// alone was no session to `tv flows --follow`: a trial). Never throws; waits at most
    /// `answerWaitSeconds` for each answer. Flushed when every session that answered did;
    /// behind when one did not in time.
    public static func ask(_ home: TVHome) -> Outcome {
        read(home).outcome
    }

    /// `ask`, with the sessions that said they are not saving flows.
    public static func read(_ home: TVHome) -> Answer {
        let answers = AuditKeysNotifier.sockets(home: home).map(ask(socket:)).filter { $0.outcome != .noSession }
        if answers.isEmpty { return Answer(outcome: .noSession) }
        return Answer(outcome: answers.contains { $0.outcome == .behind } ? .behind : .flushed, unsaved: answers.flatMap(\.unsaved))
    }

    static func ask(socket: String) -> Answer {
        guard let client = try? ControlClient(path: socket) else { return Answer(outcome: .noSession) }
        do {
            let response = try client.send(request, timeoutSeconds: answerWaitSeconds)
            return Answer(outcome: response.ok ? .flushed : .behind, unsaved: UnsavedFlowsNotice(values: response.values).map { [$0] } ?? [])
        } catch ControlError.noAnswer {
            return Answer(outcome: .behind)
        } catch {
            return Answer(outcome: .noSession)
        }
    }

    /// What a reading command says (on stderr) when the session was behind; nil otherwise.
    public static func notice(_ outcome: Outcome) -> String? {
        guard outcome == .behind else { return nil }
        return "The running tv session did not finish writing within \(answerWaitSeconds) s, so the newest flows may be missing or still shown open; run the command again in a moment."
    }
}
