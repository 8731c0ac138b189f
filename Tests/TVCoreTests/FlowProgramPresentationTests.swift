import FlowStore
import FlowTerms
import ProgramLookup
import Testing
@testable import TVCore

@Suite("the program behind a flow, as tv flows and tv flow say it")
struct FlowProgramPresentationTests {
    let now: Int64 = 1_764_471_900_000_000
    static let curl = FlowProgram.known(ProgramIdentity(pid: 4242, command: "curl", executable: "/usr/bin/curl", uid: 1000, user: "alice"))

    func flow(id: Int64, _ program: FlowProgram?) -> FlowRecord {
        FlowRecord(id: id, startTime: now - 12_000_000, clientAddress: "127.0.0.1", clientPort: 50_000,
                   serverAddress: "127.0.0.1", serverPort: 443, host: "a.test", hostOrigin: .sni,
                   alpn: "h2", status: .encrypted, bytesUp: 1536, bytesDown: 2048, duration: 1_250_000, program: program)
    }

    @Test("the list's word: the command; 'other machine'; 'not known' for the other reasons; nothing when not looked up")
    func words() {
        #expect(FlowProgramPresentation.word(Self.curl) == "curl")
        #expect(FlowProgramPresentation.word(.notKnown(.otherMachine)) == "other machine")
        #expect(FlowProgramPresentation.word(.notKnown(.socketGone)) == "not known")
        #expect(FlowProgramPresentation.word(.notKnown(.notLookedUp)) == "")
        #expect(FlowProgramPresentation.word(nil) == "")
        #expect(FlowProgramPresentation.word(.known(ProgramIdentity(pid: 1, command: "a\u{1b}[2Jb", executable: nil, uid: 0, user: nil))) == #"a\x1b[2Jb"#)
        // A command that names another program than its executable says both (a python that
        // called itself curl was listed as curl: a trial); a cut or versioned name does not.
        let renamed = FlowProgram.known(ProgramIdentity(pid: 9, command: "curl", executable: "/usr/local/bin/python3.11", uid: 0, user: "root"))
        #expect(FlowProgramPresentation.word(renamed) == "curl [python3.11]")
        #expect(FlowProgramPresentation.sentence(renamed)
                == "curl (pid 9, /usr/local/bin/python3.11, user root (uid 0)); its command names another program than its executable (a process may name itself, a script is named by its file)")
        for (command, executable) in [("python3", "/usr/bin/python3.11"), ("a-very-long-pro", "/opt/a-very-long-program-name-curl"),
                                      ("node", "/usr/bin/nodejs"), ("curl", "/usr/bin/curl")] {
            #expect(FlowProgramPresentation.word(.known(ProgramIdentity(pid: 1, command: command, executable: executable, uid: 0, user: nil))) == command)
        }
        #expect(FlowProgramPresentation.word(.known(ProgramIdentity(pid: 1, command: "backup.sh", executable: "/usr/bin/bash", uid: 0, user: nil))) == "backup.sh [bash]")
        #expect(ProgramIdentity.kernelCommand("a-very-long-program-name-curl") == "a-very-long-pro" && ProgramIdentity.kernelCommand("curl") == "curl")
    }

    @Test("tv flow's line: pid, executable, user and uid; or 'not known:' with the reason")
    func sentences() {
        #expect(FlowProgramPresentation.sentence(Self.curl) == "curl (pid 4242, /usr/bin/curl, user alice (uid 1000))")
        #expect(FlowProgramPresentation.sentence(.known(ProgramIdentity(pid: 7, command: "x", executable: nil, uid: 1234, user: nil)))
                == "x (pid 7, executable not readable, uid 1234)")
        #expect(FlowProgramPresentation.sentence(.notKnown(.otherMachine)) == "not known: the client is on another machine")
        #expect(FlowProgramPresentation.sentence(.notKnown(.socketGone))
                == "not known: the client's socket was gone before tv looked (closed at once, as a one-off lookup's is; its program may still run)")
        #expect(FlowProgramPresentation.sentence(.notKnown(.notLookedUp)) == "not known: tv did not look it up")
        // No answer saved: not said as "did not look it up", which a lost answer is not.
        #expect(FlowProgramPresentation.sentence(nil)
                == "not recorded: tv did not look it up, or its answer was lost while the history could not be written (`tv status` counts those)")
    }

    @Test("the PROGRAM column adapts to the widest word, after WHEN; left out when no row has one")
    func column() {
        let page = FlowPage(flows: [flow(id: 3, Self.curl), flow(id: 2, .notKnown(.otherMachine)), flow(id: 1, nil)], nextCursor: nil)
        #expect(FlowListPresentation(page: page, now: now).lines() == [
            "ID  WHEN      PROGRAM        HOST    PROTO PORT         UP       DOWN  DURATION  STATUS",
            " 3  12 s ago  curl           a.test  h2 :443     ↑ 1.5 KiB  ↓ 2.0 KiB     1.3 s",
            " 2  12 s ago  other machine  a.test  h2 :443     ↑ 1.5 KiB  ↓ 2.0 KiB     1.3 s",
            " 1  12 s ago                 a.test  h2 :443     ↑ 1.5 KiB  ↓ 2.0 KiB     1.3 s",
        ])
        #expect(FlowListPresentation(page: FlowPage(flows: [flow(id: 1, nil)], nextCursor: nil), now: now).lines()[0]
                == "ID  WHEN      HOST    PROTO PORT         UP       DOWN  DURATION  STATUS")
    }

    @Test("--json: the program object, or null when not looked up")
    func json() {
        #expect(FlowProgramPresentation.json(Self.curl).serialized()
                == #"{"known":true,"pid":4242,"command":"curl","executable":"/usr/bin/curl","uid":1000,"user":"alice","commandDisagrees":false}"#)
        #expect(FlowProgramPresentation.json(.notKnown(.processGone)).serialized()
                == #"{"known":false,"reason":"process_gone","said":"not known: no program held the client's socket any more when tv looked (closed within a few ms, or its program exited)"}"#)
        #expect(FlowProgramPresentation.json(nil).serialized() == "null")
    }
}

@Suite("tv status: the program lookup's counters")
struct ProgramLookupStatusTests {
    @Test("keys, and the human line: named and not known; drops only when there were some; none from an older session")
    func line() {
        var c = ProgramLookup.Counters()
        c.lookedUp = 3
        c.found = 2
        c.notKnown = 1
        c.scans = 1
        c.exact = 2
        c.dumps = 1
        let values = ProgramLookupStatus.values(c)
        #expect(values == ["programs.lookedUp": "3", "programs.found": "2", "programs.otherMachine": "0", "programs.notKnown": "1",
                           "programs.dropped": "0", "programs.scans": "1", "programs.exact": "2", "programs.dumps": "1"])
        #expect(ProgramLookupStatus.line(values) == "3 looked up: 2 named, 1 not known")
        c.dropped = 4
        #expect(ProgramLookupStatus.line(ProgramLookupStatus.values(c)) == "3 looked up: 2 named, 1 not known, 4 not looked up (too many waiting)")
        // Clients on other machines have no local program: counted apart from "not known" (a trial).
        c.lookedUp = 6
        c.otherMachine = 3
        c.dropped = 0
        #expect(ProgramLookupStatus.line(ProgramLookupStatus.values(c)) == "6 looked up: 2 named, 3 from other machines, 1 not known")
        c.lookedUp = 4
        c.otherMachine = 1
        #expect(ProgramLookupStatus.line(ProgramLookupStatus.values(c)) == "4 looked up: 2 named, 1 from another machine, 1 not known")
        #expect(ProgramLookupStatus.line(["mode": "explicit"]) == nil)
    }
}
