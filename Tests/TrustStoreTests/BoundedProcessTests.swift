import Foundation
import Testing
@testable import TrustStore
#if canImport(Glibc)
import Glibc
#endif

/// `BoundedProcess`, which runs the trust tools (certutil, keytool, update-ca-certificates, the
/// runtimes `tv ca trust --doctor` asks): every wait ends by the timeout, whatever the tool leaves.
@Suite("BoundedProcess: trust tools run to their end, or to the timeout")
struct BoundedProcessTests {
    let environment = ProcessInfo.processInfo.environment

    @Test("a tool that leaves a background helper holding its output returns when the tool exits, with what it wrote")
    func backgroundHelperDoesNotHoldTheCall() throws {
        let result = try BoundedProcess.run("sh", ["-c", "sleep 60 & echo $!; echo said >&2"], environment: environment, timeout: 20)
        let helper = Int32(String(decoding: result.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        defer { if let helper { kill(helper, SIGKILL) } }
        #expect(result.status == 0)
        #expect(helper != nil, "\(result)")
        #expect(result.stderr == Array("said\n".utf8))
    }

    @Test("exit codes, 128 + the signal, a megabyte of output read whole")
    func statusesAndOutput() throws {
        #expect(try BoundedProcess.run("sh", ["-c", "exit 3"], environment: environment).status == 3)
        #expect(try BoundedProcess.run("sh", ["-c", "kill -TERM $$"], environment: environment).status == 128 + SIGTERM)
        let big = try BoundedProcess.run("head", ["-c", "1000000", "/dev/zero"], environment: environment)
        #expect(big.status == 0 && big.stdout.count == 1_000_000 && big.stdout.allSatisfy { $0 == 0 })
        #expect(try BoundedProcess.run("sh", ["-c", "echo two lines >&2; echo more >&2; exit 1"], environment: environment).firstErrorLine == "two lines")
    }

    @Test("standard input: the bytes given, then its end (64 KiB at most); none given reads as empty")
    func standardInput() throws {
        let echoed = try BoundedProcess.run("cat", [], environment: environment, input: Array("-/etc/ssl/certs/a.pem\n".utf8))
        #expect(echoed.status == 0 && echoed.stdout == Array("-/etc/ssl/certs/a.pem\n".utf8))
        let full = [UInt8](repeating: 0x61, count: BoundedProcess.maxInput)
        #expect(try BoundedProcess.run("wc", ["-c"], environment: environment, input: full).stdout == Array("65536\n".utf8))
        #expect(try BoundedProcess.run("wc", ["-c"], environment: environment).stdout == Array("0\n".utf8))
    }

    @Test("a tool past its timeout is killed and said; a missing one is said")
    func failures() throws {
        #expect(throws: BoundedProcess.Failure.timedOut(program: "sleep", seconds: 0.3)) {
            try BoundedProcess.run("sleep", ["30"], environment: environment, timeout: 0.3)
        }
        #expect(throws: BoundedProcess.Failure.notFound(program: "no-such-tool-tv")) {
            try BoundedProcess.run("no-such-tool-tv", [], environment: environment)
        }
        #expect(BoundedProcess.Failure.timedOut(program: "certutil", seconds: 30).reason == "certutil did not finish within 30 seconds and was stopped")
    }
}
