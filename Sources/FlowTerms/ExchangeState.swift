/// Where one HTTP exchange (a request and its response) stands, as the data path reads it and
/// the flow database stores it (`exchanges.state`, the raw value).
public enum ExchangeState: String, Sendable, Hashable, CaseIterable {
    /// The request has started; its response (or the end of either body) has not been seen yet.
    case open
    /// Request and response were read to their ends (or to the switch of an upgrade/CONNECT).
    case complete
    /// The connection ended, was reset or stopped being readable as HTTP before the exchange
    /// ended (a request cut off mid-body, a stream reset, a response without its end).
    case incomplete
    /// tv answered the request itself, in the server's place (it could not be reached, refused
    /// the connection, failed or did not answer in time): `status` and `reason` are tv's answer's
    /// (a 502, a 504…) and the flow's error says why. Not the server's word. With no `status`:
    /// tv refused the request and never sent it to the server, and the connection ended before
    /// tv's answer could come (it waited for the responses to requests pipelined before it:
    /// `refusedSentence`); not `incomplete`, which says a request went on.
    case answered
    /// The client reset the HTTP/2 stream (RST_STREAM) after its request, before the response
    /// ended: it gave the request up. `status` is the server's when its response head was read,
    /// before the reset or in flight after it. A rapid reset's rows (CVE-2023-44487: HEADERS then
    /// RST_STREAM, and nginx answered each 200) read "incomplete: its end was never read" while
    /// `tv request` showed the 200 from kept content (a hostile-input trial).
    case cancelled

    /// What an `answered` row without a status means, as every view says it.
    public static let refusedSentence = "refused by tv and never sent to the server; the connection ended before tv's answer could follow the responses to the requests before it"

    /// What `incomplete` means, as every view says it (`tv request`, the HAR's comments, from
    /// kept content or from rows alike).
    public static let incompleteSentence = "incomplete: its end was never read (the connection ended or was reset first, or stopped being read as HTTP)"

    /// What `cancelled` means, as every view says it.
    public static let cancelledSentence = "cancelled: the client reset the stream after its request, before the response ended (HTTP/2 RST_STREAM)"
}
