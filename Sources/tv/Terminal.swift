import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The terminal under standard output, for the commands that draw to its size (`tv top`,
/// `tv activity`): its size, raw key input, the alternate screen. Thin: decisions live in TVCore.
enum Terminal {
    /// Rows and columns of the terminal on `fd` (TIOCGWINSZ), else `$LINES`/`$COLUMNS`, else nil.
    static func size(fd: Int32 = 1, environment: [String: String] = [:]) -> (rows: Int, columns: Int)? {
        var ws = winsize()
        if ioctl(fd, UInt(TIOCGWINSZ), &ws) == 0, ws.ws_col > 0, ws.ws_row > 0 {
            return (Int(ws.ws_row), Int(ws.ws_col))
        }
        if let c = environment["COLUMNS"].flatMap(Int.init), c > 0 {
            return (environment["LINES"].flatMap(Int.init) ?? 24, c)
        }
        return nil
    }

    /// Lets `signals` reach this process even if it was started with them blocked (a parent's
    /// mask is inherited), so the dispatch sources watching them fire.
    static func unblock(_ signals: [Int32]) {
        var set = sigset_t()
        sigemptyset(&set)
        for sig in signals { sigaddset(&set, sig) }
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    /// Standard input's settings before `enter`, to restore. Safe unsynchronized: only the main
    /// thread calls `enter` and `leave` (signals reach `tv top` as flags its main loop reads).
    nonisolated(unsafe) private static var saved: termios?

    /// Keys one at a time, no echo (standard input, when it is a terminal); the alternate screen,
    /// cursor hidden. `leave` undoes both; call it on every way out (exit, signals).
    static func enter() {
        if isatty(0) == 1 {
            var t = termios()
            if tcgetattr(0, &t) == 0 {
                saved = t
                t.c_lflag &= ~tcflag_t(ICANON | ECHO)
                withUnsafeMutableBytes(of: &t.c_cc) { cc in
                    cc[Int(VMIN)] = 0
                    cc[Int(VTIME)] = 0
                }
                tcsetattr(0, TCSANOW, &t)
            }
        }
        write(Array("\u{1B}[?1049h\u{1B}[?25l\u{1B}[H\u{1B}[2J".utf8))
    }

    /// Leaves the alternate screen, shows the cursor, restores standard input's settings.
    static func leave() {
        write(Array("\u{1B}[?25h\u{1B}[?1049l".utf8))
        if var t = saved { tcsetattr(0, TCSANOW, &t) }
    }

    /// One key from standard input, if one is waiting within `timeoutMillis`.
    static func key(timeoutMillis: Int32) -> UInt8? {
        var p = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, timeoutMillis) > 0, p.revents & Int16(POLLIN) != 0 else { return nil }
        var byte: UInt8 = 0
        return read(0, &byte, 1) == 1 ? byte : nil
    }

    /// Writes `bytes` to standard output, whole.
    static func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            var off = 0
            while off < raw.count {
                let n = Glibc.write(1, raw.baseAddress! + off, raw.count - off)
                if n < 0 { if errno == EINTR { continue }; return }
                off += n
            }
        }
    }
}
