/// Bytes of a relayed HTTP/1 stream tv does not forward, and what it does in their place
/// (`ExchangeReader.Stop.refused`): the relay's one rule where tv cannot follow a message — a head
/// another party could read otherwise, a body whose end cannot be found, a response nobody asked
/// for, more requests waiting than tv follows. As on the plain path (`PlainHTTPMachine`), nothing
/// passes unrecorded: the burst holding the bytes is held back from them on, tv answers when an
/// answer can only be read as the one the client waits for, and the connection closes.
///
/// Before, such bytes went on as they came and only the reading stopped, so every later request
/// of the connection reached the server with no row (a hostile-input trial: nginx logged
/// `GET /hidden-…?secret=1` after a valid 16-digit chunk size, a 2 KB chunk extension or 70 KB of
/// trailers; the flow list said plain "inspected").
struct ExchangeRefusal: Equatable {
    /// What the client gets instead of the refused bytes.
    enum Answer: Equatable {
        /// tv's own response with this status, then the close: 400 for the client's request when
        /// no earlier one waits for its response (RFC 9112 §6.3, RFC 9110 §15.5.1), 502 in the
        /// place of a server's response none of which reached the client (RFC 9110 §15.6.3;
        /// RFC 9112 §5.2 for obs-fold).
        case status(Int)
        /// No answer could be read as the one the client waits for (an earlier request waits for
        /// its response, or part of a response already reached it): the connection is reset.
        case reset
        /// Nothing is owed (every response asked for went on): the connection is closed.
        case close
    }

    /// Why (the flow's error, one sentence rendered from the kind).
    var failure: ConnectionFailure
    var answer: Answer
    /// How many of the burst's first bytes go on before the refusal: the end of responses the
    /// client asked for, ahead of a refused response or of bytes nobody asked for (as the plain
    /// path passes them). 0 for the client's bursts, held back whole (a request before the
    /// refused one in the same burst could only be answered by a reset).
    var passing = 0
}
