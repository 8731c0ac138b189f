import Testing
import TVHome
@testable import TVCore

/// What a full disk is said as where the trial found it unsaid or wrong (trial 44): `tv run`'s
/// banner (`DiskRoomAtStart`) and `tv storage apply` with nothing over the limits
/// (`StorageApplyOutcome`).
@Suite("a full disk, said at the banner and by tv storage apply")
struct FullDiskSayingTests {
    let history = DataFolderFull.Holdings(contentBytes: 0, captureFiles: 0, captureBytes: 0, historyBytes: 2_202_009)
    let content = DataFolderFull.Holdings(contentBytes: 5_452_595, captureFiles: 0, captureBytes: 0, historyBytes: 2_202_009)

    @Test("full at start: everything the session records cannot be saved, forwarding goes on, and the way on follows what the folder holds")
    func full() {
        let room = DiskRoomAtStart(freeBytes: 0, flowsFailing: false, recorded: [.content, .decryptedCapture], holdings: content)
        #expect(room.line == "full — the disk holding the data folder has no room, so flows, decrypted content and the decrypted capture cannot be saved until it has some (connections are still forwarded, and flows wait in memory, up to 16,384); free some space on it (`tv content delete` deletes the 5.2 MiB of kept decrypted content and decrypted captures, which needs no room; `tv storage` shows what takes the room)")
        // The flow writer failing at its start is full whatever statvfs says (root's reserved blocks).
        let failing = DiskRoomAtStart(freeBytes: 40_960, flowsFailing: true, recorded: [], holdings: history)
        #expect(failing.line == "full — the disk holding the data folder has no room, so flows cannot be saved until it has some (connections are still forwarded, and flows wait in memory, up to 16,384); free some space on it outside the data folder: no decrypted content or capture is kept to delete, and the history's 2.1 MiB shrinks only by deleting rows, which needs a little room first (`tv storage` shows what takes the room)")
        let tun = DiskRoomAtStart(freeBytes: 0, flowsFailing: true, recorded: [.packets], holdings: history)
        #expect(tun.line?.hasPrefix("full — the disk holding the data folder has no room, so flows and the packet capture cannot be saved until it has some (") == true)
        #expect(RunBanner(listen: "127.0.0.1:8080", mode: "explicit proxy", caFingerprint: nil, caPath: nil, inspecting: false,
                          inspectionNote: "off", dataFolder: "/d", keylogPath: nil).lines.contains { $0.hasPrefix("  disk") } == false)
        var banner = RunBanner(listen: "127.0.0.1:8080", mode: "explicit proxy", caFingerprint: nil, caPath: nil, inspecting: false,
                               inspectionNote: "off", dataFolder: "/d", keylogPath: nil)
        banner.disk = failing.line
        #expect(banner.lines[2...3] == ["  history     /d (`tv flows` lists what it saw)", "  disk        " + (failing.line ?? "")])
    }

    @Test("short of the history's reserve at start: what asks the reserve is not saved, flows are; the packet capture is not held; with room, or recording flows only, nothing is said")
    func short() {
        let room = DiskRoomAtStart(freeBytes: 3_250_585, flowsFailing: false, recorded: [.content, .packets], holdings: content)
        #expect(room.line == "short of room — the disk holding the data folder has 3.1 MiB free, within the 16.0 MiB kept for the flow history, so decrypted content is not saved until it has more (flows are, and connections are forwarded); free some space on it (`tv content delete` deletes the 5.2 MiB of kept decrypted content and decrypted captures, which needs no room; `tv storage` shows what takes the room)")
        let both = DiskRoomAtStart(freeBytes: 3_250_585, flowsFailing: false, recorded: [.content, .decryptedCapture], holdings: content)
        #expect(both.line?.contains(", so decrypted content and the decrypted capture are not saved until it has more (") == true)
        #expect(DiskRoomAtStart(freeBytes: 3_250_585, flowsFailing: false, recorded: [.packets], holdings: content).line == nil)
        #expect(DiskRoomAtStart(freeBytes: 3_250_585, flowsFailing: false, recorded: [], holdings: content).line == nil)
        #expect(DiskRoomAtStart(freeBytes: 16_777_216, flowsFailing: false, recorded: [.content], holdings: content).line == nil)
        #expect(DiskRoomAtStart(freeBytes: nil, flowsFailing: false, recorded: [.content], holdings: content).line == nil)
    }

    @Test("tv storage apply with nothing over the limits on a full disk: one sentence, nothing to delete under them and what frees room; otherwise the pass's report")
    func applyOutcome() {
        #expect(StoragePresentation.applied(.nothingOverLimitsOnFullDisk(history))
                == ["Nothing was deleted: the disk holding the data folder is full, and nothing in it is over the limits (history.maxAge, captures.maxBytes, captures.maxAge, content.expiry) to delete under them; free some space on it outside the data folder: no decrypted content or capture is kept to delete, and the history's 2.1 MiB shrinks only by deleting rows, which needs a little room first (`tv storage` shows what takes the room)."])
        #expect(StoragePresentation.applied(.applied(StorageReport())) == ["Everything is within its limits; nothing was deleted."])
    }
}
