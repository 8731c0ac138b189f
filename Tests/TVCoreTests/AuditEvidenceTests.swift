import Capture
@testable import FlowStore
import FlowTerms
import Foundation
import Recording
import Settings
import Testing
import TVHome
@testable import TVCore

/// Issue 23: retention spares an audit session's evidence until the session is deleted; the
/// evidence bundle is a gzip'd ustar that GNU tar and Python's tarfile read, whose manifest's
/// SHA-256 are Python's hashlib's, and `verify` names the file that changed.
@Suite(.serialized) struct AuditEvidenceTests {
    let day: Int64 = 86_400_000_000

    func withHome(_ body: (TVHome) throws -> Void) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tv-audit-\(getpid())-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let home = TVHome(path: path)
        try home.ensureExists()
        try body(home)
    }

    /// A closed flow started at `start` (µs), written through a real writer while whatever
    /// session is live; returns its id.
    func writeFlow(_ store: FlowStore, start: Int64) throws -> Int64 {
        var flow = FlowRecord(startTime: start, clientAddress: "127.0.0.1", clientPort: 50_000, serverAddress: "10.0.0.1",
                              serverPort: 443, host: "a.test", hostOrigin: .sni, status: .encrypted)
        flow.duration = 1_000
        let writer = try store.makeWriter()
        defer { writer.close() }
        let opened = writer.open(flow)
        writer.flush()
        return opened.id
    }

    func run(_ tool: String, _ arguments: [String], in folder: String) throws -> (status: Int32, out: String) {
        let finished = Child.run(tool, arguments, environment: ProcessInfo.processInfo.environment, directory: folder, timeout: 120)
        if let failure = finished.startFailure { return (-1, failure.description) }
        return (finished.status, String(decoding: finished.stdout + finished.stderr, as: UTF8.self))
    }

    @Test("retention leaves a session's flows and the capture holding their packets alone, and takes them once the session is deleted")
    func retentionSparesEvidenceUntilTheSessionIsDeleted() throws {
        try withHome { home in
            let now = StorageClock.now()
            let store = try FlowStore(home: home)
            defer { store.close() }
            _ = try store.audit.newProject(name: "app", note: "", now: now - 50 * day)
            let session = try store.audit.start(project: "app", note: "", settings: "{}", now: now - 50 * day)
            let evidenceID = try writeFlow(store, start: now - 45 * day)
            _ = try store.audit.stop(now: now - 44 * day)
            let otherID = try writeFlow(store, start: now - 43 * day)
            let database = try SQLiteDatabase(path: home.databasePath)
            defer { database.close() }
            try FileManager.default.createDirectory(atPath: home.captureDirectory, withIntermediateDirectories: true)
            for (seq, flow) in [(1, evidenceID), (2, otherID)] {
                let name = CaptureFolder.fileName(Int64(seq))
                _ = FileManager.default.createFile(atPath: home.captureDirectory + "/" + name, contents: Data(count: 1_000))
                try database.execute("INSERT INTO captures (seq, path, started_at, ended_at, bytes, snaplen, recording) VALUES (\(seq), 'captures/\(name)', \(now - 46 * day), \(now - 42 * day), 1000, 65535, 0)")
                try database.execute("INSERT INTO packets (flow_id, n, capture_seq, file_offset, time_us, direction, orig_len, incl_len, meaning) VALUES (\(flow), 1, \(seq), 64, \(now - 43 * day), 'client_to_server', 60, 60, 'opened')")
            }
            let manager = try StorageManager(home: home)
            defer { manager.close() }
            #expect(try manager.auditEvidence() == .known(captures: [1], flows: [evidenceID]))
            let limits = StorageLimits(historyMaxAge: 30 * day, capturesMaxBytes: nil, capturesMaxAge: 30 * day)
            let first = try manager.applyLimits(limits, recording: nil, now: now)
            #expect(first.flowsDeleted == 1)
            #expect(first.captureFilesDeleted == 1)
            // … and says what it kept past the age limit, when asked (a trial's said nothing of it).
            #expect(first.evidenceFlowsPastAge == 1 && first.openFlowsPastAge == 0)
            #expect(StoragePresentation.report(first, automatic: false).last
                    == "Kept 1 connection older than history.maxAge: 1 is audit evidence, kept until its audit session is deleted (`tv audit delete ID`).")
            var both = first
            both.evidenceFlowsPastAge = 1_200
            both.openFlowsPastAge = 2
            #expect(StoragePresentation.keptPastAge(both) == ["Kept 1,202 connections older than history.maxAge: 1,200 are audit evidence, kept until their audit session is deleted (`tv audit delete ID`); 2 are still open, kept until they end."])
            #expect(!StoragePresentation.report(first, automatic: true).contains { $0.hasPrefix("Kept ") })
            #expect(try store.flow(id: evidenceID) != nil)
            #expect(try store.flow(id: otherID) == nil)
            #expect(try FileManager.default.contentsOfDirectory(atPath: home.captureDirectory) == ["capture-000001.pcapng"])

            _ = try store.audit.delete(session: session.id)
            #expect(try manager.auditEvidence() == AuditEvidence.none)
            let second = try manager.applyLimits(limits, recording: nil, now: now)
            #expect(second.flowsDeleted == 1)
            #expect(second.captureFilesDeleted == 1)
            #expect(try store.flow(id: evidenceID) == nil)
            #expect(try FileManager.default.contentsOfDirectory(atPath: home.captureDirectory) == [])
        }
    }

    /// A connection opened before a session and still active at its start is in the session's
    /// bundle (`carriedIntoSession`), so retention keeps it too (an audit trial's history.maxAge
    /// deleted it between two bundles).
    @Test("a connection carried into a session is evidence for retention, as its bundle counts it")
    func carriedConnectionIsEvidence() throws {
        try withHome { home in
            let now = StorageClock.now()
            let store = try FlowStore(home: home)
            defer { store.close() }
            // Opened 50 days ago, active until 44 days ago; the session ran from 45 to 44 days ago.
            var carried = FlowRecord(startTime: now - 50 * day, clientAddress: "127.0.0.1", clientPort: 50_000, serverAddress: "10.0.0.1",
                                     serverPort: 443, host: "a.test", hostOrigin: .sni, status: .inspected)
            carried.lastActivityTime = now - 44 * day - 1_000
            carried.duration = 6 * day - 1_000
            let before = try writeFlow(store, start: now - 49 * day)
            let writer = try store.makeWriter()
            let carriedID = writer.open(carried).id
            writer.flush()
            writer.close()
            _ = try store.audit.newProject(name: "app", note: "", now: now - 46 * day)
            _ = try store.audit.start(project: "app", note: "", settings: "{}", now: now - 45 * day)
            _ = try store.audit.stop(now: now - 44 * day)
            #expect(try store.audit.flowIDs(carriedInto: now - 45 * day) == [carriedID])
            let manager = try StorageManager(home: home)
            defer { manager.close() }
            #expect(try manager.auditEvidence() == .known(captures: [], flows: [carriedID]))
            let report = try manager.applyLimits(StorageLimits(historyMaxAge: 30 * day, capturesMaxBytes: nil, capturesMaxAge: nil),
                                                 recording: nil, now: now)
            #expect(report.flowsDeleted == 1)
            #expect(try store.flow(id: carriedID) != nil && store.flow(id: before) == nil)
            // A session's retention pass publishes it for the content writer's sweeps, which do
            // not read carried flows themselves (`CarriedEvidence`).
            let published = CarriedEvidence()
            let retention = SessionRetention(home: home, settings: SettingsStore(file: SettingsFile(home: home)), carried: published, say: { _ in })
            retention.finalPass()
            #expect(published.current == [carriedID])
        }
    }

    func sampleBundle() -> EvidenceBundle {
        let request = EvidenceBundleRequest(session: 7, includeContent: true, includeKeys: false, tvVersion: "0.1", machine: "box",
                                            now: 1_764_600_000_000_000)
        let session = AuditSession(id: 7, projectID: 1, projectName: "app", note: "", started: 1_764_599_000_000_000,
                                   ended: 1_764_599_900_000_000, settings: "{\"mode\":\"regular\"}")
        let files = [BundleFile(name: "flows.json", bytes: Array("{\"flows\": []}\n".utf8)),
                     BundleFile(name: "content/flow-1-turn-1.bin", bytes: (0..<1_300).map { UInt8($0 % 251) }),
                     BundleFile(name: "empty.txt", bytes: [])]
        let manifest = BundleManifest(tvVersion: "0.1", machine: "box", caSHA256: "ab", created: request.now, project: "app",
                                      session: 7, from: session.started, to: session.ended, settings: session.settings,
                                      contentIncluded: true, keysIncluded: false, files: [])
        return EvidenceBundle(session: session, flows: 0, carriedFlows: 0, contentFlows: 1, packets: 0, decryptedPackets: 0, keyLines: 0, request: request,
                              files: files, manifest: manifest)
    }

    @Test("the bundle's prompt says when it replaces a file and when its session still records")
    func bundlePrompt() {
        var live = sampleBundle()
        let lines = AuditPresentation.bundleContents(live, file: .path("e.tar.gz"), replacing: true)
        #expect(lines.contains("  to e.tar.gz (0600), replacing the file there"), "\(lines)")
        #expect(!lines.contains { $0.contains("still recording") })
        live.session.ended = nil
        let recording = AuditPresentation.bundleContents(live, file: .path("e.tar.gz"))
        #expect(recording.contains("  to e.tar.gz (0600)") && recording.last == "  the session is still recording: the bundle holds what it recorded until now (`tv audit stop` first for all of it)", "\(recording)")
        #expect(AuditPresentation.deleted(AuditDeletion(session: live.session, markers: 1, flowsReleased: 1)).hasSuffix("1 flow is no longer evidence."))
    }

    @Test("the bundle is a tar.gz GNU tar lists and extracts and Python's tarfile reads, with hashlib's SHA-256 in its manifest")
    func bundleReadByRealTools() throws {
        try withHome { home in
            let file = home.path + "/b.tar.gz"
            try sampleBundle().write(to: file)
            var info = stat()
            #expect(stat(file, &info) == 0 && info.st_mode & 0o777 == 0o600)
            let list = try run("tar", ["-tzf", file], in: home.path)
            #expect(list.status == 0)
            #expect(list.out == "manifest.json\nflows.json\ncontent/flow-1-turn-1.bin\nempty.txt\n", "\(list.out)")
            let out = home.path + "/x"
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
            #expect(try run("tar", ["-xzf", file, "-C", out], in: home.path).status == 0)
            #expect(FileManager.default.contents(atPath: out + "/content/flow-1-turn-1.bin").map(Array.init) == (0..<1_300).map { UInt8($0 % 251) })
            #expect(FileManager.default.contents(atPath: out + "/flows.json") == Data("{\"flows\": []}\n".utf8))
            let script = """
                import hashlib, json, sys, tarfile
                with tarfile.open(sys.argv[1], 'r:gz') as t:
                    names = t.getnames()
                    manifest = json.load(t.extractfile('manifest.json'))
                    for f in manifest['files']:
                        data = t.extractfile(f['name']).read()
                        assert len(data) == f['bytes'], f
                        assert hashlib.sha256(data).hexdigest() == f['sha256'], f
                    print(names, manifest['session'], manifest['machine'], manifest['settings'], manifest['to'] - manifest['from'])
                """
            let python = try run("python3", ["-c", script, file], in: home.path)
            #expect(python.out == "['manifest.json', 'flows.json', 'content/flow-1-turn-1.bin', 'empty.txt'] 7 box {'mode': 'regular'} 900000000\n",
                    "\(python.out)")
            #expect(BundleVerifier.verify(path: file) == .intact(files: 3))
            #expect(BundleVerdict.intact(files: 3).sentence(file: "b.tar.gz") == "b.tar.gz is intact: all 3 files match the SHA-256 in its manifest (nothing was damaged or lost; the manifest is not signed, so this does not show that nobody rewrote the bundle whole).")
        }
    }

    @Test("the manifest's own fields are sealed: Python re-packs the bundle with one digit of `from`, of the CA fingerprint or of the machine changed, or with a file and its line removed: verify says the manifest was changed; the untouched re-pack stays intact; a manifest without a seal (an older tv's) is checked as before")
    func manifestFieldsAreSealed() throws {
        try withHome { home in
            let file = home.path + "/b.tar.gz"
            try sampleBundle().write(to: file)
            let script = """
                import io, json, re, sys, tarfile
                src, out, how = sys.argv[1:4]
                with tarfile.open(src, 'r:gz') as t:
                    members = [(m, t.extractfile(m).read()) for m in t.getmembers()]
                def edit(text):
                    if how == 'from': return re.sub(r'("from" *: *)(\\d)', lambda m: m.group(1) + str((int(m.group(2)) + 1) % 10), text, count=1)
                    if how == 'ca': return text.replace('"ab"', '"ac"', 1)
                    if how == 'machine': return text.replace('"box"', '"bot"', 1)
                    if how == 'unsealed': return re.sub(r',\\s*"manifestSHA256" *: *"[0-9a-f]{64}"', '', text)
                    if how == 'drop':
                        m = json.loads(text)
                        m['files'] = [f for f in m['files'] if f['name'] != 'empty.txt']
                        return json.dumps(m, indent=2)
                    return text
                with tarfile.open(out, 'w:gz', format=tarfile.USTAR_FORMAT) as t:
                    for m, data in members:
                        if how == 'drop' and m.name == 'empty.txt': continue
                        if m.name == 'manifest.json': data = edit(data.decode()).encode()
                        m.size = len(data)
                        t.addfile(m, io.BytesIO(data))
                """
            for how in ["none", "from", "ca", "machine", "drop", "unsealed"] {
                let out = home.path + "/\(how).tar.gz"
                let repack = try run("python3", ["-c", script, file, out, how], in: home.path)
                #expect(repack.status == 0, "\(repack)")
                let verdict = BundleVerifier.verify(path: out)
                switch how {
                case "none": #expect(verdict == .intact(files: 3), "\(how)")
                case "unsealed":
                    // Its files match, but without the seal its fields cannot be relied on: not
                    // exit 0 (a script passed a bundle with its seal line taken out: a trial).
                    #expect(verdict == .intactUnsealed(files: 3) && verdict.exitCode == 1, "an older tv's manifest has no seal: \(verdict)")
                default: #expect(verdict == .manifestChanged, "\(how): \(verdict)")
                }
            }
            #expect(BundleVerdict.manifestChanged.sentence(file: "b.tar.gz")
                    == "b.tar.gz is NOT intact: its manifest.json was changed (its text does not hash to the manifestSHA256 it carries), so its span, CA fingerprint, machine and file list cannot be relied on.")
            #expect(BundleVerdict.manifestChanged.exitCode == 1)
        }
    }

    @Test("verify names the file whose one byte changed in the tar (nothing recomputed), and says when the archive is cut short")
    func verifyNamesTheChangedFile() throws {
        try withHome { home in
            let file = home.path + "/b.tar.gz"
            try sampleBundle().write(to: file)
            let script = """
                import gzip, sys, tarfile
                raw = bytearray(gzip.open(sys.argv[1]).read())
                with tarfile.open(sys.argv[1], 'r:gz') as t:
                    member = t.getmember(sys.argv[3])
                raw[member.offset_data + 5] ^= 0x01
                with gzip.open(sys.argv[2], 'wb') as out:
                    out.write(bytes(raw))
                """
            let changed = home.path + "/changed.tar.gz"
            #expect(try run("python3", ["-c", script, file, changed, "content/flow-1-turn-1.bin"], in: home.path).status == 0)
            let verdict = BundleVerifier.verify(path: changed)
            #expect(verdict == .changed("content/flow-1-turn-1.bin"))
            #expect(verdict.sentence(file: "changed.tar.gz")
                    == "changed.tar.gz is NOT intact: content/flow-1-turn-1.bin was changed (its SHA-256 differs from the manifest's).")
            // An uncompressed tar with the same change is read too.
            let plain = home.path + "/changed.tar"
            #expect(try run("sh", ["-c", "gzip -dc \(changed) > \(plain)"], in: home.path).status == 0)
            #expect(BundleVerifier.verify(path: plain) == .changed("content/flow-1-turn-1.bin"))
            // Cut short: the gzip stream ends early.
            let bytes = try #require(FileManager.default.contents(atPath: file))
            let cut = home.path + "/cut.tar.gz"
            _ = FileManager.default.createFile(atPath: cut, contents: bytes.prefix(bytes.count - 20))
            #expect(BundleVerifier.verify(path: cut) == .unreadable("it ends before its compressed stream does (cut short)"))
            // Not an archive at all (a new-user trial's `tv audit verify /etc/hostname` said "the archive ends early").
            let text = home.path + "/hostname"
            _ = FileManager.default.createFile(atPath: text, contents: Data("box\n".utf8))
            #expect(BundleVerifier.verify(path: text) == .notAnArchive)
            _ = FileManager.default.createFile(atPath: text, contents: Data(repeating: 0x41, count: 4096))
            #expect(BundleVerifier.verify(path: text) == .notAnArchive)
            // Nothing was checked: said as that, exit 2, not "NOT intact" (a trial's HAR given by mistake).
            #expect(BundleVerdict.notAnArchive.sentence(file: "requests.har") == "requests.har is not a tv evidence bundle: it is neither gzip nor tar, so nothing was checked.")
            #expect(BundleVerdict.notAnArchive.exitCode == 2)
            // A tar cut inside its first member is still read as a tar that ends early.
            let tarBytes = try #require(FileManager.default.contents(atPath: plain))
            _ = FileManager.default.createFile(atPath: text, contents: tarBytes.prefix(700))
            if case .unreadable(let why) = BundleVerifier.verify(path: text) { #expect(why.hasPrefix("the archive ends early"), "\(why)") } else { Issue.record("a cut tar verified") }
        }
    }

    @Test("the verdict (pure): missing, resized, unlisted and changed files, no manifest, names held or listed twice, unsafe names, an unknown format")
    func verdicts() {
        let a = BundleManifest.Entry(name: "a", bytes: 3, sha256: "aa")
        let b = BundleManifest.Entry(name: "b", bytes: 4, sha256: "bb")
        let manifestEntry = BundleManifest.Entry(name: "manifest.json", bytes: 10, sha256: "mm")
        func listing(_ entries: [BundleManifest.Entry], version: Int64 = 1) -> BundleManifest.Listing { .init(formatVersion: version, entries: entries, sealHolds: true) }
        #expect(BundleVerdict.decide(manifest: listing([a, b]), found: [manifestEntry, a, b]) == .intact(files: 2))
        #expect(BundleVerdict.decide(manifest: listing([a, b]), found: [manifestEntry, a]) == .missing("b"))
        #expect(BundleVerdict.decide(manifest: listing([a, b]), found: [a, .init(name: "b", bytes: 5, sha256: "bb")]) == .wrongSize("b", expected: 4, found: 5))
        #expect(BundleVerdict.decide(manifest: listing([a, b]), found: [a, .init(name: "b", bytes: 4, sha256: "cc")]) == .changed("b"))
        #expect(BundleVerdict.decide(manifest: listing([a]), found: [a, b]) == .unlisted("b"))
        #expect(BundleVerdict.decide(manifest: nil, found: [a]) == .noManifest)
        // A tampered copy ahead of the real one: held twice, whichever hashes right.
        #expect(BundleVerdict.decide(manifest: listing([a, b]), found: [manifestEntry, .init(name: "a", bytes: 3, sha256: "xx"), a, b]) == .heldTwice("a"))
        #expect(BundleVerdict.decide(manifest: nil, found: [manifestEntry, manifestEntry, a]) == .heldTwice("manifest.json"))
        #expect(BundleVerdict.decide(manifest: listing([a, a, b]), found: [manifestEntry, a, b]) == .listedTwice("a"))
        for name in ["../../evil.sh", "/etc/cron.d/evil", "content/../../x", "content//x", "./a", "content/", ""] {
            let entry = BundleManifest.Entry(name: name, bytes: 1, sha256: "ee")
            #expect(BundleVerdict.decide(manifest: listing([a, entry]), found: [manifestEntry, a, entry]) == .unsafeName(name), "\(name)")
            #expect(BundleVerdict.decide(manifest: listing([a, entry]), found: [manifestEntry, a]) == .unsafeListedName(name), "listed only: \(name)")
        }
        // A manifest that lists itself (it read "missing from the archive" while it was there: a trial).
        #expect(BundleVerdict.decide(manifest: listing([a, manifestEntry]), found: [manifestEntry, a]) == .listsItself)
        #expect(BundleVerdict.unsafeListedName("content/../project.json").sentence(file: "b.tgz")
                == "b.tgz is NOT intact: its manifest lists content/../project.json, a name `tv audit bundle` never writes (absolute, or with an empty, . or .. part).")
        #expect(BundleVerdict.decide(manifest: listing([], version: 99), found: [manifestEntry]) == .unknownFormat(99))
        #expect(BundleVerdict.unknownFormat(99).exitCode == 2 && BundleVerdict.cannotRead("x").exitCode == 2
                && BundleVerdict.heldTwice("a").exitCode == 1 && BundleVerdict.intact(files: 1).exitCode == 0)
        // formatVersion spelled as no whole number: malformed, not format 1 (JSON readers took
        // true and 1.5 for 1) nor a wrapped huge number.
        for text in ["true", "1.5", "1e0", "\"1\"", "99999999999999999999", "null"] {
            let manifest = Array("{\"format\":\"tv-audit-bundle\",\"formatVersion\":\(text),\"files\":[]}".utf8)
            #expect(BundleManifest.listing(manifest)?.formatVersionMalformed == true, "\(text)")
        }
        #expect(BundleManifest.wholeFormatVersion("{\"formatVersion\" : 1 ,") == 1)
        #expect(BundleManifest.wholeFormatVersion("{\"formatVersion\":2}") == 2)
        #expect(BundleVerdict.decide(manifest: BundleManifest.Listing(formatVersion: 0, entries: [], formatVersionMalformed: true), found: [manifestEntry])
                == .malformedFormatVersion)
        #expect(BundleVerdict.malformedFormatVersion.exitCode == 1)
        #expect(BundleVerdict.malformedFormatVersion.sentence(file: "e.tgz") == "e.tgz is NOT intact: its manifest's formatVersion is not a whole number (tv writes 1).")
        // Format 0 was never written: damaged, not newer.
        #expect(BundleVerdict.decide(manifest: listing([], version: 0), found: [manifestEntry]) == .unknownFormat(0))
        #expect(BundleVerdict.unknownFormat(0).exitCode == 1)
        #expect(BundleVerdict.unknownFormat(0).sentence(file: "e.tgz") == "e.tgz is NOT intact: its manifest names bundle format 0, which no tv writes (tv's formats start at 1).")
    }

    @Test("verify refuses what tar or gzip would not take as written: bytes appended, a second gzip member, a second copy of a file, an unsafe name, an unknown format; a missing file is nothing checked, not a damaged bundle")
    func verifyRefusesAppendedAndAmbiguousArchives() throws {
        try withHome { home in
            let file = home.path + "/b.tar.gz"
            try sampleBundle().write(to: file)
            let original = try #require(FileManager.default.contents(atPath: file))
            func verdict(_ data: Data) -> BundleVerdict {
                let path = home.path + "/t.tar.gz"
                _ = FileManager.default.createFile(atPath: path, contents: data)
                return BundleVerifier.verify(path: path)
            }
            #expect(verdict(original + Data("garbage\n".utf8)) == .appended(bytes: 8))
            #expect(verdict(original + original) == .appended(bytes: Int64(original.count)))
            #expect(BundleVerdict.appended(bytes: 8).sentence(file: "g.tgz") == "g.tgz is NOT intact: 8 bytes follow the end of the archive tv wrote (something was appended).")
            // Python's tarfile rewrites the archive: a duplicate flows.json ahead of the real one,
            // members with unsafe names (listed in a manifest that says so), a format from the future.
            let script = """
                import hashlib, io, json, sys, tarfile
                src, out, how = sys.argv[1], sys.argv[2], sys.argv[3]
                with tarfile.open(src, 'r:gz') as t:
                    members = [(m, t.extractfile(m).read()) for m in t.getmembers()]
                manifest = json.loads(members[0][1])
                def add(t, name, data):
                    info = tarfile.TarInfo(name); info.size = len(data); t.addfile(info, io.BytesIO(data))
                extra = []
                if how == 'twice':
                    extra = [('flows.json', b'{"flows": ["forged"]}\\n')]
                elif how == 'unsafe':
                    data = b'#!/bin/sh\\n'
                    extra = [('../../evil.sh', data)]
                    manifest['files'].append({'name': '../../evil.sh', 'bytes': len(data), 'sha256': hashlib.sha256(data).hexdigest()})
                elif how == 'future':
                    manifest['formatVersion'] = 99
                with tarfile.open(out, 'w:gz', format=tarfile.USTAR_FORMAT) as t:
                    # Its own bytes when nothing in it changes (a manifest is sealed as written).
                    add(t, 'manifest.json', members[0][1] if how == 'same' else json.dumps(manifest).encode())
                    for name, data in extra: add(t, name, data)
                    for m, data in members[1:]: add(t, m.name, data)
                """
            for (how, expected) in [("twice", BundleVerdict.heldTwice("flows.json")), ("unsafe", .unsafeName("../../evil.sh")),
                                    ("future", .unknownFormat(99)), ("same", .intact(files: 3))] {
                let out = home.path + "/\(how).tar.gz"
                let made = try run("python3", ["-c", script, file, out, how], in: home.path)
                #expect(made.status == 0, "\(made.out)")
                #expect(BundleVerifier.verify(path: out) == expected, "\(how)")
            }
            // Nothing to check: said as such, not as a damaged bundle.
            #expect(BundleVerifier.verify(path: home.path + "/nonexistent.tar.gz") == .cannotRead("No such file or directory"))
            #expect(BundleVerdict.cannotRead("No such file or directory").sentence(file: "x.tgz")
                    == "tv could not read x.tgz (No such file or directory), so nothing was checked; give the path of a bundle file you can read.")
            #expect(BundleVerifier.verify(path: home.path) == .cannotRead("it is a folder"))
            #expect(verdict(Data()) == .unreadable("it is empty (0 bytes)"))
        }
    }

    @Test("ustar headers: checksum, octal fields and the name limit")
    func ustarHeader() throws {
        let header = try #require(Ustar.header(name: "flows.json", size: 1_234, mtime: 1_764_600_000))
        #expect(header.count == 512)
        #expect(Array(header[124..<136]) == Array("00000002322\0".utf8))
        #expect(Array(header[257..<265]) == Array("ustar\000".utf8))
        let member = try Ustar.member(header[...])
        #expect(member == Ustar.Member(name: "flows.json", size: 1_234, type: UInt8(ascii: "0")))
        var damaged = header
        damaged[0] = UInt8(ascii: "g")
        #expect(throws: Ustar.HeaderProblem.checksum) { try Ustar.member(damaged[...]) }
        #expect(Ustar.header(name: String(repeating: "x", count: 101), size: 1, mtime: 0) == nil)
        #expect(Ustar.padding(1_300) == 236 && Ustar.padding(1_024) == 0)
    }

    @Test("markers sit among tv flows' rows at their time")
    func markersInterleave() {
        let lines = ["HEADER", "row 30", "row 20", "row 10", "More: …"]
        let m1 = AuditMarker(id: 1, sessionID: 2, time: 25, text: "login")
        let m2 = AuditMarker(id: 2, sessionID: 2, time: 10, text: "at ten")
        let out = AuditPresentation.interleave(lines, starts: [30, 20, 10], markers: [m2, m1])
        #expect(out == ["HEADER", "row 30", AuditPresentation.markerLine(m1), "row 20", "row 10", AuditPresentation.markerLine(m2), "More: …"])
        #expect(AuditPresentation.markerLine(m1) == "  ── 1970-01-01 00:00:00.000 UTC  marker: login (session 2)")
    }
}
