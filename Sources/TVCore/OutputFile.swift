import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// Where a command that takes `-o FILE` writes: a file, or standard output when FILE is `-`
/// (as curl's `-o -` and tshark's `-w -`).
public enum OutputFile: Sendable, Equatable {
    /// A file, written whole or not at all (`FileModes.writeAtomically`).
    case path(String)
    /// Standard output, written as the bytes come (a failure halfway leaves what was written).
    case standardOutput

    /// The value of `-o`: `-` is standard output, anything else a file's path.
    public init(argument: String) {
        self = argument == "-" ? .standardOutput : .path(argument)
    }

    /// The file's path, or `standard output`, as the commands' sentences name it.
    public var name: String {
        switch self {
        case let .path(path): return path
        case .standardOutput: return "standard output"
        }
    }

    /// The file's path; nil for standard output.
    public var path: String? {
        if case let .path(path) = self { return path }
        return nil
    }

    /// Writes what `produce` hands its `write` function: to the file (mode `mode`) through
    /// `FileModes.writeAtomically`, or to `output`'s standard output in pieces of up to 64 KiB.
    /// Text written to a terminal goes through `CommandOutput.out` (escaped as `TerminalText`
    /// escapes); a pipe or a file gets the bytes as they are.
    /// - Throws: `FileWriteError` when the file cannot be written, `StandardOutputWriteError`
    ///   when standard output could not take it all; whatever `produce` throws.
    public func write(mode: mode_t, output: some CommandOutput, _ produce: (_ write: ([UInt8]) -> Void) throws -> Void) throws {
        switch self {
        case let .path(path):
            try FileModes.writeAtomically(to: path, mode: mode, produce)
        case .standardOutput:
            let terminal = output.stdoutIsTerminal
            var buffer: [UInt8] = []
            func flush(all: Bool) {
                guard terminal else {
                    output.bytes(buffer)
                    buffer.removeAll(keepingCapacity: true)
                    return
                }
                // Text is cut after an ASCII byte, so no UTF-8 sequence is split between writes.
                let cut = all ? buffer.count : (buffer.lastIndex(where: { $0 < 0x80 }).map { $0 + 1 } ?? 0)
                output.out(String(decoding: buffer[..<cut], as: UTF8.self))
                buffer.removeFirst(cut)
            }
            try produce { bytes in
                buffer += bytes
                if buffer.count >= 65_536 { flush(all: false) }
            }
            if !buffer.isEmpty { flush(all: true) }
            if let code = output.standardOutputFailure { throw StandardOutputWriteError(code: code) }
        }
    }
}
