import Foundation
import Testing

/// `tv captures`, `tv packets` and the capture settings through the built binary, without a
/// TUN (the TUN-side is CaptureExecTests): every empty and failure sentence.
@Suite("CLI: captures and packets", .serialized)
struct CaptureCLITests {
    @Test("capture settings are checked before they are saved and say when they apply")
    func settings() throws {
        try withSandbox { s in
            let snap = try s.tv("settings", "set", "capture.snaplen", "96")
            #expect(snap.status == 0, "\(snap)")
            #expect(snap.out == "Saved capture.snaplen = 96 (was 65535).\nThe snap length is written in each capture file's header, so it applies from the next start of `tv exec` or `tv run --mode tun`; rotating does not apply it.\n")
            let bad = try s.tv("settings", "set", "capture.snaplen", "300000")
            #expect(bad.status == 2 && bad.err == "tv: capture.snaplen takes 0 (whole packets) or a number of bytes from 64 (a packet's IP and TCP headers) to 262144, not '300000'.\n", "\(bad)")
            // Too small to hold a packet's headers, or to keep a file for more than a few packets
            // (a trial's settings took 1 byte and 1KB).
            #expect(try s.tv("settings", "set", "capture.snaplen", "1").status == 2)
            let tiny = try s.tv("settings", "set", "capture.rotateBytes", "1K")
            #expect(tiny.status == 2 && tiny.err == "tv: capture.rotateBytes takes 1MB or more (or off): a capture file of '1K' would be closed every few packets.\n", "\(tiny)")
            // The total limit's sentence is its own (it spoke of one file's rotation: a trial).
            let total = try s.tv("settings", "set", "captures.maxBytes", "512KB")
            #expect(total.status == 2 && total.err == "tv: captures.maxBytes takes 1MB or more (or off): all captures within '512KB' would hold only a few packets, each file deleted as soon as the next began.\n", "\(total)")
            let kept = try s.tv("settings", "set", "captures.maxAge", "5s")
            #expect(kept.status == 2 && kept.err == "tv: captures.maxAge takes 10s or more (or off): each capture file would be deleted '5s' after it was closed, before anyone could read it.\n", "\(kept)")
            let short = try s.tv("settings", "set", "capture.rotateAge", "5s")
            #expect(short.status == 2 && short.err == "tv: capture.rotateAge takes 10s or more (or off): a capture file closed every '5s' would hold only a few packets.\n", "\(short)")
            #expect(try s.tv("settings", "set", "capture.rotateAge", "10s").status == 0)
            let size = try s.tv("settings", "set", "captures.maxBytes", "lots")
            #expect(size.status == 2 && size.err == "tv: captures.maxBytes takes a size of 1MB or more with its unit like 64MB or 2GB (1 KB = 1024 bytes), or off, not 'lots'.\n", "\(size)")
            let age = try s.tv("settings", "set", "capture.rotateAge", "soon")
            #expect(age.status == 2 && age.err == "tv: capture.rotateAge takes an age of 10s or more like 90s, 15m, 1h, 30d or 2w, or off, not 'soon'.\n", "\(age)")
            let rotate = try s.tv("settings", "set", "capture.rotateBytes", "128MB")
            #expect(rotate.out == "Saved capture.rotateBytes = 128MB (was 64MB).\nIt applies when the next session starts: the packet captures of `tv exec` and `tv run --mode tun`, and the decrypted capture of any session (capture.decrypted).\n")
            // A size too large to count is refused as that, not as text that is not a size.
            let huge = try s.tv("settings", "set", "captures.maxBytes", "8589934592GB")
            #expect(huge.status == 2 && huge.err == "tv: captures.maxBytes takes at most 8388607TB, and '8589934592GB' is more bytes than that; set a smaller size, or off for no limit.\n", "\(huge)")
            // The file being recorded is never deleted: a rotation size above the limit on all
            // captures would outgrow it (a trial saved 5GB under the 2GB default), either way round.
            let over = try s.tv("settings", "set", "capture.rotateBytes", "5GB")
            #expect(over.status == 2 && over.err == "tv: capture.rotateBytes takes at most captures.maxBytes (2GB): a capture file of 5GB would outgrow the limit on all captures before it was closed, and the file being recorded is never deleted; set a smaller size, or raise captures.maxBytes first.\n", "\(over)")
            let under = try s.tv("settings", "set", "captures.maxBytes", "100MB")
            #expect(under.status == 2 && under.err == "tv: captures.maxBytes takes at least capture.rotateBytes (128MB): the file being recorded, never deleted, would outgrow 100MB before it was closed; lower capture.rotateBytes first (`tv settings set capture.rotateBytes 100MB`), or set a larger limit.\n", "\(under)")
            #expect(try s.tv("settings", "get", "captures.maxBytes").out == "2GB\n")
            #expect(try s.tv("settings", "set", "capture.rotateBytes", "2GB").status == 0, "equal is allowed")
            // No size rotation under a size limit: the file being recorded would outgrow it.
            let unbounded = try s.tv("settings", "set", "capture.rotateBytes", "off")
            #expect(unbounded.status == 2 && unbounded.err == "tv: capture.rotateBytes off lets the file being recorded grow past captures.maxBytes (2GB) before it closes, and that file is never deleted; set a size of at most 2GB, or turn captures.maxBytes off first.\n", "\(unbounded)")
            #expect(try s.tv("settings", "set", "captures.maxBytes", "off", "--yes").status == 0)
            #expect(try s.tv("settings", "set", "capture.rotateBytes", "off").status == 0, "no limit: nothing to outgrow")
            let limited = try s.tv("settings", "set", "captures.maxBytes", "100MB")
            #expect(limited.status == 2 && limited.err == "tv: captures.maxBytes 100MB needs capture.rotateBytes set (it is off): the file being recorded, never deleted, would grow past 100MB before it closed; set capture.rotateBytes to 100MB or less first.\n", "\(limited)")
            #expect(try s.tv("settings", "set", "capture.rotateBytes", "64MB").status == 0)
            #expect(try s.tv("settings", "set", "captures.maxBytes", "100MB").status == 0)
            #expect(try s.tv("settings", "set", "capture.rotateBytes", "128MB").status == 2)
            #expect(try s.tv("settings", "get", "capture.snaplen").out == "96\n")
        }
    }

    @Test("empty list, room against the default limits, neither limit, unreadable limits, no session to rotate, no such capture, no such flow")
    func emptyAndFailures() throws {
        try withSandbox { s in
            #expect(try s.tv("settings", "set", "capture.enabled", "on").status == 0)
            let list = try s.tv("captures")
            #expect(list.out == "There are no capture files yet: tv writes one while `tv exec` or `tv run --mode tun` runs with capture.enabled on (it is on).\n", "\(list)")
            #expect(try s.tv("captures", "--json").out == "[]\n")
            let room = try s.tv("captures", "room")
            #expect(room.out == "2.0 GiB left: the captures use 0 B of the 2.0 GiB limit (captures.maxBytes).\nNo capture has closed yet, so none has an expiry date: a capture is kept 30 days from when it closes, and the one being recorded closes when the next one opens.\n", "\(room)")
            #expect(try s.tv("settings", "set", "captures.maxBytes", "off").status == 0)
            #expect(try s.tv("settings", "set", "captures.maxAge", "off").status == 0)
            #expect(try s.tv("captures", "room").out == "Neither limit is set (captures.maxBytes and captures.maxAge are off): nothing removes a capture unless you delete it. The captures use 0 B.\n")
            // A value saved by hand that is not a limit: the comparison is hidden, and said.
            let path = s.dataDir + "/settings.json"
            var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
            object["captures.maxAge"] = "a while"
            try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
            #expect(try s.tv("captures", "room").out == "tv cannot read captures.maxAge ('a while'), so the room left is not shown; set it again with `tv settings set NAME VALUE` (a size like 2GB, an age like 30d, or off).\n")
            let rotate = try s.tv("captures", "rotate")
            #expect(rotate.status == 3 && rotate.err == "tv: No tv session is running for \(s.dataDir), so no capture file is being written; there is nothing to rotate.\n", "\(rotate)")
            let delete = try s.tv("captures", "delete", "4", "--yes")
            #expect(delete.status == 1 && delete.err == "tv: There is no capture 4; `tv captures` lists the ones that exist.\n", "\(delete)")
            let notNumber = try s.tv("captures", "delete", "x")
            #expect(notNumber.status == 2 && notNumber.err == "tv: 'x' is not a capture number or a decrypted capture's name (decrypted-….pcapng); `tv captures` lists them.\n")
            // A decrypted capture is named by its file name; one that is not there says so.
            let noDecrypted = try s.tv("captures", "delete", "decrypted-20261206-171931.pcapng", "--yes")
            #expect(noDecrypted.status == 1 && noDecrypted.err == "tv: There is no decrypted capture named decrypted-20261206-171931.pcapng; `tv captures` lists the ones that exist.\n", "\(noDecrypted)")
            let packets = try s.tv("packets", "9")
            #expect(packets.status == 1 && packets.err == "tv: There is no flow 9 in this data folder; `tv flows` lists the ones there are.\n", "\(packets)")
            // One packet of a flow that does not exist: the same sentence, not "has no captured packets".
            let packet = try s.tv("packet", "9", "1")
            #expect(packet.status == 1 && packet.err == "tv: There is no flow 9 in this data folder; `tv flows` lists the ones there are.\n", "\(packet)")
            let requests = try s.tv("requests", "--flow", "9")
            #expect(requests.status == 1 && requests.err == "tv: There is no flow 9 in this data folder; `tv flows` lists the ones there are.\n", "\(requests)")
        }
    }
}
