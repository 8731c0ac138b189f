import FlowTerms
import Testing
@testable import FlowStore

/// The server chains of issue 23's evidence: `flows.chain` lists fingerprints, the
/// `certificates` table holds each DER once (`INSERT OR IGNORE` by the flow writer).
@Suite struct FlowCertificatesTests {
    @Test("a chain's DER is stored once, also when the event that carried it was collapsed into a later one; flows read back their fingerprints in order")
    func chainsAreStoredOnceAndReadBack() throws {
        try withStore { store, _ in
            let writer = try store.makeWriter()
            defer { writer.close() }
            let leaf = String(repeating: "a", count: 64), ca = String(repeating: "b", count: 64)
            var first = writer.open(sampleFlow(start: 10))
            first.certificateChain = [leaf, ca]
            first.newCertificates = [SeenCertificate(sha256: leaf, der: [0x30, 0x01]), SeenCertificate(sha256: ca, der: [0x30, 0x02])]
            #expect(writer.enqueue(.updated(first)))
            first.newCertificates = []
            first.status = .inspected
            #expect(writer.enqueue(.closed(first)))
            var second = writer.open(sampleFlow(start: 20))
            second.certificateChain = [leaf, ca]
            // Offered again (a loop whose seen-set started over): ignored, the first DER stays.
            second.newCertificates = [SeenCertificate(sha256: leaf, der: [0xff])]
            #expect(writer.enqueue(.closed(second)))
            let plain = writer.open(sampleFlow(start: 30))
            writer.flush()

            #expect(try store.flow(id: first.id)?.certificateChain == [leaf, ca])
            #expect(try store.flow(id: second.id)?.certificateChain == [leaf, ca])
            #expect(try store.flow(id: plain.id)?.certificateChain == [])
            #expect(try store.certificates([leaf, ca, String(repeating: "c", count: 64)]) == [leaf: [0x30, 0x01], ca: [0x30, 0x02]])
            #expect(try store.certificates([]) == [:])
        }
    }
}
