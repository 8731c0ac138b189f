import Foundation
import TVHome

/// Undoes `Content-Encoding` (RFC 9110 §8.4): gzip, x-gzip, deflate, br, zstd and identity, in
/// the reverse of the order they were applied, as a stream: decoded bytes are handed on piece by
/// piece and never gathered, and decoding stops at a limit (`DecodingBudget`). Unknown codings
/// are left alone and said.
public enum ContentDecoding {
    /// The codings a `Content-Encoding` value lists, lowercased, in the order applied.
    public static func codings(_ headerValues: [String]) -> [String] {
        headerValues.flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            .filter { !$0.isEmpty && $0 != "identity" }
    }

    /// What one run over a body came to.
    struct Run: Equatable {
        /// Bytes handed to the sink.
        var delivered = 0
        /// Bytes decoded in all: every byte the last decoder handed out (taken or refused), and
        /// what a decoder that was stopped had decoded without handing it out (libbrotli's ring
        /// buffer).
        var work = 0
        /// Whether the limit refused output (a stage or the sink wanted to go past it).
        var cut = false
        /// Sentences about stages that did not end cleanly, in the order the codings are undone.
        var notes: [String] = []
        /// Why nothing could be decoded (the body is then shown as transferred), or nil.
        var refusal: String?
    }

    /// Undoes `codings` over `input`, handing the decoded bytes to `sink` in pieces, at most
    /// `limit` bytes in all; every intermediate stage is held to `limit` too.
    /// - Parameter complete: whether `input` is the whole body (else a stream that stops short
    ///   is expected and said as "decoded as far as it was recorded").
    static func run(_ input: [UInt8], codings: [String], complete: Bool, limit: Int,
                    sink: (UnsafeBufferPointer<UInt8>) -> Void) -> Run {
        var run = Run()
        var stages: [(coding: String, decoder: ContentStreamDecoder)] = []
        for coding in codings.reversed() {
            switch ContentStreamDecoders.make(coding) {
            case let .success(decoder): stages.append((coding, decoder))
            case .failure(.unknownCoding):
                run.refusal = "Not decoded: tv does not know the content coding '\(coding)'; the body is shown as transferred."
                return run
            case .failure(.failedToStart):
                run.refusal = "Could not decode \(coding) (its decoder could not start); the body is shown as transferred."
                return run
            }
        }
        var produced = [Int](repeating: 0, count: stages.count)
        var states = [DecodingState?](repeating: nil, count: stages.count)

        /// Hands `piece`, the output of stage `index - 1`, to stage `index` (or to the sink past
        /// the last); false when the limit wants no more.
        func feed(_ index: Int, _ piece: UnsafeBufferPointer<UInt8>) -> Bool {
            if index == stages.count {
                run.work += piece.count
                let room = limit - run.delivered
                let taken = min(room, piece.count)
                if taken > 0 { sink(UnsafeBufferPointer(rebasing: piece[..<taken])) }
                run.delivered += taken
                if taken < piece.count { run.cut = true }
                return !run.cut
            }
            let last = index == stages.count - 1
            let state = stages[index].decoder.take(piece) { out in
                guard !last else { return feed(index + 1, out) }
                // An intermediate stage is held to the limit too (its output could grow without
                // the last stage's growing, e.g. zstd skippable frames).
                let taken = min(limit - produced[index], out.count)
                produced[index] += taken
                if taken < out.count { run.cut = true }
                guard taken > 0 else { return false }
                return feed(index + 1, UnsafeBufferPointer(rebasing: out[..<taken])) && !run.cut
            }
            states[index] = state
            return !run.cut
        }
        _ = input.withUnsafeBufferPointer { feed(0, $0) }
        if run.cut {
            run.work += stages.reduce(0) { $0 + $1.decoder.dropUnreadOutput() }
            return run
        }
        if !stages.isEmpty { produced[stages.count - 1] = run.delivered }

        for (index, stage) in stages.enumerated() {
            let count = produced[index]
            switch states[index] ?? .needsMoreInput {
            case .finished, .limitReached:
                break
            case .needsMoreInput:
                run.notes.append(complete
                    ? "The \(stage.coding) stream ends early; \(ByteWords.grouped(Int64(count))) bytes were decoded from it."
                    : "Decoded from \(stage.coding) as far as it was recorded (\(ByteWords.grouped(Int64(count))) bytes).")
            case let .failed(reason):
                if count == 0 {
                    run.refusal = "Could not decode \(stage.coding) (\(reason)); the body is shown as transferred."
                    return run
                }
                run.notes.append("Decoding \(stage.coding) failed after \(ByteWords.grouped(Int64(count))) bytes (\(reason)).")
            }
        }
        return run
    }

    /// Decodes all of `bytes` into memory, within `DecodingBudget.standard` for one body — for
    /// small bodies and tests; views read bodies through `BoundedBodyReader`, which streams.
    /// - Returns: the decoded bytes (nil when nothing could be decoded) and the note a view would
    ///   show, when there is something to say.
    static func decode(_ bytes: [UInt8], codings: [String], complete: Bool) -> (decoded: [UInt8]?, note: String?) {
        guard !codings.isEmpty else { return (nil, nil) }
        let reader = BoundedBodyReader()
        let body = HTTPBody(framing: "content-length", transferred: bytes, encodings: codings,
                            completeness: complete ? .complete : .endedEarly(kept: bytes.count, expected: nil))
        let reading = reader.measure(body, keeping: 0)
        guard reading.decoded else { return (nil, reading.note) }
        var decoded: [UInt8] = []
        reader.stream(body, reading) { decoded += $0 }
        return (decoded, reading.note)
    }
}
