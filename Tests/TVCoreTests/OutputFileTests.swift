import Foundation
import Testing
@testable import TVCore

/// `-o FILE` and `-o -`: which is which, and how standard output is written.
@Suite struct OutputFileTests {
    @Test func aDashIsStandardOutputAndAnythingElseAFile() {
        #expect(OutputFile(argument: "-") == .standardOutput)
        #expect(OutputFile(argument: "./-") == .path("./-"))
        #expect(OutputFile(argument: "out.har") == .path("out.har"))
        #expect(OutputFile(argument: "-").name == "standard output")
        #expect(OutputFile(argument: "-").path == nil)
        #expect(OutputFile(argument: "a b").name == "a b")
    }

    @Test func aPipeGetsTheBytesInPiecesOf64KiB() throws {
        let output = RecordedOutput()
        try OutputFile.standardOutput.write(mode: 0o600, output: output) { write in
            write([UInt8](repeating: 0x61, count: 40_000))
            write([UInt8](repeating: 0x62, count: 40_000))
            write([0x00, 0x1B])
        }
        #expect(output.pieces == [.bytes([UInt8](repeating: 0x61, count: 40_000) + [UInt8](repeating: 0x62, count: 40_000)), .bytes([0x00, 0x1B])])
    }

    @Test func aTerminalGetsTextNeverCutInsideACharacter() throws {
        let output = RecordedOutput(terminal: true)
        let first = [UInt8](repeating: 0x61, count: 65_535) + Array("é".utf8)   // 65,537 bytes, "é" across 64 KiB
        try OutputFile.standardOutput.write(mode: 0o600, output: output) { write in
            write(first)
            write(Array("z\n".utf8))
        }
        #expect(output.pieces == [.out(String(repeating: "a", count: 65_535)), .out("éz\n")])
    }

    @Test func aFileIsWrittenWholeWithItsMode() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tv-output-\(getpid())-\(UUID().uuidString)").path
        defer { unlink(path) }
        let output = RecordedOutput()
        try OutputFile.path(path).write(mode: 0o600, output: output) { write in write(Array("one\n".utf8)) }
        #expect(FileManager.default.contents(atPath: path) == Data("one\n".utf8))
        #expect((try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) == 0o600)
        #expect(output.pieces.isEmpty)
    }
}
