/// Reads message bodies for one command — `tv turns --http`, `tv export har`, any later view —
/// in bounded memory: a body's content coding is undone only when it is asked for, as a stream,
/// within one `DecodingBudget` for the whole command (issue 12 §1).
///
/// Two steps per body: `measure` decodes it once, keeping only the first bytes, a count and
/// whether it reads as text; `stream` then hands out what is shown, piece by piece (decoding
/// again when the body is longer than what `measure` kept). No more than one piece of one body
/// is held at a time. Not thread-safe: one command, one thread.
public final class BoundedBodyReader {
    /// The command's budget; `measure` spends it.
    public private(set) var budget: DecodingBudget

    /// A reader for one command, spending `budget` (the standard limits unless a test says).
    public init(budget: DecodingBudget = .standard) {
        self.budget = budget
    }

    /// Decodes `body` within the budget without keeping it: its size, whether it reads as text,
    /// the first `keeping` bytes, and what to say about its decoding. Not `classifying`: the
    /// text is not looked at (`printable` false), for a caller that wants the bytes only (a
    /// filter's `~b`, where the look was a third of the search: perf).
    public func measure(_ body: HTTPBody, keeping: Int, classifying: Bool = true) -> BodyReading {
        var scanner = PrintableText.Scanner()
        var head: [UInt8] = []
        head.reserveCapacity(min(keeping, 65_536))
        func take(_ piece: UnsafeBufferPointer<UInt8>) {
            if classifying { scanner.take(piece) }
            if head.count < keeping { head += piece.prefix(keeping - head.count) }
        }
        if !body.encodings.isEmpty {
            let limit = budget.limit(kept: body.transferred.count)
            if limit.bytes == 0 {
                let cut = DecodingCut(limit: limit, codings: body.encodings, kept: body.transferred.count, budget: budget)
                return transferred(body, keeping: keeping, note: cut.sentence, cut: cut, classifying: classifying)
            }
            let before = budget
            let run = ContentDecoding.run(body.transferred, codings: body.encodings, complete: body.completeness.isComplete,
                                          limit: limit.bytes, sink: take)
            budget.spend(run.work)
            if let refusal = run.refusal { return transferred(body, keeping: keeping, note: refusal, cut: nil, classifying: classifying) }
            let cut = run.cut ? DecodingCut(limit: limit, codings: body.encodings, kept: body.transferred.count, budget: before) : nil
            let notes = run.notes + (cut.map { [$0.sentence] } ?? [])
            return BodyReading(decoded: true, size: run.delivered, head: head, printable: classifying && scanner.printable,
                               cutCharacter: scanner.cutCharacter, note: notes.isEmpty ? nil : notes.joined(separator: " "), cut: cut)
        }
        return transferred(body, keeping: keeping, note: nil, cut: nil, classifying: classifying)
    }

    /// The body as transferred, when it is not (or cannot be) decoded.
    private func transferred(_ body: HTTPBody, keeping: Int, note: String?, cut: DecodingCut?, classifying: Bool = true) -> BodyReading {
        var scanner = PrintableText.Scanner()
        if classifying { scanner.take(body.transferred) }
        return BodyReading(decoded: false, size: body.transferred.count, head: Array(body.transferred.prefix(keeping)),
                           printable: classifying && scanner.printable, cutCharacter: scanner.cutCharacter, note: note, cut: cut)
    }

    /// Hands what `reading` (from `measure` of the same body) shows to `take`, in pieces of at
    /// most 64 KiB, in order: the decoded bytes (decoded again, to the same count) or the bytes
    /// as transferred. Spends no budget: `measure` did.
    public func stream(_ body: HTTPBody, _ reading: BodyReading, _ take: ([UInt8]) -> Void) {
        if reading.head.count >= reading.size {
            if !reading.head.isEmpty { take(reading.head) }
            return
        }
        guard reading.decoded else {
            var start = 0
            while start < body.transferred.count {
                let end = min(start + ContentStreamDecoders.pieceSize, body.transferred.count)
                take(Array(body.transferred[start..<end]))
                start = end
            }
            return
        }
        _ = ContentDecoding.run(body.transferred, codings: body.encodings, complete: body.completeness.isComplete,
                                limit: reading.size) { take(Array($0)) }
    }
}

/// What `BoundedBodyReader.measure` found out about one body.
public struct BodyReading: Sendable, Equatable {
    /// Whether what is shown is the decoded content (else the bytes as transferred).
    public var decoded: Bool
    /// Bytes of what is shown: decoded as far as the limits allowed, or as transferred.
    public var size: Int
    /// The first bytes of what is shown (as many as `measure` was asked to keep).
    public var head: [UInt8]
    /// Whether all `size` bytes read as text (`PrintableText`; a character cut at the end is
    /// tolerated).
    public var printable: Bool
    /// Bytes at the end that start a character cut short (0…3), when `printable`.
    public var cutCharacter: Int
    /// Sentences about decoding when there is something to say (partial, failed, unknown
    /// coding, or a limit that cut it — the last is `cut.sentence`).
    public var note: String?
    /// The limit that stopped decoding, when one did.
    public var cut: DecodingCut?

    /// What `measure` found; the fields as documented above.
    public init(decoded: Bool, size: Int, head: [UInt8], printable: Bool, cutCharacter: Int, note: String?, cut: DecodingCut?) {
        self.decoded = decoded
        self.size = size
        self.head = head
        self.printable = printable
        self.cutCharacter = cutCharacter
        self.note = note
        self.cut = cut
    }
}
