/// Heads longer than the scanner's bound, read with the bound kept.
///
/// A request of 80 fields of 1,000 bytes (an 80 KB head, which Python's `http.server` took and
/// answered) was refused at 64 KiB, and as the connection's first head it made the whole flow
/// "not HTTP": neither its row nor any later request's was recorded (a new-user trial). The
/// scanner keeps only the start line and the fields a row stores, so what it gathers can shed
/// every other complete field line once checked: the head is then read on, line by line, in the
/// same room. RFC 9110 §5.4 sets no limit on a head's size; the bound is tv's, on memory.
extension HTTP1HeadScanner {
    /// Rewrites the gathered bytes (`buffer`, full) as the start line, the complete field lines a
    /// row keeps and the line being read, every run of other field lines replaced by one `x:`
    /// line (so the line being read, if it starts with whitespace, is still refused as obs-fold);
    /// each line shed is checked first, as `read` checks it. Nil when it made room;
    /// otherwise the refusal: a malformed line, or no room made (one line, or the kept fields,
    /// fill the bound).
    mutating func compactGathered() -> String? {
        let limitRefusal = HTTP1HeadParser.tooLongSentence(kind, maxHeadBytes)
        guard end.sawStartLine else { return limitRefusal }
        let partialStart = end.lineStart
        var compacted: [UInt8] = []
        var refusal: String?
        buffer.withUnsafeBufferPointer { gathered in
            var lines = FastLines(UnsafeBufferPointer(rebasing: gathered[0 ..< partialStart]), start: end.startLineOffset)
            guard let startLine = lines.next() else { refusal = limitRefusal; return }
            compacted.reserveCapacity(maxHeadBytes)
            compacted.append(contentsOf: gathered[startLine])
            compacted.append(contentsOf: [0x0D, 0x0A])
            // Whether a shed run's `x:` was the last line written.
            var shedding = false
            var firstField = true
            do throws(WireFormatError) {
                while let range = lines.next() {
                    let line = UnsafeBufferPointer(rebasing: gathered[range])
                    defer { firstField = false }
                    if line.isEmpty { continue }
                    if line[0] == UInt8(ascii: " ") || line[0] == UInt8(ascii: "\t") {
                        throw WireFormatError(HTTP1HeadScanner.whitespaceLineRefusal(first: firstField, kind: kind))
                    }
                    let (colon, _) = try HTTP1HeadParser.fieldLineParts(line)
                    if HTTP1HeadScanner.keptField(UnsafeBufferPointer(rebasing: line[0 ..< colon]), kind: kind) != nil {
                        compacted.append(contentsOf: line)
                        compacted.append(contentsOf: [0x0D, 0x0A])
                        shedding = false
                    } else {
                        if !shedding { compacted.append(contentsOf: Array("x:\r\n".utf8)) }
                        shedding = true
                    }
                }
            } catch {
                refusal = error.reason
                return
            }
            let lineStart = compacted.count
            compacted.append(contentsOf: gathered[partialStart...])
            guard compacted.count < maxHeadBytes else { refusal = limitRefusal; return }
            end = LineEndScan.resumed(lineStart: lineStart)
        }
        if let refusal { return refusal }
        buffer = compacted
        return nil
    }
}
