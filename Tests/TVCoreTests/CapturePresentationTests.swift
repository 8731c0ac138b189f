import Capture
import FlowTerms
import Settings
import Testing
import Recording
@testable import TVCore

@Suite("Packets and captures in words")
struct CapturePresentationTests {
    static func row(_ n: Int64, _ micros: Int64, _ direction: Direction, _ size: Int64, _ flags: UInt8?, _ meaning: PacketMeaning,
                    kept: Int64? = nil) -> PacketRow {
        PacketRow(flow: 42, n: n, captureSeq: 1, fileOffset: 60 + n * 100, timeMicros: 1_000_000_000 + micros, direction: direction,
                  originalLength: size, includedLength: kept ?? size, tcpFlags: flags, meaning: meaning)
    }

    static let handshake = [
        row(1, 0, .clientToServer, 60, 0x02, .opened),
        row(2, 4_200, .serverToClient, 60, 0x12, .accepted),
        row(3, 4_900, .clientToServer, 52, 0x10, .deliveryConfirmed),
        row(4, 1_234_567, .clientToServer, 1_500, 0x18, .data, kept: 96),
        row(5, 12_001_999, .serverToClient, 40, 0x14, .cutOff),
    ]

    @Test("an empty list after deletions says they were deleted, not \"yet\" (a re-check)")
    func emptyAfterDeletions() {
        #expect(CapturesPresentation.lines([], folder: "/d/captures", captureOn: true, deleted: 3)
                == ["There are no capture files: the 3 made here were deleted (`tv captures delete` or the captures' limits); tv writes one while `tv exec` or `tv run --mode tun` runs with capture.enabled on (it is on)."])
        #expect(CapturesPresentation.lines([], folder: "/d/captures", captureOn: false)
                == ["There are no capture files yet: tv writes one while `tv exec` or `tv run --mode tun` runs with capture.enabled on (it is off: `tv settings set capture.enabled on`)."])
    }

    @Test("The list: meaning first, flags second, ms since the first packet, a snap-cut packet says what was kept")
    func list() {
        let list = PacketListPresentation(flow: 42, rows: Self.handshake, count: 5)
        #expect(list.lines() == [
            "Packets of flow 42: 5 packets.",
            "  1   0.000 s  →     60 B  opened              SYN",
            "  2   0.004 s  ←     60 B  accepted            SYN, ACK",
            "  3   0.005 s  →     52 B  delivery confirmed  ACK",
            "  4   1.235 s  →  1,500 B  data                PSH, ACK  (96 of 1,500 bytes kept)",
            "  5  12.002 s  ←     40 B  cut off             RST, ACK",
        ])
    }

    @Test("A capped list names both numbers; the JSON says count, listed, capped")
    func capped() {
        let rows = (1...500).map { Self.row(Int64($0), Int64($0) * 1_000, .clientToServer, 52, 0x10, .deliveryConfirmed) }
        let list = PacketListPresentation(flow: 7, rows: rows, count: 1_234)
        #expect(list.lines().first == "Packets of flow 7: the first 500 of 1,234 are listed (tv keeps rows for the first 500 of a connection; the capture file has them all).")
        #expect(list.lines().count == 501)
        // `tv flow`'s summary does not promise all 1,234 in `tv packets` (a trial's 607-packet flow).
        #expect(list.summaryLines(limit: 10).first == "Packets: 1,234 captured; the first 10 (`tv packets 7` lists the first 500):")
        let json = list.json().serialized()
        #expect(json.hasPrefix("{\"flow\":7,\"count\":1234,\"listed\":500,\"capped\":true,\"packets\":[{\"n\":1,\"offsetMicros\":0,"))
        #expect(PacketListPresentation(flow: 7, rows: Array(rows.prefix(3)), count: 3).json().serialized()
            .contains("\"tcpFlags\":[\"ACK\"],\"meaning\":\"delivery_confirmed\",\"capture\":1"))
    }

    @Test("No packets, and packets without rows, are two different sentences; tv flow shows the first rows and the count")
    func absences() {
        #expect(PacketListPresentation(flow: 3, rows: [], count: 0).lines() == [
            "No packets of flow 3 are recorded: tv captures packets only for connections made through `tv exec` or `tv run --mode tun` while capture.enabled is on (the proxy modes see connections, not packets), and only while the capture can be written (a full disk loses them: the session's closing line and `tv status` say so); a session killed outright (`kill -9`) loses the rows it had not written yet.",
        ])
        // A tunnel flow whose packets never reached a capture (a full disk): not the proxy modes' sentence.
        #expect(PacketListPresentation(flow: 3, rows: [], count: 0, carried: 9).lines() == [
            "The tunnel carried 9 packets of flow 3, but none is in a capture: capture.enabled was off then, or the capture writer could not write them (a full disk; the session's closing line and `tv status` said why).",
        ])
        #expect(PacketListPresentation(flow: 3, rows: [], count: 12).lines() == [
            "12 packets were captured for flow 3, but no packet row was saved (the capture writer fell behind or failed; `tv status` says which); the capture file still holds them.",
        ])
        let summary = PacketListPresentation(flow: 42, rows: Self.handshake, count: 5).summaryLines(limit: 2)
        #expect(summary == [
            "Packets: 5 captured; the first 2 (`tv packets 42` lists all 5):",
            "  1  0.000 s  →  60 B  opened    SYN",
            "  2  0.004 s  ←  60 B  accepted  SYN, ACK",
        ])
    }

    static func file(_ seq: Int64, bytes: Int64, recording: Bool = false, ended: Int64? = nil) -> CaptureFile {
        CaptureFile(seq: seq, path: "/d/captures/" + CaptureFolder.fileName(seq), startedMicros: 1_764_590_400_000_000,
                    endedMicros: recording ? nil : (ended ?? 1_764_594_000_000_000), bytes: bytes, packets: 10, snapLength: 65_535,
                    isRecording: recording)
    }

    static let day: Int64 = 86_400_000_000
    static let gib: Int64 = 1 << 30

    static func room(_ files: [CaptureFile], _ bytes: String, _ age: String, now: Int64 = 1_764_594_000_000_000) -> [String] {
        CapturesPresentation.roomLines(CaptureRoom.evaluate(files: files, maxBytes: ("captures.maxBytes", SettingLimit.bytes(bytes)),
                                                            maxAge: ("captures.maxAge", SettingLimit.micros(age)), nowMicros: now))
    }

    @Test("Room: captures held as audit evidence count, never go, and have no expiry date (a trial's room said the oldest would go, and when it expired)")
    func evidenceInTheRoom() {
        let files = [Self.file(2, bytes: 100, recording: true), Self.file(1, bytes: 2 << 20)]
        let held = CaptureRoom.evaluate(files: files, evidence: [1], maxBytes: ("captures.maxBytes", SettingLimit.bytes("1MB")),
                                        maxAge: ("captures.maxAge", SettingLimit.micros("30d")), nowMicros: 1_764_594_000_000_000)
        #expect(held == .limits(size: .heldAsEvidence(used: (2 << 20) + 100, limit: 1 << 20), expiry: .onlyEvidence(rule: .init(maxAgeMicros: 30 * Self.day))))
        #expect(CapturesPresentation.roomLines(held) == [
            "No room left: the captures use 2.0 MiB of the 1.0 MiB limit, and every closed one is audit evidence, which no limit removes until its audit session is deleted (`tv audit delete`).",
            "Every closed capture is audit evidence, which does not expire until its audit session is deleted; others are kept 30 days after they close.",
        ])
        // One closed capture that is not evidence: it is the one that goes, and the one that expires.
        let mixed = CaptureRoom.evaluate(files: files + [Self.file(3, bytes: 10, ended: 1_764_594_000_000_000 - Self.day)], evidence: [1],
                                         maxBytes: ("captures.maxBytes", SettingLimit.bytes("1MB")),
                                         maxAge: ("captures.maxAge", SettingLimit.micros("30d")), nowMicros: 1_764_594_000_000_000)
        #expect(mixed == .limits(size: .full(used: (2 << 20) + 110, limit: 1 << 20),
                                 expiry: .date(micros: 1_764_594_000_000_000 + 29 * Self.day, rule: .init(maxAgeMicros: 30 * Self.day))))
    }

    @Test("Room counts what is on disk, as retention does: a file cut since its row was written counts its size now, one gone counts nothing (a trial's room and tv storage disagreed)")
    func roomCountsTheDisk() {
        var cut = Self.file(1, bytes: 3_000_000)
        cut.bytesOnDisk = 600_000
        var gone = Self.file(2, bytes: 500_000)
        gone.bytesOnDisk = nil
        let room = CaptureRoom.evaluate(files: [cut, gone, Self.file(3, bytes: 100, recording: true)],
                                        maxBytes: ("captures.maxBytes", SettingLimit.bytes("1MB")),
                                        maxAge: ("captures.maxAge", SettingLimit.micros("off")), nowMicros: 1_764_594_000_000_000)
        #expect(room == .limits(size: .roomToSpare(left: (1 << 20) - 600_100, limit: 1 << 20, used: 600_100), expiry: .off))
    }

    @Test("Room: the four size outcomes")
    func sizeOutcomes() {
        #expect(Self.room([Self.file(2, bytes: Self.gib / 2, recording: true), Self.file(1, bytes: Self.gib / 2)], "2GB", "off") == [
            "1.0 GiB left: the captures use 1.0 GiB of the 2.0 GiB limit (captures.maxBytes).",
            "Captures do not expire (captures.maxAge is off).",
        ])
        #expect(Self.room([Self.file(2, bytes: Self.gib, recording: true), Self.file(1, bytes: Self.gib * 2)], "2GB", "off").first
            == "No room left: the captures use 3.0 GiB, the 2.0 GiB limit is already full, so the oldest closed captures go to make room and what they held is lost.")
        #expect(Self.room([Self.file(2, bytes: Self.gib * 3, recording: true), Self.file(1, bytes: 10)], "2GB", "off").first
            == "The 2.0 GiB limit cannot be met: the capture being recorded is 3.0 GiB on its own; close it with `tv captures rotate` so it can be removed.")
        #expect(Self.room([Self.file(1, bytes: 2_048)], "off", "30d").first
            == "No size limit (captures.maxBytes is off): the captures use 2.0 KiB and grow until you delete them.")
        // Decrypted captures live under the same limit: they count in what is used, and are named.
        let closed = [Self.file(2, bytes: 2_400 << 10, recording: true)]
        let room = CaptureRoom.evaluate(files: closed, decrypted: [.init(bytes: 2_300 << 10, modifiedMicros: 1_764_590_400_000_000, isRecording: false)],
                                        maxBytes: ("captures.maxBytes", SettingLimit.bytes("5MB")),
                                        maxAge: ("captures.maxAge", SettingLimit.micros("off")), nowMicros: 1_764_594_000_000_000)
        #expect(CapturesPresentation.roomLines(room, decryptedBytes: 2_300 << 10).first
            == "420 KiB left: the captures use 4.6 MiB of the 5.0 MiB limit (captures.maxBytes). 2.2 MiB of that is decrypted captures (`tv captures` lists them).")
        // The disk holding them has less free than the limit leaves (a trial's full tmpfs read
        // "2.0 GiB left"): said after; more free than that says nothing more.
        #expect(room.leftUnderLimit == 420 << 10)
        #expect(CapturesPresentation.roomLines(room, diskFree: 100 << 10).last
            == "The disk holding the captures has only 100 KiB free, less than the limit leaves: captures stop being written when it fills, before the limit.")
        #expect(CapturesPresentation.roomLines(room, diskFree: 0).last
            == "The disk holding the captures is full: no packet is written until room is made on it (the limit is not what stops them).")
        #expect(CapturesPresentation.roomLines(room, diskFree: 1 << 30).count == 2)
    }

    @Test("Room: the four expiry outcomes, neither limit, unreadable limits")
    func expiryOutcomes() {
        let closed = Self.file(1, bytes: 10, ended: 1_764_594_000_000_000)
        #expect(Self.room([closed], "off", "30d")[1] == "The oldest capture expires on 2025-12-31 13:00 UTC (captures are kept 30 days after they close).")
        #expect(Self.room([Self.file(3, bytes: 1, recording: true), closed, Self.file(2, bytes: 1, ended: 1_764_594_000_000_000)], "off", "1d",
                          now: 1_764_594_000_000_000 + Self.day)[1]
            == "2 captures are already past the 1 day expiry and go at the next cleanup.")
        #expect(Self.room([Self.file(1, bytes: 10, recording: true)], "off", "12h")[1]
            == "No capture has closed yet, so none has an expiry date: a capture is kept 12 hours from when it closes, and the one being recorded closes when the next one opens.")
        #expect(Self.room([closed], "1GB", "off")[1] == "Captures do not expire (captures.maxAge is off).")
        #expect(Self.room([closed], "off", "off") == [
            "Neither limit is set (captures.maxBytes and captures.maxAge are off): nothing removes a capture unless you delete it. The captures use 10 B.",
        ])
        #expect(Self.room([closed], "lots", "30d") == [
            "tv cannot read captures.maxBytes ('lots'), so the room left is not shown; set it again with `tv settings set NAME VALUE` (a size like 2GB, an age like 30d, or off).",
        ])
        #expect(Self.room([closed], "2XB", "soon") == [
            "tv cannot read captures.maxBytes ('2XB') and captures.maxAge ('soon'), so the room left is not shown; set them again with `tv settings set NAME VALUE` (a size like 2GB, an age like 30d, or off).",
        ])
    }

    @Test("Room: closed decrypted captures count and expire by content.expiry when it is sooner; the one being written is the open one (a trial's room said no capture had closed while 13 decrypted ones were past their expiry, and that the full limit's closed captures would go when none was closed)")
    func decryptedCapturesInTheRoom() {
        let now: Int64 = 1_764_594_000_000_000
        let hour: Int64 = 3_600_000_000
        func room(_ decrypted: [CaptureRoom.DecryptedFile], files: [CaptureFile] = [], bytes: String = "6MB", age: String = "30d") -> CaptureRoom {
            CaptureRoom.evaluate(files: files, decrypted: decrypted, decryptedMaxAgeMicros: hour,
                                 maxBytes: ("captures.maxBytes", SettingLimit.bytes(bytes)), maxAge: ("captures.maxAge", SettingLimit.micros(age)), nowMicros: now)
        }
        let closed = (0..<13).map { CaptureRoom.DecryptedFile(bytes: 1 << 20, modifiedMicros: now - 2 * hour - Int64($0), isRecording: false) }
        let past = room(closed + [.init(bytes: 100, modifiedMicros: now, isRecording: true)])
        #expect(past == .limits(size: .full(used: (13 << 20) + 100, limit: 6 << 20),
                                expiry: .past(count: 13, rule: .init(maxAgeMicros: 30 * Self.day, decryptedMaxAgeMicros: hour))))
        #expect(CapturesPresentation.roomLines(past, decryptedBytes: (13 << 20) + 100) == [
            "No room left: the captures use 13.0 MiB, the 6.0 MiB limit is already full, so the oldest closed captures go to make room and what they held is lost. 13.0 MiB of that is decrypted captures (`tv captures` lists them).",
            "13 captures are already past their expiry and go at the next cleanup (captures are kept 30 days after they close; decrypted captures, which hold plaintext, 1 hour (content.expiry is sooner)).",
        ])
        // Only the decrypted capture being written, over the limit on its own: no closed one can go.
        let open = room([.init(bytes: 18 << 20, modifiedMicros: now, isRecording: true)])
        #expect(open == .limits(size: .openCaptureOverLimit(open: 18 << 20, limit: 6 << 20),
                                expiry: .noDateYet(rule: .init(maxAgeMicros: 30 * Self.day, decryptedMaxAgeMicros: hour))))
        #expect(CapturesPresentation.roomLines(open)[1]
            == "No capture has closed yet, so none has an expiry date: a capture is kept 30 days from when it closes (a decrypted capture, which holds plaintext, 1 hour: content.expiry is sooner), and the one being recorded closes when the next one opens.")
        // The oldest to expire is a decrypted one, an hour after its last packet.
        let soon = room([.init(bytes: 10, modifiedMicros: now - hour / 2, isRecording: false)], files: [Self.file(1, bytes: 10, ended: now)])
        #expect(soon == .limits(size: .roomToSpare(left: (6 << 20) - 20, limit: 6 << 20, used: 20),
                                expiry: .date(micros: now + hour / 2, rule: .init(maxAgeMicros: 30 * Self.day, decryptedMaxAgeMicros: hour))))
        // captures.maxAge off: packet captures do not expire, decrypted ones still do.
        let off = room([.init(bytes: 10, modifiedMicros: now - hour / 2, isRecording: false)], bytes: "off", age: "off")
        #expect(CapturesPresentation.roomLines(off) == [
            "No size limit (captures.maxBytes is off): the captures use 10 B and grow until you delete them.",
            "The oldest capture expires on 2025-12-01 13:30 UTC (packet captures do not expire (captures.maxAge is off); decrypted captures, which hold plaintext, are kept 1 hour after they close (content.expiry)).",
        ])
        #expect(CapturesPresentation.roomJSON(off).serialized().contains(#""expiry":{"outcome":"date","expiresMicros":1764595800000000,"maxAgeMicros":null,"decryptedMaxAgeMicros":3600000000}"#))
        // No decrypted capture: the packet captures' sentences as before.
        #expect(room([], files: [Self.file(1, bytes: 10, ended: now - 31 * Self.day)], bytes: "off") == .limits(size: .noLimit(used: 10),
                expiry: .past(count: 1, rule: .init(maxAgeMicros: 30 * Self.day))))
    }

    @Test("Room as JSON (tv captures room --json): the same outcomes as the sentences, as fields")
    func roomJSON() {
        func json(_ files: [CaptureFile], _ bytes: String, _ age: String, decrypted: Int64 = 0, now: Int64 = 1_764_594_000_000_000) -> String {
            CapturesPresentation.roomJSON(CaptureRoom.evaluate(files: files, decrypted: decrypted > 0 ? [.init(bytes: decrypted, modifiedMicros: now, isRecording: true)] : [],
                                                               maxBytes: ("captures.maxBytes", SettingLimit.bytes(bytes)),
                                                               maxAge: ("captures.maxAge", SettingLimit.micros(age)), nowMicros: now),
                                          decryptedBytes: decrypted).serialized()
        }
        let closed = Self.file(1, bytes: 10, ended: 1_764_594_000_000_000)
        #expect(json([Self.file(2, bytes: 1_000, recording: true), closed], "2KB", "30d", decrypted: 24)
            == #"{"outcome":"limits","size":{"outcome":"roomToSpare","leftBytes":1014,"limitBytes":2048,"usedBytes":1034},"expiry":{"outcome":"date","expiresMicros":1767186000000000,"maxAgeMicros":2592000000000},"decryptedBytes":24}"#)
        #expect(json([Self.file(2, bytes: 3_000, recording: true)], "2KB", "1d")
            == #"{"outcome":"limits","size":{"outcome":"openCaptureOverLimit","limitBytes":2048,"openBytes":3000},"expiry":{"outcome":"noDateYet","maxAgeMicros":86400000000},"decryptedBytes":0}"#)
        #expect(json([Self.file(2, bytes: 1_000, recording: true), Self.file(1, bytes: 2_000)], "2KB", "1d", now: 1_764_594_000_000_000 + Self.day)
            == #"{"outcome":"limits","size":{"outcome":"full","limitBytes":2048,"usedBytes":3000},"expiry":{"outcome":"past","captures":1,"maxAgeMicros":86400000000},"decryptedBytes":0}"#)
        #expect(json([closed], "off", "off") == #"{"outcome":"neitherLimit","usedBytes":10,"decryptedBytes":0}"#)
        #expect(json([closed], "off", "12h")
            == #"{"outcome":"limits","size":{"outcome":"noLimit","usedBytes":10},"expiry":{"outcome":"date","expiresMicros":1764637200000000,"maxAgeMicros":43200000000},"decryptedBytes":0}"#)
        #expect(json([closed], "1GB", "off").contains(#""expiry":{"outcome":"off"}"#))
        #expect(json([closed], "2XB", "soon")
            == #"{"outcome":"unreadable","unreadable":[{"setting":"captures.maxBytes","text":"2XB"},{"setting":"captures.maxAge","text":"soon"}]}"#)
    }

    @Test("The captures list: newest first, the Recording one marked and explained; empty says how captures are made")
    func capturesList() {
        let lines = CapturesPresentation.lines([Self.file(2, bytes: 1_536, recording: true), Self.file(1, bytes: 64 << 20)],
                                               folder: "/d/captures", captureOn: true)
        #expect(lines == [
            "2 capture files in /d/captures, newest first:",
            "  2  capture-000002.pcapng   1.5 KiB  10 packets  since 2025-12-01 12:00:00 UTC  Recording",
            "  1  capture-000001.pcapng  64.0 MiB  10 packets  2025-12-01 12:00:00 to 13:00:00 UTC",
            "The Recording one is being written: it can be neither deleted nor shared until `tv captures rotate` closes it.",
        ])
        #expect(CapturesPresentation.lines([], folder: "/d/captures", captureOn: false) == [
            "There are no capture files yet: tv writes one while `tv exec` or `tv run --mode tun` runs with capture.enabled on (it is off: `tv settings set capture.enabled on`).",
        ])
        #expect(CapturesPresentation.deletionWarning(Self.file(1, bytes: 64 << 20))
            == "Deleting capture-000001.pcapng (64.0 MiB, 10 packets): the connections recorded while it was written stay in your history; only the raw packet bytes go, and they do not come back.")
        // Audit evidence is said first (a re-check's went without a word).
        #expect(CapturesPresentation.deletionWarning(Self.file(1, bytes: 64 << 20), evidence: true).hasSuffix(
            " It is audit evidence (it holds packets of an audit session's connections, which `tv audit bundle` packs): the bundle made after this has no packets from it."))
    }

    @Test("the decrypted captures are listed after the packet captures, newest first, the one being written marked")
    func decryptedCaptures() {
        #expect(CapturesPresentation.decryptedLines([]) == [])
        let lines = CapturesPresentation.decryptedLines([
            DecryptedCaptureRetention.File(name: "decrypted-20261204-101500.pcapng", bytes: 12_288, modified: 0, isRecording: false),
            DecryptedCaptureRetention.File(name: "decrypted-20261204-120000.pcapng", bytes: 300, modified: 0, isRecording: true),
        ])
        #expect(lines == [
            "2 decrypted captures (inspected connections' plaintext as TCP, for Wireshark without keys; `tv captures delete NAME`, `tv content delete` and retention remove closed ones):",
            "  decrypted-20261204-120000.pcapng     300 B  Recording",
            "  decrypted-20261204-101500.pcapng  12.0 KiB  closed",
        ])
    }

    @Test("tv captures --json: packet captures with kind and seq, then the decrypted ones newest first with kind, name and path")
    func capturesJSON() {
        #expect(CapturesPresentation.json([]).serialized() == "[]")
        let json = CapturesPresentation.json([Self.file(1, bytes: 2_048)], decrypted: [
            DecryptedCaptureRetention.File(name: "decrypted-20261204-101500.pcapng", bytes: 12_288, started: 5, modified: 7, isRecording: false),
            DecryptedCaptureRetention.File(name: "decrypted-20261204-120000.pcapng", bytes: 300, started: 9, modified: 11, isRecording: true),
        ], folder: "/d/captures").serialized()
        #expect(json.hasPrefix(#"[{"kind":"packets","seq":1,"#))
        #expect(json.hasSuffix(#"{"kind":"decrypted","name":"decrypted-20261204-120000.pcapng","path":"/d/captures/decrypted-20261204-120000.pcapng","startedMicros":9,"modifiedMicros":11,"bytes":300,"recording":true},"#
            + #"{"kind":"decrypted","name":"decrypted-20261204-101500.pcapng","path":"/d/captures/decrypted-20261204-101500.pcapng","startedMicros":5,"modifiedMicros":7,"bytes":12288,"recording":false}]"#), "\(json)")
    }

    @Test("the list says when a closed capture's file is gone or shorter than recorded (cut by hand); the recording one is not judged")
    func filesChangedOnDisk() {
        var cut = Self.file(18, bytes: 9_523)
        cut.bytesOnDisk = 5_000
        var gone = Self.file(17, bytes: 100)
        gone.bytesOnDisk = nil
        var growing = Self.file(19, bytes: 100, recording: true)
        growing.bytesOnDisk = 50
        let lines = CapturesPresentation.lines([growing, cut, gone], folder: "/d/captures", captureOn: true)
        #expect(lines[1].hasSuffix("Recording"), "\(lines)")
        #expect(lines[2].hasSuffix("UTC  (the file was cut after tv closed it: it now holds only 4.9 KiB of the 9.3 KiB written; `tv packet` says which packets are gone)"), "\(lines)")
        #expect(lines[3].hasSuffix("UTC  (its file is gone from the folder)"), "\(lines)")
        #expect(!CapturesPresentation.lines([Self.file(1, bytes: 10)], folder: "/d", captureOn: true)[1].contains("its file"))
    }

    @Test("after a deletion: what the file held is freed; a file already gone frees nothing, and says so")
    func deletedSentences() {
        let file = Self.file(3, bytes: 1_126)
        #expect(CapturesPresentation.deleted(file, freed: 1_126) == "Deleted capture-000003.pcapng; 1.1 KiB freed.")
        #expect(CapturesPresentation.deleted(file, freed: 0)
                == "Deleted capture-000003.pcapng from the list; its file was already gone from /d/captures/capture-000003.pcapng, so nothing was freed.")
    }

    @Test("one packet is one packet in the deletion warning")
    func deletionWarningSingular() {
        let one = CaptureFile(seq: 18, path: "/d/captures/capture-000018.pcapng", startedMicros: 0, endedMicros: 1, bytes: 116, packets: 1,
                              snapLength: 65_535, isRecording: false)
        #expect(CapturesPresentation.deletionWarning(one).hasPrefix("Deleting capture-000018.pcapng (116 B, 1 packet): "))
    }

    @Test("tv exec's closing line names the one file, or the first and last when the session rotated, and only files still there (it named one the captures' limits had just deleted: a trial)")
    func execFiles() {
        #expect(CapturesPresentation.execFiles([34], present: [34], folder: "/d/captures")
                == "its packets are in /d/captures/capture-000034.pcapng (`tv packets ID`, `tv captures`).")
        #expect(CapturesPresentation.execFiles([34, 35, 36, 37], present: [34, 35, 36, 37], folder: "/d/captures")
                == "its packets are in 4 files in /d/captures, capture-000034.pcapng to capture-000037.pcapng (`tv packets ID`, `tv captures`).")
        #expect(CapturesPresentation.execFiles([34, 35, 36, 37], present: [36, 37], folder: "/d/captures")
                == "its packets are in 2 files in /d/captures, capture-000036.pcapng to capture-000037.pcapng; 2 of its 4 files were deleted (by the captures' limits, captures.maxBytes and captures.maxAge, by `tv captures delete`, or by hand) (`tv packets ID`, `tv captures`).")
        #expect(CapturesPresentation.execFiles([43], present: [], folder: "/d/captures")
                == "its packets were in capture-000043.pcapng, deleted (by the captures' limits, captures.maxBytes and captures.maxAge, by `tv captures delete`, or by hand); its connections stay (`tv flows`).")
        // Two sessions at once: this one wrote 123 and 125, the other 124.
        #expect(CapturesPresentation.execFiles([123, 125], present: [123, 124, 125], folder: "/d/captures")
                == "its packets are in capture-000123.pcapng and capture-000125.pcapng in /d/captures (`tv packets ID`, `tv captures`).")
        #expect(CapturesPresentation.names([1, 2, 3, 5, 7, 8]) == "6 files: capture-000001.pcapng to capture-000003.pcapng, capture-000005.pcapng, capture-000007.pcapng to capture-000008.pcapng")
    }

    @Test("Status line and the loss sentence; the values nest in tv status --json without a clash")
    func status() {
        let values = ["capture.enabled": "on", "capture.recording": "4", "capture.packetsWritten": "1200", "capture.packetsDropped": "3"]
        #expect(SessionStatusPresentation.json(values).serialized()
            == "{\"running\":true,\"capture\":{\"enabled\":\"on\",\"packetsDropped\":3,\"packetsWritten\":1200,\"recording\":4},\"errors\":[],\"talkers\":[]}")
        #expect(CapturesPresentation.statusLine(["capture.enabled": "off"]) == nil)
        #expect(CapturesPresentation.statusLine(["capture.enabled": "on", "capture.recording": "4", "capture.packetsWritten": "1200", "capture.packetsDropped": "3"])
            == "capture 4 recording, 1,200 packets written this session, 3 dropped (the capture writer fell behind; they are not in the file)")
        // O_DIRECT is the rule and goes unsaid; the buffered fallback is said.
        #expect(CapturesPresentation.statusLine(["capture.enabled": "on", "capture.recording": "4", "capture.packetsWritten": "2", "capture.writeMode": "direct"])
            == "capture 4 recording, 2 packets written this session")
        #expect(CapturesPresentation.statusLine(["capture.enabled": "on", "capture.recording": "4", "capture.packetsWritten": "2", "capture.writeMode": "buffered"])
            == "capture 4 recording, 2 packets written this session, through the page cache (the captures folder's file system refused O_DIRECT)")
        // After a rotation the file's own count is said beside the session's (a trial read the
        // session's 5,651 as the new file's).
        #expect(CapturesPresentation.statusLine(["capture.enabled": "on", "capture.recording": "12", "capture.recordingPackets": "0",
                                                 "capture.packetsWritten": "5651"])
            == "capture 12 recording (0 packets in it), 5,651 packets written this session")
        #expect(CapturesPresentation.statusLine(["capture.enabled": "on", "capture.recording": "12", "capture.recordingPackets": "1",
                                                 "capture.packetsWritten": "5652"])
            == "capture 12 recording (1 packet in it), 5,652 packets written this session")
        #expect(CapturesPresentation.lossSentence(dropped: 0, failed: 0) == nil)
        #expect(CapturesPresentation.lossSentence(dropped: 5, failed: 1)
            == "Not every packet was captured: 5 dropped because the capture writer fell behind, 1 not saved because a write failed; the connections themselves were not affected.")
        #expect(CapturesPresentation.lossSentence(dropped: 0, failed: 916, why: "The disk holding capture-000002.pcapng is full.")
            == "Not every packet was captured: 916 not saved because a write failed (The disk holding capture-000002.pcapng is full); the connections themselves were not affected.")
    }

    @Test("tv packet past the packets captured, and past the 500 rows kept of more: two different sentences (a trial)")
    func noPacketSentences() {
        // `tv packets` lists only the first 500 of more: said so (it read "lists them" of 1,860: a trial).
        #expect(PacketDetailRefusal.noPacket(flow: 7, n: 1201, count: 1200).message
                == "Flow 7 has no packet 1201: 1,200 were captured; `tv packets 7` lists the first 500 of them (only the capture file has the rest).")
        #expect(PacketDetailRefusal.noPacket(flow: 7, n: 501, count: 500).message
                == "Flow 7 has no packet 501: 500 were captured; `tv packets 7` lists them.")
        #expect(PacketDetailRefusal.noPacket(flow: 7, n: 40, count: 30).message
                == "Flow 7 has no packet 40: 30 were captured; `tv packets 7` lists them.")
        #expect(PacketDetailRefusal.noPacket(flow: 7, n: 1200, count: 1200).message
                == "Flow 7's packet 1200 was captured, but tv keeps rows only for the first 500 of a connection's 1,200, so it cannot be shown here; only its capture file has it, while that is kept (`tv captures`).")
    }
}
