/// The fixed sentences of the flow: the trade-off (step 0), what inspection shows and what it
/// cannot, and what remaking and removing cost. Our own words for seed 002's.
public enum SetupText {
    /// Step 0, said before anything is made.
    public static let tradeOff: [String] = [
        "Inspection lets tv read your own encrypted (TLS/HTTPS) traffic on this machine, so you can see what your programs really send and receive.",
        "To do that, tv makes its own certificate authority here. Its private key \(keyStays(in: "tv's data folder")). You then tell this machine (or a browser) to trust it: whatever trusts it accepts the certificates tv makes, so trust it only where you want inspection.",
        "Programs that pin their certificates will refuse tv's; tv remembers them and passes their traffic through untouched. They stay private — that is expected, not a fault.",
        "This reads your own traffic only. Nothing is uploaded, there is no account, and you can turn inspection off any time (`tv inspect off`) or remove the certificate entirely (`tv ca remove`).",
    ]

    /// Where the root's private key stays, as a clause after "its private key": precise about
    /// the one way it leaves (the consent texts said it "never leaves this machine", though
    /// `tv ca export --p12-with-key` writes it on request: a trial).
    /// - Parameter folder: the folder as the sentence names it ("tv's data folder", or a path).
    public static func keyStays(in folder: String) -> String {
        "stays in \(folder), readable only by you: tv never sends it anywhere, and it leaves that folder only in a file you ask for by name (`tv ca export --p12-with-key --yes`)"
    }

    /// What becomes visible with inspection on (said at the ready stage, when turning it on, and by
    /// `tv inspect status`): what a flow row holds (`FlowRecord`), and whether the decrypted
    /// requests and responses are kept, which only `content.keep` decides.
    /// - Parameter contentKept: the saved `content.keep`.
    public static func visibleWhenOn(contentKept: Bool) -> [String] {
        let row = "Visible: for each connection of a program that trusts the root, `tv flows` shows the host name, the client and server addresses, the TLS versions and ALPN, the server's certificate, the bytes each way, the timing and how it ended; for each HTTP request inside it, `tv requests` shows the method, the URL path (without its query string), the status, the body sizes and the timing."
        let content = contentKept
            ? "Content keeping is on: the decrypted requests and responses — headers, bodies and query strings — are kept under its budget and expiry (`tv request ID`, `tv turns`, `tv export har`)."
            : "Content keeping is off: headers, bodies and query strings are not kept, only each request's method, URL path without its query, status, body sizes and timing (`tv settings set content.keep on` keeps the rest; `tv request ID` shows it)."
        return [row, content]
    }

    /// Everything said about inspection being on: what is visible, then what stays private.
    /// - Parameter contentKept: the saved `content.keep`.
    public static func whenOn(contentKept: Bool) -> [String] { visibleWhenOn(contentKept: contentKept) + privateWhenOn }

    /// What stays private with inspection on.
    public static let privateWhenOn: [String] = [
        "Private: programs that pin their certificates (passed through untouched, and remembered), programs that use a trust store without the root, and anything not sent through tv.",
    ]

    /// The confirmation of `tv ca remake`, naming what is lost.
    public static let remakeLoses: [String] = [
        "Remaking the CA makes a new root and a new key; the current root stops signing anything.",
        "Every device, browser and store that trusts the current root stops trusting tv's certificates: you must install and trust the new root again (on iOS/macOS, install the profile again — it replaces the old one).",
        "The inspection setting is turned off first, and stays off until the new root is trusted (a session started with --inspect goes on inspecting, with the new root).",
    ]

    /// What `tv ca remove` keeps.
    public static let removeKeeps = "Your history and captures stay; only the certificate and its keys are deleted."
}
