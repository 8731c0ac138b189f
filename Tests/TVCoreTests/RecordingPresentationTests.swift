import FlowStore
import Recording
import Testing
import Tunnel
@testable import TVCore

/// Issue 12 §2: what a session says about recording on a full disk, rendered from counts and
/// failure kinds.
@Suite struct RecordingPresentationTests {
    let full = FlowStoreError.diskFull(path: "/d/tunnelvision.sqlite3")

    func flowCounters(notSaved: Int = 0, stale: Int = 0, waiting: Int = 0, failedWrites: Int = 0, dropped: Int = 0,
                      failing: Bool = false) -> FlowWriterCounters {
        FlowWriterCounters(accepted: 0, written: 0, dropped: dropped, failed: 0, pending: 0,
                           lastError: failedWrites > 0 ? full : nil, failedWrites: failedWrites, unwrittenFlows: waiting,
                           flowsNotSaved: notSaved, flowUpdatesNotSaved: stale, failing: failing)
    }

    @Test func theNoticesSayTheKindAndTheCounts() {
        #expect(RecordingPresentation.flowNotice(.startedFailing, flowCounters(failedWrites: 1, failing: true))
            == "Flows are not being saved: The disk holding the data folder is full (/d/tunnelvision.sqlite3 cannot grow); free some space on it (`tv content delete` deletes the kept decrypted content and decrypted captures, which needs no room; `tv storage` shows what takes the room) and try again. Connections are still forwarded; tv keeps the unsaved flows in memory (up to 16,384), retries every second and says when recording resumes.")
        #expect(RecordingPresentation.flowNotice(.resumed, flowCounters(failedWrites: 3))
            == "Recording resumed: flows are saved again, none was lost.")
        #expect(RecordingPresentation.flowNotice(.resumed, flowCounters(notSaved: 4, stale: 1, failedWrites: 3))
            == "Recording resumed: flows are saved again; 4 flows could not be saved and 1 flow lost their last update.")
        var content = ContentCounters()
        content.turnsLost = 2
        content.lastError = .segment(.diskFull(path: "/d/content/content-00000003.seg"))
        #expect(RecordingPresentation.contentNotice(.startedFailing, content)
            == "Decrypted content is not being saved: The disk holding the data folder is full (/d/content/content-00000003.seg cannot grow); free some space on it (`tv content delete` deletes the kept decrypted content and decrypted captures, which needs no room; `tv storage` shows what takes the room) and try again. Connections are still forwarded; tv tries again with the next turns and says when recording resumes.")
        #expect(RecordingPresentation.contentNotice(.resumed, content)
            == "Recording resumed: decrypted content is saved again (2 turns could not be saved).")
    }

    @Test func theStopMessageSaysWhatTheSharedStoreNeverReceived() {
        var losses = RecordingLosses()
        losses.sharedFlowsNotSaved = 100
        losses.sharedServer = "127.0.0.1:18250/tvhistory"
        #expect(!losses.isEmpty && losses.isEmptyHere)
        #expect(RecordingPresentation.stopped(losses, folder: "/d")
                == "everything is saved in /d. This session could not send 100 flows to the shared store at 127.0.0.1:18250/tvhistory; this data folder has them (`tv store backfill --since SPAN` sends whatever is still missing once the store answers).")
        // Carried to `tv stop` over the control socket.
        #expect(RecordingLosses(values: losses.values) == losses)
        losses.sharedFlowsNotSaved = 1
        losses.flowsNotSaved = 2
        #expect(RecordingPresentation.stopped(losses, folder: "/d")
                == "not everything was saved in /d: 2 flows never written. This session could not send 1 flow to the shared store at 127.0.0.1:18250/tvhistory; this data folder has it (`tv store backfill --since SPAN` sends whatever is still missing once the store answers).")
        // The session's store came from `--store`: the backfill printed carries it (run as
        // printed without it, the backfill was refused for want of a store).
        losses.sharedURL = "postgresql://tv@127.0.0.1:18250/tvhistory?sslmode=disable"
        #expect(RecordingLosses(values: losses.values) == losses)
        #expect(RecordingPresentation.stopped(losses, folder: "/d").hasSuffix("(`tv store backfill --store 'postgresql://tv@127.0.0.1:18250/tvhistory?sslmode=disable' --since SPAN` sends whatever is still missing once the store answers)."))
    }

    @Test func theStopMessageSaysExactlyWhatWasNotSaved() {
        #expect(RecordingPresentation.stopped(RecordingLosses(), folder: "/d") == "everything is saved in /d.")
        // Writes failed but every flow was written at a retry: everything is saved.
        let retried = RecordingLosses(flows: flowCounters(failedWrites: 5), content: ContentCounters())
        #expect(retried.isEmpty)
        #expect(RecordingPresentation.stopped(retried, folder: "/d") == "everything is saved in /d.")
        var content = ContentCounters()
        content.turnsLost = 3
        content.failedWrites = 1
        content.chunksDropped = 1
        content.bytesDropped = 65_536
        content.lastError = .segment(.cannotWrite(path: "/d/content/content-00000001.seg", reason: "Permission denied"))
        let losses = RecordingLosses(flows: flowCounters(notSaved: 254, stale: 1, failedWrites: 9, dropped: 2), content: content)
        #expect(RecordingPresentation.stopped(losses, folder: "/d")
            == "not everything was saved in /d: 254 flows never written, 1 flow without their last update, 2 flow events dropped because the database could not keep up, 3 turns of decrypted content never written, 1 content chunk (64.0 KiB) dropped because the content writer could not keep up. The last error: The disk holding the data folder is full (/d/tunnelvision.sqlite3 cannot grow); free some space on it (`tv content delete` deletes the kept decrypted content and decrypted captures, which needs no room; `tv storage` shows what takes the room) and try again.")
    }

    /// Trial 43: flows failed on the full disk and were all written at a retry, while content and
    /// the decrypted capture were held for them (`HistoryFirst`, no failed write of their own):
    /// the stop named the flows' disk full as the last error of what content lost, and `tv status`
    /// gave the held turns no reason.
    @Test func contentHeldForTheHistoryIsSaidWithItsOwnReason() {
        var content = ContentCounters()
        content.turnsLost = 40
        content.failing = true
        content.lastError = .heldForHistory(.reserve(freeBytes: 1_048_576))
        var decrypted = DecryptedCaptureCounters()
        decrypted.packetsNotSaved = 12
        decrypted.bytesNotSaved = 3_000
        decrypted.flowsNotSaved = 2
        decrypted.failing = true
        decrypted.lastFailure = .heldForHistory(.flowsWaiting)
        let losses = RecordingLosses(flows: flowCounters(failedWrites: 5), content: content, decrypted: decrypted)
        let held = "The disk holding the data folder has 1.0 MiB free, within the 16.0 MiB kept for the flow history: decrypted content takes none of it; free some space on it (`tv content delete` deletes the kept decrypted content and decrypted captures, which needs no room; `tv storage` shows what takes the room)."
        #expect(losses.lastContentError == held)
        #expect(RecordingPresentation.statusLines(losses).contains("  last error      " + held))
        #expect(RecordingPresentation.stopped(losses, folder: "/d")
            == "not everything was saved in /d: 40 turns of decrypted content never written, 12 packets of the decrypted capture never written (2.9 KiB of plaintext, 2 flows). The last error: " + held)
        // Only the capture lost anything: its reason.
        let captureOnly = RecordingLosses(flows: flowCounters(failedWrites: 5), content: ContentCounters(), decrypted: decrypted)
        #expect(RecordingPresentation.stopped(captureOnly, folder: "/d").hasSuffix(" The last error: The disk holding the data folder is full and flows wait in memory to be saved: the flow history comes first, so the decrypted capture takes no room until they are written; free some space on it (`tv content delete` deletes the kept decrypted content and decrypted captures, which needs no room; `tv storage` shows what takes the room)."))
    }

    @Test func statusLinesAndTheControlValuesRoundTrip() {
        var content = ContentCounters()
        content.turnsLost = 1
        content.failedWrites = 1
        content.failing = true
        content.lastError = .segment(.cannotWrite(path: "/d/content/content-00000001.seg", reason: "Permission denied"))
        let losses = RecordingLosses(flows: flowCounters(notSaved: 7, waiting: 12, failedWrites: 4, failing: true), content: content)
        #expect(RecordingLosses(values: losses.values) == losses)
        #expect(RecordingLosses(values: ["mode": "regular"]) == nil)
        #expect(losses.values["recording.flowsWaiting"] == "12")
        #expect(losses.values["recording.flowsFailing"] == "on")
        #expect(RecordingPresentation.statusLines(losses) == [
            "flows not saved   12 waiting in memory, not in the history yet; 7 given up (never saved), 0 without their last update; 4 failed writes, failing now",
            "  last error      The disk holding the data folder is full (/d/tunnelvision.sqlite3 cannot grow); free some space on it (`tv content delete` deletes the kept decrypted content and decrypted captures, which needs no room; `tv storage` shows what takes the room) and try again.",
            "content not saved 1 turn (1 failed writes, failing now)",
            "  last error      Could not write decrypted content to /d/content/content-00000001.seg (Permission denied); check free space and that the content folder belongs to you (0700), then try again.",
        ])
        #expect(RecordingPresentation.statusLines(RecordingLosses()) == [])
    }

    /// A trial's status said "flows not saved 0 (… 5382 waiting to be retried …)", read as
    /// nothing lost: the flows in memory only lead now, and programs lost are said.
    @Test func theWaitingFlowsLeadTheStatusLine() {
        var counters = flowCounters(waiting: 5_382, failedWrites: 26, failing: true)
        counters.programsNotSaved = 3
        let losses = RecordingLosses(flows: counters, content: ContentCounters())
        #expect(RecordingLosses(values: losses.values) == losses)
        #expect(losses.values["recording.programsNotSaved"] == "3")
        #expect(RecordingPresentation.statusLines(losses).first
                == "flows not saved   5,382 waiting in memory, not in the history yet; 0 given up (never saved), 0 without their last update, 3 without their program; 26 failed writes, failing now")
        // Written at a retry: no waiting clause.
        #expect(RecordingPresentation.statusLines(RecordingLosses(flows: flowCounters(failedWrites: 5), content: ContentCounters())).first
                == "flows not saved   0 given up (never saved), 0 without their last update; 5 failed writes, working again")
        // A stop with programs lost says so; the given-up line is said once, when it starts.
        var stopped = RecordingLosses()
        stopped.programsNotSaved = 1
        #expect(RecordingPresentation.stopped(stopped, folder: "/d") == "not everything was saved in /d: 1 flow's program looked up but not saved.")
        #expect(RecordingPresentation.flowsGivenUpNotice(counters)
                == "Flows are being lost: 16,384 unsaved flows wait in memory, the most tv keeps, so from now on each new one pushes the oldest out unsaved (`tv status` counts them) until the data folder's disk has room again.")
    }

    /// What the full queues dropped is said by `tv status` too, not only by `tv diag`.
    @Test func statusSaysWhatTheQueuesDropped() {
        var content = ContentCounters()
        content.chunksDropped = 4_864
        content.bytesDropped = 4_864 * 16_384
        let losses = RecordingLosses(flows: flowCounters(dropped: 1), content: content)
        #expect(RecordingLosses(values: losses.values) == losses)
        #expect(losses.values["recording.contentBytesDropped"] == "79691776")
        #expect(RecordingPresentation.statusLines(losses) == [
            "flows dropped     1 flow event while the database fell behind: some flows lack their latest state",
            "content dropped   4,864 chunks (76.0 MiB) while the content writer fell behind: the turns they belonged to are marked incomplete (`tv turns`)",
        ])
    }

    /// A decrypted capture that lost 12 packets (3,000 bytes of plaintext) of 2 flows to a full disk.
    func decryptedCounters(failing: Bool) -> DecryptedCaptureCounters {
        var counters = DecryptedCaptureCounters()
        counters.packetsNotSaved = 12
        counters.bytesNotSaved = 3_000
        counters.flowsNotSaved = 2
        counters.failedWrites = 4
        counters.failing = failing
        counters.lastFailure = .diskFull(path: "/d/captures/decrypted-20261206-171931.pcapng")
        counters.recording = failing ? nil : "decrypted-20261206-172001.pcapng"
        return counters
    }

    @Test("the decrypted capture on a full disk: said once as it fails (what, what to do) and as it resumes, counted in status and in the stop message (a trial heard nothing of it)")
    func theDecryptedCaptureSaysWhatItLost() {
        #expect(RecordingPresentation.decryptedCaptureNotice(.startedFailing, decryptedCounters(failing: true))
            == "The decrypted capture is not being saved: The disk holding the data folder is full (/d/captures/decrypted-20261206-171931.pcapng cannot grow); free some space on it and try again. Connections are still forwarded; the file being written was closed at its last whole packet, and tv tries a new file with the next packets (at most every 8 s) and says when recording resumes.")
        #expect(RecordingPresentation.decryptedCaptureNotice(.resumed, decryptedCounters(failing: false))
            == "Recording resumed: the decrypted capture is saved again in decrypted-20261206-172001.pcapng (12 packets of 2 flows could not be saved).")
        var failing = decryptedCounters(failing: true)
        failing.bytesDropped = 2_048
        failing.eventsDropped = 1
        let losses = RecordingLosses(flows: flowCounters(), content: ContentCounters(), decrypted: failing)
        #expect(!losses.isEmpty && !losses.isEmptyHere)
        #expect(RecordingPresentation.statusLines(losses) == [
            "decrypted capture 12 packets not saved (2.9 KiB of plaintext, 2 flows; 4 failed writes, failing now)",
            "  last error      The disk holding the data folder is full (/d/captures/decrypted-20261206-171931.pcapng cannot grow); free some space on it and try again.",
            "decrypted dropped 2.0 KiB of plaintext and 1 flow beginning or end while the decrypted capture's writer fell behind: its streams show the gaps",
        ])
        #expect(RecordingPresentation.stopped(losses, folder: "/d")
            == "not everything was saved in /d: 12 packets of the decrypted capture never written (2.9 KiB of plaintext, 2 flows), 2.0 KiB of plaintext and 1 flow beginning or end dropped from the decrypted capture because its writer could not keep up. The last error: The disk holding the data folder is full (/d/captures/decrypted-20261206-171931.pcapng cannot grow); free some space on it and try again.")
        // Carried to `tv stop` and `tv status --json` (under decryptedCapture) over the socket.
        let values = losses.values
        #expect(values["decryptedCapture.packetsNotSaved"] == "12" && values["decryptedCapture.flowsNotSaved"] == "2"
                && values["decryptedCapture.failing"] == "on" && values["decryptedCapture.bytesDropped"] == "2048")
        #expect(RecordingLosses(values: values) == losses)
        // A session without a decrypted capture says nothing of one.
        let none = RecordingLosses(flows: flowCounters(), content: ContentCounters())
        #expect(none.values.keys.allSatisfy { !$0.hasPrefix("decryptedCapture.") } && none.isEmpty)
        #expect(RecordingLosses(values: none.values) == none)
        // Failed writes retried with success, nothing lost: everything is saved.
        var retried = DecryptedCaptureCounters()
        retried.failedWrites = 2
        #expect(RecordingLosses(flows: flowCounters(), content: ContentCounters(), decrypted: retried).isEmpty)
    }

    @Test("tv status and tv diag: the decrypted capture's file, what it wrote, and what it lost")
    func theDecryptedCaptureInStatusAndDiag() {
        var values = QueueStatus.values(flows: flowCounters(), decrypted: decryptedCounters(failing: false))
        #expect(CapturesPresentation.decryptedStatusLine(values) == "decrypted-20261206-172001.pcapng recording, 0 packets written in 0 files")
        values = QueueStatus.values(flows: flowCounters(), decrypted: decryptedCounters(failing: true))
        values.merge(RecordingLosses(flows: flowCounters(), content: ContentCounters(), decrypted: decryptedCounters(failing: true)).values) { a, _ in a }
        #expect(CapturesPresentation.decryptedStatusLine(values) == "no file open while writes fail, 0 packets written in 0 files")
        #expect(CapturesPresentation.decryptedStatusLine(QueueStatus.values(flows: flowCounters(), decrypted: nil)) == nil)
        let diag = DiagnosticsPresentation.sections(values).first { $0.title.hasPrefix("Decrypted content and recording") }
        #expect(diag?.rows.filter { $0.label?.contains("decrypted capture") ?? false || $0.label?.hasPrefix("  ") ?? false }.map { "\($0.label ?? ""): \($0.value)" } == [
            "decrypted capture: no file open while writes fail, 0 packets written in 0 files",
            "  not saved: 12 packets (2.9 KiB of plaintext, 2 flows) not saved, 4 failed writes, failing now",
            "  dropped: 0 B of plaintext, 0 beginnings and ends (queue full)",
            "  last error: The disk holding the data folder is full (/d/captures/decrypted-20261206-171931.pcapng cannot grow); free some space on it and try again.",
        ])
    }
}
