/// How the body after a head is delimited, from Content-Length and Transfer-Encoding (RFC 9112
/// §6.1, §6.3) and, for a response, the status and the request it answers.
extension HTTP1Head {
    /// The body framing of this message (RFC 9112 §6.3).
    ///
    /// - A response to HEAD, a 1xx, 204 or 304 response, or a 2xx answer to CONNECT has no body
    ///   (rules 1 and 2).
    /// - Transfer-Encoding ending in `chunked` is `.chunked`, whatever Content-Length says
    ///   (rule 3); other codings are `.untilClose` (rule 4).
    /// - Content-Length is `.contentLength`: a decimal number of at most 18 digits; a list or
    ///   repeated fields must agree (rule 5, RFC 9110 §8.6).
    /// - Otherwise a request has no body (rule 7) and a response runs until close (rule 8).
    ///
    /// `strict` (the proxy's requests) also refuses Content-Length together with
    /// Transfer-Encoding (a request-smuggling risk), Transfer-Encoding on HTTP/1.0, and codings
    /// that do not end in exactly one `chunked`.
    ///
    /// - Parameter requestMethod: for a response, the method of the request it answers.
    /// - Returns: the framing, or why the body cannot be delimited.
    public func bodyFraming(leniency: HTTP1Leniency, answering requestMethod: String? = nil) -> Result<HTTPBodyFraming, WireFormatError> {
        do throws(WireFormatError) {
            return .success(try framing(leniency: leniency, answering: requestMethod))
        } catch {
            return .failure(error)
        }
    }

    func framing(leniency: HTTP1Leniency, answering requestMethod: String?) throws(WireFormatError) -> HTTPBodyFraming {
        if let status, HTTP1Head.responseHasNoBody(status: status, answering: requestMethod) { return .none }
        var contentLengths: [String] = []
        var transferEncodings: [String] = []
        for field in headers {
            if field.hasName("Content-Length") { contentLengths.append(field.value) }
            else if field.hasName("Transfer-Encoding") { transferEncodings.append(field.value) }
        }
        return try HTTP1Head.framing(status: status, version: version, contentLengths: contentLengths,
                                     transferEncodings: transferEncodings, leniency: leniency)
    }

    /// A response to HEAD, a 1xx, 204 or 304 response, or a 2xx answer to CONNECT (RFC 9112
    /// §6.3 rules 1 and 2).
    static func responseHasNoBody(status: Int, answering requestMethod: String?) -> Bool {
        requestMethod == "HEAD" || (100 ..< 200).contains(status) || status == 204 || status == 304
            || (requestMethod == "CONNECT" && (200 ..< 300).contains(status))
    }

    /// Rules 3 to 8 over the values of every Content-Length and Transfer-Encoding field, in
    /// order (`status` nil: a request): the rest of `framing`, shared with `HTTP1HeadScanner`.
    static func framing(status: Int?, version: HTTPVersion, contentLengths: [String], transferEncodings: [String],
                        leniency: HTTP1Leniency) throws(WireFormatError) -> HTTPBodyFraming {
        let noun = status == nil ? "request" : "response"
        if !transferEncodings.isEmpty {
            let codings = HTTPToken.lowercasedList(transferEncodings)
            guard leniency == .strict else { return codings.last == "chunked" ? .chunked : .untilClose }
            guard contentLengths.isEmpty else {
                throw WireFormatError("The \(noun) has both Content-Length and Transfer-Encoding, a request-smuggling risk RFC 9112 §6.3 lets a server refuse.")
            }
            guard version.minor >= 1 else {
                throw WireFormatError("The HTTP/1.0 \(noun) has a Transfer-Encoding header, which RFC 9112 §6.1 says to treat as faulty framing.")
            }
            guard codings.last == "chunked", codings.filter({ $0 == "chunked" }).count == 1 else {
                throw WireFormatError("The \(noun)'s Transfer-Encoding does not end in a single chunked coding, so its body length cannot be known (RFC 9112 §6.3).")
            }
            return .chunked
        }
        guard !contentLengths.isEmpty else { return status == nil ? .none : .untilClose }
        var length: Int?
        for element in contentLengths.flatMap({ $0.split(separator: ",", omittingEmptySubsequences: false) }) {
            let digits = element.utf8.drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
                .reversed().drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }.reversed()
            guard !digits.isEmpty, digits.count <= 18, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
                throw WireFormatError("The Content-Length \(Self.quotedLength(contentLengths)) is not a decimal number of bytes (RFC 9110 §8.6).")
            }
            let value = digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
            if let length, length != value {
                throw WireFormatError("The \(noun) has Content-Length values that disagree (\(contentLengths.joined(separator: ", "))), so its body cannot be delimited (RFC 9112 §6.3).")
            }
            length = value
        }
        return .contentLength(length ?? 0)
    }

    /// Content-Length values as a sentence quotes them: in quotes when they hold only what a
    /// mistaken length is written with (digits, signs, dots, commas, blanks; at most 40 bytes:
    /// `"-1"`, `"1.5"`, `"12, 13"`); any other text only by its size, since a header value is
    /// content and the sentence becomes the flow's error (which a shared store receives).
    static func quotedLength(_ values: [String]) -> String {
        let joined = values.joined(separator: ", ")
        let shown = joined.utf8.count <= 40 && joined.utf8.allSatisfy { byte in
            (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains(byte) || Array(" \t,+-.".utf8).contains(byte)
        }
        return shown ? "\"\(joined)\"" : "value (\(WireFormatError.count(joined.utf8.count, "byte")), not repeated here: header values are content)"
    }
}
