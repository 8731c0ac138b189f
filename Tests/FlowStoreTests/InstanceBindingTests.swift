import Foundation
import Glibc
import Testing
@testable import FlowStore
import TVHome

/// The shared store's instance id bound to the machine and the database file: a copied,
/// cloned or restored data folder takes its own id instead of overwriting the original's rows.
@Suite("Instance binding: a copied data folder takes its own shared-store id")
struct InstanceBindingTests {
    let machineA = "machine-id:0123456789abcdef0123456789abcdef"
    let machineB = "machine-id:fedcba9876543210fedcba9876543210"

    @Test("the decision: unbound is recorded, equal is kept, another machine or database file renews, unknown facts never differ")
    func decisions() {
        let bound = InstanceBinding(machine: machineA, databaseInode: 42)
        #expect(InstanceBinding.decide(stored: nil, current: bound) == .record(bound))
        #expect(InstanceBinding.decide(stored: bound, current: bound) == .keep)
        #expect(InstanceBinding.decide(stored: bound, current: InstanceBinding(machine: machineB, databaseInode: 42))
                == .renew(InstanceBinding(machine: machineB, databaseInode: 42), .otherMachine))
        #expect(InstanceBinding.decide(stored: bound, current: InstanceBinding(machine: machineA, databaseInode: 43))
                == .renew(InstanceBinding(machine: machineA, databaseInode: 43), .otherDatabaseFile))
        // Both differ: the machine is named.
        #expect(InstanceBinding.decide(stored: bound, current: InstanceBinding(machine: machineB, databaseInode: 7))
                == .renew(InstanceBinding(machine: machineB, databaseInode: 7), .otherMachine))
        // Unknown now: kept, the stored fact kept too.
        #expect(InstanceBinding.decide(stored: bound, current: InstanceBinding(machine: nil, databaseInode: nil)) == .keep)
        // Unknown before, known now: recorded.
        #expect(InstanceBinding.decide(stored: InstanceBinding(machine: machineA, databaseInode: nil), current: bound) == .record(bound))
        // A machine id against a host name cannot be compared: the new kind is recorded.
        #expect(InstanceBinding.decide(stored: InstanceBinding(machine: "hostname:box", databaseInode: 42), current: bound) == .record(bound))
        #expect(InstanceBinding.decide(stored: InstanceBinding(machine: "hostname:box", databaseInode: 42),
                                       current: InstanceBinding(machine: "hostname:other", databaseInode: 42))
                == .renew(InstanceBinding(machine: "hostname:other", databaseInode: 42), .otherMachine))
    }

    @Test("the machine fact: /etc/machine-id's 32 hex digits, else the host name, else unknown")
    func machineFact() {
        #expect(InstanceBinding.machine(machineIDFile: "0123456789ABCDEF0123456789abcdef\n", hostName: "box") == machineA)
        #expect(InstanceBinding.machine(machineIDFile: "", hostName: "box") == "hostname:box")
        #expect(InstanceBinding.machine(machineIDFile: "uninitialized\n", hostName: "box") == "hostname:box")
        #expect(InstanceBinding.machine(machineIDFile: nil, hostName: "box") == "hostname:box")
        #expect(InstanceBinding.machine(machineIDFile: nil, hostName: "unknown") == nil)
    }

    @Test("the file's text round-trips; unknown lines are skipped, a file naming neither fact is none")
    func fileText() {
        let bound = InstanceBinding(machine: machineA, databaseInode: 42)
        #expect(bound.fileText == "machine=\(machineA)\ndatabase-inode=42\n")
        #expect(InstanceBinding(fileText: bound.fileText) == bound)
        #expect(InstanceBinding(fileText: "later=1\ndatabase-inode=9\n") == InstanceBinding(machine: nil, databaseInode: 9))
        #expect(InstanceBinding(fileText: "database-inode=x\nmachine=\n") == nil)
        #expect(InstanceBinding(fileText: "") == nil)
    }

    @Test("the sentence names both ids and the reason")
    func sentence() {
        #expect(InstanceBinding.renewalSentence(old: "aaa", new: "bbb", .otherDatabaseFile)
                == "This data folder's shared-store instance id aaa was made for another database file (this data folder is a copy or a restored backup, or its database was made anew); so that the two never overwrite each other's rows in the shared store, it now writes as instance bbb. Its earlier shared rows stay under aaa.")
    }

    /// A data folder with a database file (an empty file stands for it: only its inode counts).
    func folder(_ path: String) throws -> TVHome {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let home = TVHome(path: path)
        #expect(FileManager.default.createFile(atPath: home.databasePath, contents: Data("db".utf8)))
        return home
    }

    @Test("real files: made and bound (0600), kept by a second start and after a rename, renewed in a copy (cp -a), and an id made by an older tv is bound, not renewed")
    func realFiles() throws {
        let root = NSTemporaryDirectory() + "instance-binding-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        let home = try folder(root + "/original")
        let (first, renewedFirst) = try InstanceIdentity.of(home)
        #expect(renewedFirst == nil && UUID(uuidString: first.id) != nil)
        let bindingPath = home.path + "/" + InstanceIdentity.bindingFileName
        let binding = try #require(InstanceBinding(fileText: try String(contentsOfFile: bindingPath, encoding: .utf8)))
        var info = stat()
        #expect(stat(home.databasePath, &info) == 0 && binding.databaseInode == UInt64(info.st_ino))
        for path in [bindingPath, home.path + "/" + InstanceIdentity.fileName] {
            #expect((try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) == 0o600, "\(path)")
        }
        #expect(try InstanceIdentity.of(home) == (first, nil))

        // A move within the file system keeps the database file: the same instance.
        try FileManager.default.moveItem(atPath: home.path, toPath: root + "/moved")
        let moved = TVHome(path: root + "/moved")
        #expect(try InstanceIdentity.of(moved) == (first, nil))

        // A copy is another database file: a new id, said once, then kept.
        let copy = Process()
        copy.executableURL = URL(fileURLWithPath: "/bin/cp")
        copy.arguments = ["-a", moved.path, root + "/copy"]
        try copy.run()
        copy.waitUntilExit()
        try #require(copy.terminationStatus == 0)
        let copied = TVHome(path: root + "/copy")
        let (renewed, renewal) = try InstanceIdentity.of(copied)
        #expect(renewal == InstanceIdentity.Renewal(previousID: first.id, mismatch: .otherDatabaseFile))
        #expect(renewed.id != first.id && UUID(uuidString: renewed.id) != nil)
        #expect(try String(contentsOfFile: copied.path + "/" + InstanceIdentity.fileName, encoding: .utf8) == renewed.id + "\n")
        #expect(try InstanceIdentity.of(copied) == (renewed, nil))
        #expect(try InstanceIdentity.of(moved) == (first, nil))

        // A database made anew (its flow ids start again): a new id too.
        try FileManager.default.removeItem(atPath: moved.databasePath)
        #expect(FileManager.default.createFile(atPath: moved.databasePath, contents: Data("new".utf8)))
        #expect(try InstanceIdentity.of(moved).renewal == InstanceIdentity.Renewal(previousID: first.id, mismatch: .otherDatabaseFile))

        // Another machine's binding: renewed as another machine.
        var fresh = stat()
        #expect(stat(copied.databasePath, &fresh) == 0)
        try InstanceBinding(machine: "machine-id:00000000000000000000000000000000", databaseInode: UInt64(fresh.st_ino)).fileText
            .write(toFile: copied.path + "/" + InstanceIdentity.bindingFileName, atomically: false, encoding: .utf8)
        let current = InstanceBinding.machine(machineIDFile: try? String(contentsOfFile: "/etc/machine-id", encoding: .utf8), hostName: InstanceIdentity.machineName())
        let other = try InstanceIdentity.of(copied)
        if current?.hasPrefix("machine-id:") == true {
            #expect(other.renewal == InstanceIdentity.Renewal(previousID: renewed.id, mismatch: .otherMachine))
        } else {
            // Without /etc/machine-id the host name is compared, and a machine id is another kind.
            #expect(other.renewal == nil)
        }

        // An id an older tv made (no binding file): bound as it is, never renewed.
        let old = try folder(root + "/old")
        let oldID = "00000000-0000-4000-8000-000000000001"
        try (oldID + "\n").write(toFile: old.path + "/" + InstanceIdentity.fileName, atomically: false, encoding: .utf8)
        #expect(try InstanceIdentity.of(old) == (InstanceIdentity(id: oldID, machine: InstanceIdentity.machineName()), nil))
        #expect(InstanceBinding(fileText: try String(contentsOfFile: old.path + "/" + InstanceIdentity.bindingFileName, encoding: .utf8))?.databaseInode != nil)
    }
}
