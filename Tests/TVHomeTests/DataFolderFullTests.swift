import Testing
@testable import TVHome

/// `DataFolderFull.wayOn(_:)`: the full disk's way on follows what the data folder holds (trial
/// 44: it named `tv content delete` on a folder with no content to delete).
@Suite("the full disk's way on, from what the data folder holds")
struct DataFolderFullTests {
    @Test("content or a decrypted capture kept: tv content delete, with the bytes it frees")
    func content() {
        let holdings = DataFolderFull.Holdings(contentBytes: 34_603_008, captureFiles: 2, captureBytes: 1_048_576, historyBytes: 4_299_161)
        #expect(DataFolderFull.wayOn(holdings)
                == "free some space on it (`tv content delete` deletes the 33.0 MiB of kept decrypted content and decrypted captures, which needs no room; `tv storage` shows what takes the room)")
        #expect(DataFolderFull.sentence(cannotGrow: "/d/tunnelvision.sqlite3", wayOn: DataFolderFull.wayOn(holdings))
                == "The disk holding the data folder is full (/d/tunnelvision.sqlite3 cannot grow); free some space on it (`tv content delete` deletes the 33.0 MiB of kept decrypted content and decrypted captures, which needs no room; `tv storage` shows what takes the room) and try again.")
    }

    @Test("no content, packet captures: room outside the data folder first, naming the captures' and the history's bytes")
    func captures() {
        let one = DataFolderFull.Holdings(contentBytes: 0, captureFiles: 1, captureBytes: 3_145_728, historyBytes: 524_288)
        #expect(DataFolderFull.wayOn(one)
                == "free some space on it outside the data folder: no decrypted content is kept to delete, and deleting the 1 packet capture (3.0 MiB, `tv captures delete NUMBER`) or the history's 512 KiB needs a little room first (`tv storage` shows what takes the room)")
        let three = DataFolderFull.Holdings(contentBytes: 0, captureFiles: 3, captureBytes: 3_145_728, historyBytes: 524_288)
        #expect(DataFolderFull.wayOn(three).contains("deleting the 3 packet captures (3.0 MiB, "))
    }

    @Test("the history only: room outside the data folder, and why the history cannot shrink first")
    func historyOnly() {
        let holdings = DataFolderFull.Holdings(contentBytes: 0, captureFiles: 0, captureBytes: 0, historyBytes: 2_202_009)
        #expect(DataFolderFull.wayOn(holdings)
                == "free some space on it outside the data folder: no decrypted content or capture is kept to delete, and the history's 2.1 MiB shrinks only by deleting rows, which needs a little room first (`tv storage` shows what takes the room)")
    }
}
