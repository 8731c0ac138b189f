import Recording
@testable import HTTPReading

let up = Direction.clientToServer
let down = Direction.serverToClient

/// Bytes of a string.
func b(_ text: String) -> [UInt8] { Array(text.utf8) }

/// Turns from (direction, bytes) pairs, 1 ms apart, under `budget`.
func turns(_ parts: [(Direction, [UInt8])], budget: RecordingBudget = RecordingBudget()) -> [RecordedTurn] {
    TurnRecorder.turns(from: parts.enumerated().map { Chunk($1.0, at: Int64($0) * 1_000, $1.1) }, budget: budget)
}

/// The conversation `turns` read as, or nil (with an issue recorded) when they were not HTTP.
func conversation(_ turns: [RecordedTurn], sourceLocation: SourceLocation = #_sourceLocation) -> HTTPConversation? {
    switch HTTPReader.read(turns) {
    case let .conversation(conversation): return conversation
    case let .notHTTP(reason):
        Issue.record("not read as HTTP: \(reason)", sourceLocation: sourceLocation)
        return nil
    case let .startDeleted(deleted, http2):
        Issue.record("not read as HTTP: \(deleted.unreadable(http2: http2))", sourceLocation: sourceLocation)
        return nil
    }
}

import Testing
import FlowTerms

extension HTTPBody {
    /// The decoded bytes (nil without codings or when nothing could be decoded), read through
    /// a fresh `BoundedBodyReader` as a view would.
    var decoded: [UInt8]? { ContentDecoding.decode(transferred, codings: encodings, complete: completeness.isComplete).decoded }
    /// The note a view would show about decoding.
    var decodingNote: String? {
        encodings.isEmpty ? nil : ContentDecoding.decode(transferred, codings: encodings, complete: completeness.isComplete).note
    }
    /// What a view shows: decoded when it could be, else as transferred.
    var content: [UInt8] { decoded ?? transferred }
}
