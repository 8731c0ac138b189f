import Foundation
@testable import Recording

/// A fresh empty folder under the system's temporary folder; the caller removes it.
func makeTemporaryFolder() -> String {
    var template = Array((NSTemporaryDirectory() + "/recording-test-XXXXXX").utf8CString)
    let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    precondition(made != nil, "mkdtemp failed")
    return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// `count` bytes of `byte`.
func bytes(_ count: Int, _ byte: UInt8 = 0x61) -> [UInt8] { [UInt8](repeating: byte, count: count) }

/// A data folder for one test: the database path and the content folder, removed by `clean()`.
struct TestHome {
    let folder = makeTemporaryFolder()
    var databasePath: String { folder + "/tunnelvision.sqlite3" }
    var contentPath: String { folder + "/content" }

    func configuration(expiry: ContentExpiry = .oneDay) -> ContentWriterConfiguration {
        var configuration = ContentWriterConfiguration(databasePath: databasePath, directory: contentPath, expiry: expiry)
        configuration.sweepInterval = 3_600
        return configuration
    }

    func store() throws -> ContentStore { try ContentStore(databasePath: databasePath, directory: contentPath) }

    /// Segment file names in the content folder, sorted.
    func files() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: contentPath)) ?? []).sorted()
    }

    func clean() { try? FileManager.default.removeItem(atPath: folder) }
}

/// 2025-11-30 03:05:00 UTC in µs.
let testEpoch: Int64 = 1_764_471_900_000_000
