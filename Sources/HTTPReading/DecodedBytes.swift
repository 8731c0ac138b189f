/// The output of one content decoder run over the bytes that were recorded.
struct DecodedBytes: Equatable {
    enum State: Equatable {
        /// The encoded stream ended properly.
        case finished
        /// The input ran out before the encoded stream ended (a cut or unfinished body): `bytes`
        /// holds what the recorded part decodes to.
        case needsMoreInput
        /// The decoder refused the input; `bytes` holds what came out before the error.
        case failed(String)
        /// Output reached `ContentDecoding.outputLimit` and decoding stopped there.
        case limitReached
    }

    var bytes: [UInt8]
    var state: State
}
