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
///
/// The client's refused bytes are held back from where the refused request begins, never from
/// the start of their burst: requests read whole before it go on and are answered, and tv's own
/// answer waits for their responses (`awaitsResponses`). Held back from the burst's start, a
/// trial's `GET /first` pipelined before a `G\x01T /second` never reached nginx, the client got a
/// bare close, and 300 pipelined GETs (past `ExchangeReader.Settings.maxOpen`) got no response
/// while 256 rows said "incomplete" for requests tv never sent.
struct ExchangeRefusal: Equatable {
    /// What the client gets instead of the refused bytes.
    enum Answer: Equatable {
        /// tv's own response with this status, then the close: 400 for the client's request when
        /// no earlier one waits for its response (RFC 9112 §6.3, RFC 9110 §15.5.1), 502 in the
        /// place of a server's response none of which reached the client (RFC 9110 §15.6.3;
        /// RFC 9112 §5.2 for obs-fold).
        case status(Int)
        /// No answer could be read as the one the client waits for (part of a response already
        /// reached it, or of a request body reached the server): the connection is reset.
        case reset
        /// Nothing is owed (every response asked for went on): the connection is closed. A
        /// client that pipelined past tv's limit sends the rest again (RFC 9112 §9.3.2).
        case close
        /// HTTP/2: tv ends the connection as an endpoint would (`HTTP2ConnectionError`): a
        /// GOAWAY to the side that sent the refused frames, one to the other side (or the close
        /// of its connection), then the close.
        case goaway(HTTP2ConnectionError)
    }

    /// Why (the flow's error, one sentence rendered from the kind).
    var failure: ConnectionFailure
    var answer: Answer
    /// How many of the burst's first bytes go on before the refusal: the client's up to where
    /// the refused request begins (0 when it began in an earlier burst, whose bytes went on
    /// unread as an unfinished head or body), the server's up to the end of the responses the
    /// client asked for, ahead of a refused response or of bytes nobody asked for (as the plain
    /// path passes them).
    var passing = 0
    /// Requests before the refused bytes still wait for their responses: the client's bytes are
    /// held back from `passing` on, and so is every later byte of the client's, while the
    /// server's go on and are read; the reader stops with this refusal again (false, `passing`
    /// then the end of the last of those responses in the server's burst) once they have all
    /// gone on, and `answer` comes then, where it can only be read as the refused request's
    /// (`ConnectionMachine` holds the client meanwhile: `.holdClient`).
    var awaitsResponses = false
}
