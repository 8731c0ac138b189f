import Foundation
@testable import FlowStore
import FlowTerms

/// A fresh empty folder under the system's temporary folder; the caller removes it.
func makeTemporaryFolder() -> String {
    var template = Array((NSTemporaryDirectory() + "/flowstore-test-XXXXXX").utf8CString)
    let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    precondition(made != nil, "mkdtemp failed")
    return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

func removeFolder(_ path: String) {
    try? FileManager.default.removeItem(atPath: path)
}

/// A flow with the five-tuple filled in; `start` is µs since the epoch.
func sampleFlow(start: Int64, host: String? = "example.com", server: String = "93.184.216.34",
                client: String = "127.0.0.1", status: FlowStatus = .encrypted) -> FlowRecord {
    FlowRecord(startTime: start, clientAddress: client, clientPort: 50_000, serverAddress: server,
               serverPort: 443, host: host, hostOrigin: host == nil ? .none : .sni, status: status)
}

/// Opens a store in a new folder, runs `body`, closes and removes the folder.
func withStore(_ body: (FlowStore, String) throws -> Void) throws {
    let folder = makeTemporaryFolder()
    defer { removeFolder(folder) }
    let store = try FlowStore(path: folder + "/tunnelvision.sqlite3")
    defer { store.close() }
    try body(store, folder)
}

/// Writes `flows` through a writer (ids assigned in order) and returns them with their ids.
func writeFlows(_ flows: [FlowRecord], to store: FlowStore) throws -> [FlowRecord] {
    let writer = try store.makeWriter()
    defer { writer.close() }
    let opened = flows.map { writer.open($0) }
    writer.flush()
    return opened
}

/// Writes `bytes` to `path`, replacing it.
func writeFile(_ path: String, _ bytes: [UInt8]) {
    _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
}
