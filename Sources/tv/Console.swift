import Foundation
import Synchronization
import TVCore
import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// Where a command writes: standard output for results, standard error for notices and errors.
///
/// Text is written through `TerminalText.guarded`: renderers escape each field that came from the
/// network (`TerminalText.line`), and anything they missed that could drive the terminal is still
/// escaped here. `bytes` alone writes as it is.
struct Console {
    /// When set, what would go to standard output and standard error is kept here instead
    /// (`tv web` runs a command in-process for its API and answers with what it printed).
    var capture: ConsoleCapture? = nil

    /// Writes text to standard output.
    func out(_ text: String) { write(1, Array(TerminalText.guarded(text).utf8)) }
    /// Writes one line to standard output.
    func line(_ text: String = "") { out(text + "\n") }
    /// Writes one line to standard error.
    func note(_ text: String) {
        let bytes = Array(TerminalText.guarded(text + "\n").utf8)
        if let capture { capture.append(bytes, error: true) } else { write(2, bytes) }
    }
    /// Writes to standard output what `produce` hands its `line` function, one line at a time,
    /// gathered up to 64 KiB per write(2): for long output made while it is written.
    func lines(_ produce: (_ line: (String) -> Void) -> Void) {
        var buffer: [UInt8] = []
        produce { text in
            buffer += TerminalText.guarded(text).utf8
            buffer.append(0x0A)
            if buffer.count >= 65_536 {
                write(1, buffer)
                buffer.removeAll(keepingCapacity: true)
            }
        }
        if !buffer.isEmpty { write(1, buffer) }
    }

    /// Writes raw bytes to standard output.
    func bytes(_ data: [UInt8]) { write(1, data) }

    /// Whether standard output is a terminal (binary output is then refused).
    var stdoutIsTerminal: Bool { capture == nil && isatty(1) == 1 }
    /// Whether standard input is a terminal (questions can be asked).
    var stdinIsTerminal: Bool { capture == nil && isatty(0) == 1 }

    /// Asks a yes/no question on standard error and reads the answer from standard input;
    /// anything but y/yes is no, and so is end of input.
    func confirm(_ question: String) -> Bool {
        if capture != nil { return false }
        write(2, Array(TerminalText.guarded(question + " [y/N] ").utf8))
        guard let answer = readLine() else { return false }
        return ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased())
    }

    /// The errno of the first write to standard output that failed; nil while none did (a
    /// reader that went away, EPIPE, is not counted: `tv flows | head` is not an error).
    var standardOutputFailure: Int32? {
        let code = Console.outputFailure.load(ordering: .relaxed)
        return code == 0 ? nil : code
    }

    /// The first errno a write to standard output gave (0: none), process-wide: every `Console`
    /// writes to the same descriptor. Once set, standard output is written no more.
    private static let outputFailure = Atomic<Int32>(0)

    private func write(_ fd: Int32, _ data: [UInt8]) {
        if let capture { return capture.append(data, error: fd == 2) }
        if fd == 1 && Console.outputFailure.load(ordering: .relaxed) != 0 { return }
        data.withUnsafeBytes { raw in
            var off = 0
            while off < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + off, raw.count - off)
                if n < 0 {
                    let code = errno
                    if code == EINTR { continue }
                    if fd == 1 && code != EPIPE {
                        _ = Console.outputFailure.compareExchange(expected: 0, desired: code, ordering: .relaxed)
                    }
                    return
                }
                off += n
            }
        }
    }
}

/// What a captured command printed: standard output and standard error apart.
final class ConsoleCapture: Sendable {
    private let kept = Mutex<(out: [UInt8], err: [UInt8])>(([], []))
    func append(_ bytes: [UInt8], error: Bool) {
        kept.withLock { if error { $0.err += bytes } else { $0.out += bytes } }
    }
    /// Standard output so far.
    var out: [UInt8] { kept.withLock { $0.out } }
    /// Standard error so far, as text.
    var err: String { String(decoding: kept.withLock { $0.err }, as: UTF8.self) }
}

/// `tv turns` and `tv export har` write what `TurnsReading` and `HARReading` hand them here.
extension Console: CommandOutput {}
