/// The reason phrase tv writes after a status code it answers with itself (RFC 9110 §15; RFC 6585
/// §5 for 431). A client reads the code only (RFC 9112 §4: the phrase "SHOULD be ignored"); the
/// phrase is for the person reading the bytes.
public enum HTTPReasonPhrase {
    /// The registered phrase of `code` among those tv sends; "Error" for any other.
    public static func of(_ code: Int) -> String {
        switch code {
        case 200: return "OK"
        case 400: return "Bad Request"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 407: return "Proxy Authentication Required"
        case 408: return "Request Timeout"
        case 414: return "URI Too Long"
        case 431: return "Request Header Fields Too Large"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        default: return "Error"
        }
    }
}
