/// The short introduction printed once on the first `tv run` and replayed by `tv intro`.
///
/// Our words for the seed's three cards (what it does, how it works, your privacy). It is shown
/// when the seen-flag cannot be read, because showing it twice is an annoyance while never
/// explaining is worse (seed 000/002, "First run").
public enum IntroPresentation {
    public static let cards: [(title: String, text: String)] = [
        ("What it does",
         "tv shows which servers this machine, or one program, talks to, and — when you choose — what your own secure (HTTPS) connections say."),
        ("How it works",
         "Programs connect through tv: as an explicit proxy (127.0.0.1:8080 by default), or, with `tv exec` and `--mode tun`, through a private tunnel on this machine. To read inside TLS, tv makes its own certificate authority, which you decide to trust; apps that pin their certificates stay private, and that is expected."),
        ("Your privacy",
         "No account. No cloud. Nothing is uploaded. History stays in your data folder (a PostgreSQL store you name with --store gets the connection list, never what was said), and you can stop any time with Ctrl-C or `tv stop`."),
    ]

    /// The whole introduction as lines for a terminal.
    public static var lines: [String] {
        var out: [String] = []
        for (i, card) in cards.enumerated() {
            out.append("\(i + 1)/\(cards.count)  \(card.title)")
            out.append("     \(card.text)")
        }
        out.append("(`tv intro` shows this again.)")
        return out
    }
}
