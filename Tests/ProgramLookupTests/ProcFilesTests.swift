import Testing
@testable import ProgramLookup
#if canImport(Glibc)
import Glibc
#endif

@Suite("/proc descriptor links read without text: ProcFiles.socketInode(linkBytes:), descriptor(entryName:), socketDescriptors")
struct ProcFilesTests {
    static func inode(_ text: String) -> UInt64? {
        var copy = text
        return copy.withUTF8 { ProcFiles.socketInode(linkBytes: UnsafeRawBufferPointer($0)) }
    }

    static func descriptor(_ name: String) -> Int32? {
        name.withCString { ProcFiles.descriptor(entryName: $0) }
    }

    @Test("link bytes as readlink(2) gives them (proc(5) 'socket:[inode]'): the inode; anything else, an empty, signed or 65-bit number: nil")
    func linkBytes() {
        #expect(Self.inode("socket:[4522727]") == 4_522_727)
        #expect(Self.inode("socket:[0]") == 0)
        #expect(Self.inode("socket:[18446744073709551615]") == UInt64.max)
        #expect(Self.inode("socket:[18446744073709551616]") == nil)
        #expect(Self.inode("socket:[]") == nil)
        #expect(Self.inode("socket:[12x]") == nil)
        #expect(Self.inode("socket:[+12]") == nil)
        #expect(Self.inode("socket:[-1]") == nil)
        #expect(Self.inode("socket:[12") == nil)
        #expect(Self.inode("socket:[") == nil)
        #expect(Self.inode("pipe:[4522580]") == nil)
        #expect(Self.inode("anon_inode:[eventpoll]") == nil)
        #expect(Self.inode("/dev/null") == nil)
        #expect(Self.inode("") == nil)
        // The text form says the same.
        #expect(ProcFiles.socketInode(link: "socket:[4522727]") == 4_522_727)
        #expect(ProcFiles.socketInode(link: "socket:[12x]") == nil)
    }

    @Test("fd directory entry names: decimal descriptors within Int32; '.', '..', empty, 2^31 or letters: nil")
    func entryNames() {
        #expect(Self.descriptor("0") == 0)
        #expect(Self.descriptor("3") == 3)
        #expect(Self.descriptor("1023") == 1_023)
        #expect(Self.descriptor("2147483647") == Int32.max)
        #expect(Self.descriptor("2147483648") == nil)
        #expect(Self.descriptor("99999999999") == nil)
        #expect(Self.descriptor(".") == nil)
        #expect(Self.descriptor("..") == nil)
        #expect(Self.descriptor("") == nil)
        #expect(Self.descriptor("12a") == nil)
    }

    @Test("this process's own descriptors as the kernel lists them: a socket pair's two ends with fstat's inodes, not the pipe; the single-link read agrees; a refused link (EACCES, EPERM) ends the read, a closed one (ENOENT) does not")
    func ownSockets() throws {
        var pair: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0)
        var pipeEnds: [Int32] = [-1, -1]
        #expect(pipe(&pipeEnds) == 0)
        defer { for fd in pair + pipeEnds where fd >= 0 { close(fd) } }
        func fstatInode(_ fd: Int32) -> UInt64 {
            var info = stat()
            return fstat(fd, &info) == 0 ? UInt64(info.st_ino) : 0
        }
        let inodes = pair.map(fstatInode)
        #expect(inodes.allSatisfy { $0 != 0 })

        let (sockets, error) = ProcFiles.socketDescriptors(pid: getpid())
        #expect(error == 0)
        for (fd, inode) in zip(pair, inodes) {
            #expect(sockets.contains { $0.fd == fd && $0.inode == inode })
            #expect(ProcFiles.socketInode(pid: getpid(), fd: fd) == inode)
        }
        #expect(!sockets.contains { pipeEnds.contains($0.fd) })
        #expect(ProcFiles.socketInode(pid: getpid(), fd: pipeEnds[0]) == nil)

        // Stopping once the wanted inode is met: it is the last one read (the directory lists
        // descriptors in ascending order; those after it are not read).
        let first = try #require(zip(pair, inodes).min { $0.0 < $1.0 })
        let stopped = ProcFiles.socketDescriptors(pid: getpid(), stoppingOnceFound: [first.1]).sockets
        #expect(stopped.last?.fd == first.0 && stopped.last?.inode == first.1)
        #expect(!stopped.contains { $0.fd > first.0 })

        // A refused link ends the read of that process (the rest would be refused too); a
        // descriptor closed meanwhile does not.
        #expect(ProcFiles.refusalEndsRead(errno: EACCES) && ProcFiles.refusalEndsRead(errno: EPERM))
        #expect(!ProcFiles.refusalEndsRead(errno: ENOENT) && !ProcFiles.refusalEndsRead(errno: ENAMETOOLONG))

        // A process that is not there: no sockets and ENOENT.
        let gone = ProcFiles.socketDescriptors(pid: Int32.max)
        #expect(gone.sockets.isEmpty && gone.error == ENOENT)
    }
}
