/// How a failed client-leg handshake ends the flow: a pure decision from `PinningDetector`'s
/// verdict, applied by `ConnectionMachine.clientHandshakeEnded`.
extension ConnectionMachine {
    /// The flow's failure, and what pinning memory is told: a client that lacks tv's root is
    /// remembered at once (`.remember`); possible pinning is weighed (`suspectPinning`); a client
    /// that left, or aborted for another reason, is never held against anyone.
    /// - Parameter key: the client, host and port to remember against (nil: memory does not learn,
    ///   `--no-pinning-detection`).
    static func clientLegEnding(_ verdict: PinningDetector.Verdict, key: PinKey?) -> (failure: ConnectionFailure, memory: Command?) {
        switch verdict {
        case .lacksRoot(let alert):
            let failure = ConnectionFailure.clientLacksRoot(alert: alert, passThrough: key)
            return (failure, key.map { .remember($0, .lacksRoot, reason: ConnectionFailure.lacksRootCause(alert: alert)) })
        case .possiblePinning(let sign):
            return (.possiblePinning(sign, passThrough: nil), key.map { .suspectPinning($0, sign) })
        case .clientLeft: return (.clientGone(reset: false, .beforeHandshake), nil)
        case .aborted(let alert): return (.clientAborted(alert: alert), nil)
        case .failed(let reason): return (.clientHandshakeFailed(reason), nil)
        case .fine: return (.internalError("a failed handshake judged fine"), nil)
        }
    }
}
