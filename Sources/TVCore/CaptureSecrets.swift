import Capture
import FlowTerms
import Synchronization

/// The client legs' TLS secrets, handed to the capture file being written as Decryption Secrets
/// Blocks (pcapng §4.7), so the capture of a TUN session decrypts in Wireshark and tshark with no
/// key log beside it. The proxy's TLS contexts are made before the session's capture writer, so
/// the writer is attached once it exists; lines before that (or in a session without a capture)
/// go nowhere. Never blocks: one short lock to find the writer, whose queue drops and counts when
/// full (`capture.secretsDropped`).
final class CaptureSecrets: TLSSecretsRecorder {
    private let writer = Mutex<CaptureWriter?>(nil)

    /// Secrets from now on go to `capture` (nil: nowhere).
    func attach(_ capture: CaptureWriter?) {
        writer.withLock { $0 = capture }
    }

    func record(keyLogLine line: UnsafeRawBufferPointer) {
        guard let capture = writer.withLock({ $0 }) else { return }
        var bytes = [UInt8](line)
        bytes.append(0x0a)
        capture.appendSecrets(bytes)
    }
}
