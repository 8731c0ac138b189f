@testable import TVCore

/// What a reading hands the console, piece by piece, in order.
final class RecordedOutput: CommandOutput {
    enum Piece: Equatable {
        case out(String)
        case line(String)
        case lines([String])
        case note(String)
        case bytes([UInt8])
    }

    private(set) var pieces: [Piece] = []
    let stdoutIsTerminal: Bool

    init(terminal: Bool = false) { stdoutIsTerminal = terminal }

    func out(_ text: String) { pieces.append(.out(text)) }
    func line(_ text: String) { pieces.append(.line(text)) }
    func lines(_ produce: (_ line: (String) -> Void) -> Void) {
        var made: [String] = []
        produce { made.append($0) }
        pieces.append(.lines(made))
    }
    func note(_ text: String) { pieces.append(.note(text)) }
    func bytes(_ data: [UInt8]) { pieces.append(.bytes(data)) }

    /// The standard output lines, in order, however they were handed over.
    var stdoutLines: [String] {
        pieces.flatMap { piece -> [String] in
            switch piece {
            case let .line(text): return [text]
            case let .lines(made): return made
            default: return []
            }
        }
    }
}
