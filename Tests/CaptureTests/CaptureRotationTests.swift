import Capture
import Testing

@Suite("Rotation and file names")
struct CaptureRotationTests {
    @Test("Due by size at the limit, by age at the limit, never without packets or limits")
    func due() {
        let both = CaptureRotation(maximumBytes: 1_000, maximumAgeMicros: 60_000_000)
        #expect(!both.isDue(bytes: 999, packets: 1, startedMicros: 0, nowMicros: 59_999_999))
        #expect(both.isDue(bytes: 1_000, packets: 1, startedMicros: 0, nowMicros: 0))
        #expect(both.isDue(bytes: 10, packets: 1, startedMicros: 0, nowMicros: 60_000_000))
        #expect(!both.isDue(bytes: 5_000, packets: 0, startedMicros: 0, nowMicros: 90_000_000))
        #expect(!CaptureRotation().isDue(bytes: Int64.max, packets: 9, startedMicros: 0, nowMicros: Int64.max))
        #expect(both.ageDeadline(startedMicros: 5) == 60_000_005)
        #expect(CaptureRotation(maximumBytes: 1).ageDeadline(startedMicros: 5) == nil)
    }

    @Test("capture-NNNNNN.pcapng: six digits from 1, more past 999999; other names are not captures")
    func names() {
        #expect(CaptureFolder.fileName(1) == "capture-000001.pcapng")
        #expect(CaptureFolder.fileName(1_234_567) == "capture-1234567.pcapng")
        #expect(CaptureFolder.sequence(ofName: "capture-000042.pcapng") == 42)
        #expect(CaptureFolder.sequence(ofName: "capture-1234567.pcapng") == 1_234_567)
        #expect(CaptureFolder.sequence(ofName: "capture-42.pcapng") == nil)
        #expect(CaptureFolder.sequence(ofName: "capture-000000.pcapng") == nil)
        #expect(CaptureFolder.sequence(ofName: "capture-00004x.pcapng") == nil)
        #expect(CaptureFolder.sequence(ofName: "capture-000042.pcap") == nil)
    }
}
