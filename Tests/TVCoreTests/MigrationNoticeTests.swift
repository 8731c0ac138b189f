import Testing
@testable import TVCore

@Suite struct MigrationNoticeTests {
    @Test func theSentenceNamesTheFileItsSizeAndBothVersions() {
        #expect(MigrationNotice.sentence(path: "/home/a/.local/share/tunnelvision/tunnelvision.sqlite3", bytes: 1_288_490_189, from: 23, to: 24)
            == "Updating the history in /home/a/.local/share/tunnelvision/tunnelvision.sqlite3 (1.2 GiB) from schema 23 to 24 for this version of tv, once; a large history takes a few seconds per million connections.")
    }
}
