import Testing
@testable import TVCore

/// `tv settings` says what the running session holds against a saved switch (a trial).
@Suite struct SessionOverridesTests {
    @Test func theSessionsOwnSwitchesAreSaidBesideTheSavedOnes() {
        let live = ["inspection": "on", "contentKeeping": "on"]
        #expect(SessionOverrides.lines(inspectionSaved: false, contentKeepSaved: false, session: live) == [
            "inspection.enabled: the running session inspects anyway (started with --inspect); `tv inspect off` stops it.",
            "content.keep: the running session keeps content anyway (started with --keep-content); the saved value applies from its next start.",
        ])
        #expect(SessionOverrides.lines(inspectionSaved: true, contentKeepSaved: true, session: live) == [])
        #expect(SessionOverrides.lines(inspectionSaved: false, contentKeepSaved: false, session: ["inspection": "off", "contentKeeping": "off"]) == [])
        #expect(SessionOverrides.lines(inspectionSaved: false, contentKeepSaved: false, session: nil) == [])
    }
}
