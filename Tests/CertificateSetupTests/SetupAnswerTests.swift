import CertificateSetup
import Testing

/// What an answer at a `tv setup` prompt means.
struct SetupAnswerTests {
    let yesOffered = SetupAnswer.Offer(yes: true)

    @Test("n and no mean not now, like q; end of input too")
    func noMeansNotNow() {
        for line in ["n", "no", "N", " No ", "q", "quit", "Q"] {
            #expect(SetupAnswer(line, offer: yesOffered) == .notNow, "\(line)")
        }
        #expect(SetupAnswer(nil, offer: yesOffered) == .notNow)
    }

    @Test("Enter alone checks again; y only where yes is offered; a only where it is offered")
    func offeredAnswers() {
        #expect(SetupAnswer("", offer: yesOffered) == .again)
        #expect(SetupAnswer("  \r", offer: yesOffered) == .again)
        #expect(SetupAnswer("y", offer: yesOffered) == .yes)
        #expect(SetupAnswer("YES", offer: yesOffered) == .yes)
        #expect(SetupAnswer("y", offer: .init()) == .unknown)
        #expect(SetupAnswer("a", offer: .init(doItForMe: true)) == .doItForMe)
        #expect(SetupAnswer("a", offer: yesOffered) == .unknown)
        #expect(SetupAnswer("maybe", offer: yesOffered) == .unknown)
    }

    @Test("an unknown answer is told which letters mean something")
    func unknownSentences() {
        #expect(SetupAnswer.unknownSentence(offer: yesOffered) == "Type y, q, or press Enter.")
        #expect(SetupAnswer.unknownSentence(offer: .init(doItForMe: true)) == "Type a, q, or press Enter.")
        #expect(SetupAnswer.unknownSentence(offer: .init()) == "Type q or press Enter.")
    }
}
