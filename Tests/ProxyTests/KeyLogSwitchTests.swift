import Foundation
@testable import Proxy
import Synchronization
import Testing
import FlowTerms

/// `KeyLogSwitch`: the proxy's contexts make key log lines for the recorders only once the
/// switch is on (libssl formats a line only for a context with a key log callback).
@Suite("Key log lines only while wanted", .serialized)
struct KeyLogSwitchTests {
    /// The key log lines one recorder was given, by label.
    final class LineCollector: TLSSecretsRecorder {
        private let lines = Mutex<[String]>([])
        func record(keyLogLine line: UnsafeRawBufferPointer) {
            let text = String(decoding: line, as: UTF8.self)
            lines.withLock { $0.append(text) }
        }
        /// Each line's label with how many lines had it.
        var labels: [String: Int] {
            lines.withLock { $0.reduce(into: [:]) { $0[String($1.prefix { $0 != " " }), default: 0] += 1 } }
        }
    }

    /// The five secrets of one TLS 1.3 handshake (RFC 8446 §7.1, NSS key log labels).
    static func tls13(connections n: Int) -> [String: Int] {
        ["CLIENT_HANDSHAKE_TRAFFIC_SECRET": n, "SERVER_HANDSHAKE_TRAFFIC_SECRET": n,
         "CLIENT_TRAFFIC_SECRET_0": n, "SERVER_TRAFFIC_SECRET_0": n, "EXPORTER_SECRET": n]
    }

    @Test("actions given before the switch turns on run once at turnOn; given after, at once; a second turnOn runs none")
    func switchRunsEachActionOnce() {
        let runs = Mutex<[String]>([])
        let keyLog = KeyLogSwitch()
        #expect(!keyLog.isOn)
        keyLog.whenOn { runs.withLock { $0.append("a") } }
        keyLog.whenOn { runs.withLock { $0.append("b") } }
        #expect(runs.withLock { $0 } == [])
        keyLog.turnOn()
        #expect(keyLog.isOn)
        #expect(runs.withLock { $0 } == ["a", "b"])
        keyLog.whenOn { runs.withLock { $0.append("c") } }
        keyLog.turnOn()
        #expect(runs.withLock { $0 } == ["a", "b", "c"])
        let onFromTheStart = KeyLogSwitch(on: true)
        onFromTheStart.whenOn { runs.withLock { $0.append("d") } }
        #expect(runs.withLock { $0 } == ["a", "b", "c", "d"])
    }

    /// One inspected GET through `harness` to `nginx`.
    func get(_ harness: Harness, _ nginx: TestNginx) {
        let r = Shell.run(["curl", "-sS", "--http1.1", "-x", harness.proxyURL, "--cacert", harness.pki.tvRoot,
                           "https://localhost:\(nginx.tlsPort)/index.html"], timeout: 20)
        #expect(r.status == 0, "\(r.err)")
    }

    @Test("with the switch off, neither leg's recorder gets a line and no context has a key log callback; once on, both legs' five TLS 1.3 secrets")
    func linesOnlyOnceWanted() throws {
        let nginx = try TestNginx()
        defer { nginx.stop() }
        let client = LineCollector(), upstream = LineCollector()
        let keyLog = KeyLogSwitch()
        let harness = try Harness {
            $0.clientLegSecrets = client
            $0.upstreamLegSecrets = upstream
            $0.keyLogSwitch = keyLog
        }
        get(harness, nginx)
        _ = harness.sink.waitForClosed(1)
        #expect(harness.server.keyLogArmed == (server: false, client: false))
        #expect(client.labels == [:])
        #expect(upstream.labels == [:])

        keyLog.turnOn()
        #expect(harness.server.keyLogArmed == (server: true, client: true))
        get(harness, nginx)
        _ = harness.sink.waitForClosed(2)
        #expect(client.labels == Self.tls13(connections: 1))
        #expect(upstream.labels == Self.tls13(connections: 1))
        #expect(harness.waitIdle())
    }

    @Test("without a switch the recorders get lines from the first handshake; a key log file arms its contexts whatever the switch says")
    func noSwitchAndKeyLogFile() throws {
        let nginx = try TestNginx()
        defer { nginx.stop() }
        let client = LineCollector(), upstream = LineCollector()
        let harness = try Harness {
            $0.clientLegSecrets = client
            $0.upstreamLegSecrets = upstream
        }
        get(harness, nginx)
        _ = harness.sink.waitForClosed(1)
        #expect(harness.server.keyLogArmed == (server: true, client: true))
        #expect(client.labels == Self.tls13(connections: 1))
        #expect(upstream.labels == Self.tls13(connections: 1))
        #expect(harness.waitIdle())

        let path = NSTemporaryDirectory() + "tv-keylog-switch-\(UUID().uuidString.prefix(6)).txt"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fileOnly = LineCollector()
        let withFile = try Harness {
            $0.keylogPath = path
            $0.clientLegSecrets = fileOnly
            $0.keyLogSwitch = KeyLogSwitch()
        }
        get(withFile, nginx)
        _ = withFile.sink.waitForClosed(1)
        #expect(withFile.server.keyLogArmed == (server: true, client: true))
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 10, "five secrets for each leg: \(lines)")
        // The file's callback hands the lines to the recorder too (the sink is attached).
        #expect(fileOnly.labels == Self.tls13(connections: 1))
        #expect(withFile.waitIdle())
    }
}
