/// What the decrypted capture's writer appends for one batch, in file order, as a gather list:
/// runs of the bytes it built itself (block and packet headers, padding, options, in `heads`)
/// and ranges of the batch's plaintext, which is never copied into a buffer of the writer's own:
/// `CaptureFileAppender.append(_:)` takes the parts and copies each once, into its aligned buffer.
/// Adjacent runs of `heads` are one part. Pure: ranges in, parts out.
struct DecryptedCaptureGather: Equatable {
    /// One part of the gather list.
    enum Piece: Equatable {
        /// Bytes of `heads`.
        case head(Range<Int>)
        /// Bytes of the batch's plaintext.
        case plaintext(Range<Int>)
    }

    /// The parts, in file order.
    private(set) var pieces: [Piece] = []
    /// Where the part after the last one starts in `heads` (what `heads(upTo:)` continues from).
    private(set) var headsEnd = 0

    /// `heads[headsEnd..<end]` is next: joined to the last part when that is a run of `heads`.
    /// - Precondition: `end >= headsEnd`.
    mutating func heads(upTo end: Int) {
        precondition(end >= headsEnd, "heads(upTo:) before the last run's end")
        guard end > headsEnd else { return }
        if case let .head(last)? = pieces.last, last.upperBound == headsEnd {
            pieces[pieces.count - 1] = .head(last.lowerBound..<end)
        } else {
            pieces.append(.head(headsEnd..<end))
        }
        headsEnd = end
    }

    /// `plaintext[range]` is next (nothing when empty).
    mutating func plaintext(_ range: Range<Int>) {
        guard !range.isEmpty else { return }
        pieces.append(.plaintext(range))
    }

    /// Calls `body` with the parts over `heads` and `plaintext` (valid during the call only).
    func withParts<T>(heads: UnsafeRawBufferPointer, plaintext: UnsafeRawBufferPointer,
                      _ body: ([UnsafeRawBufferPointer]) throws -> T) rethrows -> T {
        let parts = pieces.map { piece -> UnsafeRawBufferPointer in
            switch piece {
            case let .head(range): UnsafeRawBufferPointer(rebasing: heads[range])
            case let .plaintext(range): UnsafeRawBufferPointer(rebasing: plaintext[range])
            }
        }
        return try body(parts)
    }

    /// Empties the list (its storage kept) for the next batch.
    mutating func removeAll() {
        pieces.removeAll(keepingCapacity: true)
        headsEnd = 0
    }
}
