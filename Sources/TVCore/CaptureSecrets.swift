import Capture
import FlowTerms
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The client legs' TLS secrets, handed to the capture file being written as Decryption Secrets
/// Blocks (pcapng §4.7), so the capture of a TUN session decrypts in Wireshark and tshark with no
/// key log beside it. The proxy's TLS contexts are made before the session's capture writer, so
/// the writer is attached once it exists; lines before that (or in a session without a capture)
/// go nowhere. Never blocks: one short lock to find the writer, whose queue drops and counts when
/// full (`capture.secretsDropped`).
final class CaptureSecrets: TLSSecretsRecorder {
    private let writer = Mutex<CaptureWriter?>(nil)
    /// Test seam (`TV_TEST_CLIENT_SECRET_DELAY_MS`, 0 otherwise): the loop that logs a
    /// client-Finished secret (`TLSClientRandom.clientFinishedLabels`) sleeps this long first, so
    /// the TUN engine's batch with that Finished is written before the secret is queued (what a
    /// busy machine does by chance); the capture writer must still put the secret first
    /// (`CaptureHoldPolicy`). Blocks the loop: never set outside tests.
    let clientSecretDelayMillis: Int

    /// Turned on when a capture is first attached: the TLS contexts make key log lines from then on.
    let keyLogSwitch: KeyLogSwitch

    /// - Parameters:
    ///   - environment: the session's (`TV_TEST_CLIENT_SECRET_DELAY_MS`). Read only in debug
    ///     builds (the tests' `tv`); a release build's loops never sleep here.
    ///   - keyLogSwitch: turned on by the first `attach` of a capture (the session's TLS
    ///     contexts make no lines before).
    init(environment: [String: String] = [:], keyLogSwitch: KeyLogSwitch = KeyLogSwitch()) {
        self.keyLogSwitch = keyLogSwitch
        #if DEBUG
        clientSecretDelayMillis = environment["TV_TEST_CLIENT_SECRET_DELAY_MS"].flatMap(Int.init).map { min(max($0, 0), 5_000) } ?? 0
        #else
        clientSecretDelayMillis = 0
        #endif
    }

    /// Secrets from now on go to `capture` (nil: nowhere).
    func attach(_ capture: CaptureWriter?) {
        writer.withLock { $0 = capture }
        if capture != nil { keyLogSwitch.turnOn() }
    }

    func record(keyLogLine line: UnsafeRawBufferPointer) {
        guard let capture = writer.withLock({ $0 }) else { return }
        if clientSecretDelayMillis > 0, TLSClientRandom.clientFinishedLabels.contains(where: { line.starts(with: $0.utf8) }) {
            usleep(useconds_t(clientSecretDelayMillis * 1000))
        }
        var bytes = [UInt8](line)
        bytes.append(0x0a)
        capture.appendSecrets(bytes)
    }

    /// A passed-through client's packets are written as they come, not held for a secret that
    /// never comes (they were held up to a second, and the file lost its time order: a trial).
    func noSecretWillCome(clientRandom: [UInt8]) {
        guard let capture = writer.withLock({ $0 }),
              let random = clientRandom.withUnsafeBytes({ TLSClientRandom($0) }) else { return }
        capture.noSecretWillCome(random)
    }
}
