import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Content-coded bodies made at test time by the real tools Debian ships (`gzip`, `brotli`,
/// `zstd`; Scripts/packages.sh TEST_PACKAGES), including decompression bombs (issue 12 §1):
/// a few bytes that decode to many MiB of zeros.
enum RealTools {
    /// The command that encodes standard input to standard output for each coding.
    static let commands = ["gzip": "gzip -9 -n -c", "br": "brotli -q 11 -c", "zstd": "zstd -19 -q -c"]

    /// `bytes` encoded by `coding`'s tool, or nil when the tool failed.
    static func encode(_ bytes: [UInt8], with coding: String) -> [UInt8]? {
        let input = NSTemporaryDirectory() + "/tv-realtools-\(getpid())-\(UUID().uuidString).in"
        guard FileManager.default.createFile(atPath: input, contents: Data(bytes)), let command = commands[coding] else { return nil }
        defer { try? FileManager.default.removeItem(atPath: input) }
        return shell("\(command) < '\(input)'")
    }

    /// `count` zero bytes encoded by `coding`'s tool: a body of a few bytes (brotli, zstd) or
    /// about `count` / 1,000 (gzip's best) that decodes to `count` bytes.
    static func bomb(_ coding: String, zeros count: Int) -> [UInt8]? {
        guard let command = commands[coding] else { return nil }
        return shell("head -c \(count) /dev/zero | \(command)")
    }

    /// Standard output of `bash -c script` (pipefail) when it exits 0.
    private static func shell(_ script: String) -> [UInt8]? {
        let output = NSTemporaryDirectory() + "/tv-realtools-\(getpid())-\(UUID().uuidString).out"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let fd = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer { close(fd) }
        guard fd >= 0, let child = try? Child("/bin/bash", ["-c", "set -o pipefail; " + script],
                                              environment: ProcessInfo.processInfo.environment, stdout: fd) else { return nil }
        if !child.wait(seconds: 60) { child.stop() }
        guard child.status == 0, let data = FileManager.default.contents(atPath: output), !data.isEmpty else { return nil }
        return Array(data)
    }
}
