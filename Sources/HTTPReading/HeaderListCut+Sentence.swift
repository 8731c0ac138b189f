import TVHome
import Wire

extension HeaderListCut {
    /// One sentence every view (terminal, JSON, HAR, tv web) says of fields left out: how many,
    /// their size (name, value and 32 bytes a field, RFC 9113 §6.5.2), and the limit; of a
    /// message's trailer blocks with `trailers`. E.g. "60,000 trailer fields (231 MiB) were left out:
    /// tv keeps at most 256 KiB of one header block, the most Chrome accepts (name and value
    /// bytes and 32 a field: SETTINGS_MAX_HEADER_LIST_SIZE, RFC 9113 §6.5.2)."
    public func sentence(trailers: Bool = false) -> String {
        let what = "\(ByteWords.grouped(Int64(fields))) \(trailers ? "trailer" : "header") field\(fields == 1 ? "" : "s") (\(ByteWords.binary(Int64(bytes))))"
            + " \(fields == 1 ? "was" : "were") left out: "
        switch rule {
        case .block:
            return what + "tv keeps at most \(ByteWords.binary(Int64(limits.block))) of one header block, the most Chrome accepts"
                + " (name and value bytes and 32 a field: SETTINGS_MAX_HEADER_LIST_SIZE, RFC 9113 §6.5.2)."
        case .message:
            return what + "tv keeps at most \(ByteWords.binary(Int64(limits.message))) of one message's header and trailer fields together."
        case .reading:
            return what + "tv keeps at most \(ByteWords.binary(Int64(limits.reading))) of one connection's header fields in all"
                + " (`tv turns` shows the bytes as they were sent)."
        }
    }
}
