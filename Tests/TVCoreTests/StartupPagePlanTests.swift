import CTVShims
import Glibc
import Testing
@testable import TVCore

/// Which pages a resting `tv run` stops mapping (issue 21): read-only, unrelocated segments only.
@Suite struct StartupPagePlanTests {
    typealias Segment = StartupPagePlan.Segment

    /// The program's layout as lld links the release tv (headers and `.eh_frame`; `.text`; RELRO;
    /// data), at load base 0x10000, and one library at 0x5000000.
    let programSegments: [Segment] = [
        Segment(start: 0x10000, end: 0x10000 + 0x438f24, writable: false, object: 0),
        Segment(start: 0x10000 + 0x439f30, end: 0x10000 + 0x1690e40, writable: false, object: 0),
        Segment(start: 0x10000 + 0x1691e40, end: 0x10000 + 0x173f000, writable: true, object: 0),
        Segment(start: 0x10000 + 0x1691e40, end: 0x10000 + 0x173f000, writable: false, relro: true, object: 0),
        Segment(start: 0x10000 + 0x173f338, end: 0x10000 + 0x3c62000, writable: true, object: 0),
    ]
    let librarySegments: [Segment] = [
        Segment(start: 0x5000000, end: 0x5000800, writable: false, object: 1),
        Segment(start: 0x5001000, end: 0x5002400, writable: false, object: 1),
        Segment(start: 0x5002400, end: 0x5003100, writable: true, relro: false, object: 1),
    ]

    @Test("the program's read-only segments, widened to whole pages and merged; data, RELRO and libraries stay")
    func program() {
        #expect(StartupPagePlan.ranges(programSegments + librarySegments, pageSize: 0x1000, scope: .program)
            == [0x10000..<0x16a1000])
    }

    @Test("every object: a library's read-only pages too, less the page its data segment shares")
    func everyObject() {
        #expect(StartupPagePlan.ranges(programSegments + librarySegments, pageSize: 0x1000, scope: .everyObject)
            == [0x10000..<0x16a1000, 0x5000000..<0x5002000])
    }

    @Test("a read-only page that also holds RELRO bytes is kept")
    func relroShares() {
        let segments = [Segment(start: 0x1000, end: 0x3800, writable: false, object: 0),
                        Segment(start: 0x3800, end: 0x5000, writable: false, relro: true, object: 0),
                        Segment(start: 0x3800, end: 0x6000, writable: true, object: 0)]
        #expect(StartupPagePlan.ranges(segments, pageSize: 0x1000, scope: .program) == [0x1000..<0x3000])
    }

    @Test("an object with text relocations keeps everything; empty segments give nothing")
    func textRelocations() {
        let segments = [Segment(start: 0x1000, end: 0x5000, writable: false, object: 1, textRelocated: true),
                        Segment(start: 0x8000, end: 0x8000, writable: false, object: 1)]
        #expect(StartupPagePlan.ranges(segments, pageSize: 0x1000, scope: .everyObject) == [])
    }

    @Test("this test program: the segments dl_iterate_phdr reports hold this function's code, and after the release the code runs again")
    func driver() throws {
        let segments = StartupPages.segments()
        let here = UInt(bitPattern: unsafeBitCast(tv_loaded_segments as @convention(c) (UnsafeMutablePointer<tv_segment>?, Int32) -> Int32, to: Int.self))
        let text = try #require(segments.first { $0.object == 0 && !$0.writable && !$0.relro && $0.start <= here && here < $0.end })
        let planned = StartupPagePlan.ranges(segments, pageSize: UInt(sysconf(Int32(_SC_PAGESIZE))), scope: .program)
        #expect(planned.contains { $0.contains(text.start) })
        let release = StartupPages.release(scope: .program)
        #expect(release == StartupPages.Release(bytes: planned.reduce(0) { $0 + Int($1.upperBound - $1.lowerBound) }, refused: 0))
        #expect(StartupPages.segments() == segments)
    }
}
