import Synchronization

/// Whether a session's TLS contexts make NSS key log lines at all: off until a recorder first
/// wants them (the TUN capture's Decryption Secrets Blocks, an audit session's key log), then on
/// for the rest of the session.
///
/// OpenSSL makes a line only for a context that has a key log callback, and making one is costly:
/// libssl writes each byte of the client random and the secret with its own `sprintf`, ten lines
/// per inspected connection (five per leg), 582 k instructions a connection, 6.4 % of tv's
/// instructions per new HTTPS connection (callgrind `conn` row, `Scripts/bench-callgrind`,
/// 2026-12-03). A session with no capture, no audit and no key log file reads none of them, so
/// its contexts get their callback only when this turns on (`ProxyConfiguration.keyLogSwitch`).
///
/// One-way: once on, it stays on. The callback is then set on contexts that loops are running
/// handshakes on, and OpenSSL reads it twice per line (a NULL check, then the call), so it must
/// never go back to NULL (`tv_keylog_arm`). A handshake that reads NULL makes no line: as before
/// a recorder wanted them, its secrets go nowhere.
public final class KeyLogSwitch: Sendable {
    private struct State: Sendable {
        var isOn: Bool
        var actions: [@Sendable () -> Void] = []
    }

    private let state: Mutex<State>

    /// - Parameter on: whether lines are wanted from the start.
    public init(on: Bool = false) {
        state = Mutex(State(isOn: on))
    }

    /// True once `turnOn` was called (or the switch was made on).
    public var isOn: Bool { state.withLock { $0.isOn } }

    /// Lines are wanted from now on: runs every action `whenOn` was given, once each, on this
    /// thread (outside the switch's lock). Calling it again does nothing.
    public func turnOn() {
        let actions = state.withLock { state -> [@Sendable () -> Void] in
            guard !state.isOn else { return [] }
            state.isOn = true
            defer { state.actions = [] }
            return state.actions
        }
        for action in actions { action() }
    }

    /// Runs `action` once lines are wanted: now (on this thread) when the switch is already on,
    /// otherwise at `turnOn`, on its thread.
    public func whenOn(_ action: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.isOn { return true }
            state.actions.append(action)
            return false
        }
        if now { action() }
    }
}
