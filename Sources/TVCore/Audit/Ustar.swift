/// The POSIX.1-1988 ustar archive format (IEEE Std 1003.1-1988 §10.1.1; pax's "ustar Interchange
/// Format" in later editions), the container of the evidence bundle: 512-byte blocks; each member
/// is one header block then its data padded to a whole block; the archive ends with two blocks of
/// zeros. Only what the bundle needs: regular files (typeflag '0') with names of at most 100
/// bytes, sizes below 8 GiB (11 octal digits).
public enum Ustar {
    /// Every header and data unit is a 512-byte block.
    public static let blockSize = 512
    /// Longest member name the `name` field holds (the `prefix` field is not used).
    public static let maximumNameBytes = 100
    /// Largest member size 11 octal digits hold.
    public static let maximumSize: Int64 = 0o77777777777

    /// The header block of a regular file `name` of `size` bytes, mode `mode`, modified at
    /// `mtime` (seconds since the epoch), owned by uid/gid 0 with `owner` as user and group name.
    /// Returns nil for a name that is empty, too long, or not ASCII, or a size out of range.
    public static func header(name: String, size: Int64, mtime: Int64, mode: Int = 0o600, owner: String = "tv") -> [UInt8]? {
        let nameBytes = Array(name.utf8)
        guard !nameBytes.isEmpty, nameBytes.count <= maximumNameBytes, nameBytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }),
              size >= 0, size <= maximumSize, mtime >= 0 else { return nil }
        var block = [UInt8](repeating: 0, count: blockSize)
        func put(_ bytes: [UInt8], at offset: Int) {
            for (i, byte) in bytes.enumerated() { block[offset + i] = byte }
        }
        /// `digits` octal digits, then NUL (the field is digits + 1 bytes).
        func octal(_ value: Int64, digits: Int) -> [UInt8] {
            let text = String(value, radix: 8)
            return Array((String(repeating: "0", count: max(0, digits - text.count)) + text).utf8) + [0]
        }
        put(nameBytes, at: 0)                                  // name[100]
        put(octal(Int64(mode), digits: 7), at: 100)            // mode[8]
        put(octal(0, digits: 7), at: 108)                      // uid[8]
        put(octal(0, digits: 7), at: 116)                      // gid[8]
        put(octal(size, digits: 11), at: 124)                  // size[12]
        put(octal(mtime, digits: 11), at: 136)                 // mtime[12]
        put(Array(repeating: 0x20, count: 8), at: 148)         // chksum[8]: spaces while summing
        block[156] = UInt8(ascii: "0")                         // typeflag: regular file
        put(Array("ustar".utf8) + [0], at: 257)                // magic[6]
        put(Array("00".utf8), at: 263)                         // version[2]
        let ownerBytes = Array(owner.utf8.prefix(31))
        put(ownerBytes, at: 265)                               // uname[32]
        put(ownerBytes, at: 297)                               // gname[32]
        let sum = checksum(block)
        put(octal(Int64(sum), digits: 6) + [0x20], at: 148)    // six digits, NUL, space
        return block
    }

    /// The header checksum: the sum of the block's bytes as unsigned, the checksum field counted
    /// as eight spaces.
    public static func checksum(_ block: [UInt8]) -> Int {
        var sum = 0
        for (i, byte) in block.enumerated() { sum += (148..<156).contains(i) ? 0x20 : Int(byte) }
        return sum
    }

    /// Zero bytes that pad `size` bytes of data to a whole block.
    public static func padding(_ size: Int64) -> Int {
        Int((Int64(blockSize) - size % Int64(blockSize)) % Int64(blockSize))
    }

    /// The two zero blocks that end an archive.
    public static let trailer = [UInt8](repeating: 0, count: 2 * blockSize)

    /// One member's header, read back.
    public struct Member: Sendable, Equatable {
        public var name: String
        public var size: Int64
        /// The typeflag byte ('0' or NUL: a regular file).
        public var type: UInt8
    }

    /// Why a block is not a ustar header.
    public enum HeaderProblem: Error, Equatable {
        /// The stored checksum is not the block's (the header was changed or is not a header).
        case checksum
        /// A numeric field holds something other than octal digits.
        case field(String)
    }

    /// Reads a header block. Returns nil for a zero block (the archive's end).
    /// - Throws: `HeaderProblem`.
    public static func member(_ block: ArraySlice<UInt8>) throws(HeaderProblem) -> Member? {
        let b = Array(block)
        guard b.count == blockSize else { throw .field("block") }
        if b.allSatisfy({ $0 == 0 }) { return nil }
        guard let stored = octal(b[148..<156]), stored == Int64(checksum(b)) else { throw .checksum }
        guard let size = octal(b[124..<136]) else { throw .field("size") }
        let nameEnd = b[0..<100].firstIndex(of: 0) ?? 100
        var name = String(decoding: b[0..<nameEnd], as: UTF8.self)
        if b[257..<262].elementsEqual("ustar".utf8) {
            let prefixEnd = b[345..<500].firstIndex(of: 0) ?? 500
            if prefixEnd > 345 { name = String(decoding: b[345..<prefixEnd], as: UTF8.self) + "/" + name }
        }
        return Member(name: name, size: size, type: b[156])
    }

    /// An octal field: optional leading spaces, digits, ended by NUL or space (or the field's end).
    static func octal(_ field: ArraySlice<UInt8>) -> Int64? {
        var value: Int64 = 0
        var digits = 0
        var ended = false
        for byte in field {
            if ended { continue }
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "7"):
                value = value * 8 + Int64(byte - UInt8(ascii: "0"))
                digits += 1
            case 0x20 where digits == 0:
                continue
            case 0, 0x20:
                ended = true
            default:
                return nil
            }
        }
        return digits > 0 ? value : nil
    }
}

/// Reads a ustar stream fed in pieces of any size, handing each member's name and data to its
/// callbacks as they arrive (bounded: it holds at most one block).
public struct UstarStreamReader {
    /// What went wrong reading the archive.
    public enum Problem: Error, Equatable {
        /// A header block that is not one (`member`: the file before it, or nil at the start).
        case badHeader(after: String?, Ustar.HeaderProblem)
        /// The stream ended inside a member or before the two zero blocks.
        case endsEarly(inside: String?)
        /// A member that is not a regular file.
        case notAFile(String)
    }

    private enum State {
        case header
        case data(remaining: Int64, padding: Int)
        case ended
    }

    private var state = State.header
    private var block: [UInt8] = []
    private var current: String?
    private var zeroBlocks = 0
    /// Bytes read after the end-of-archive blocks, and where the first non-zero one was.
    private var afterEnd: Int64 = 0
    private var firstNonZero: Int64?

    /// Bytes after the end-of-archive blocks from the first non-zero one on (zeros are a
    /// record's padding, as GNU tar writes; anything else was appended).
    public var trailingBytes: Int64 { firstNonZero.map { afterEnd - $0 } ?? 0 }

    public init() {}

    /// True once the end-of-archive blocks were read.
    public var isComplete: Bool {
        if case .ended = state { return true }
        return false
    }

    /// Takes the next bytes of the archive.
    /// - Throws: `Problem`.
    public mutating func take(_ bytes: UnsafeRawBufferPointer, member: (Ustar.Member) -> Void,
                              data: (UnsafeRawBufferPointer) -> Void) throws(Problem) {
        var offset = 0
        while offset < bytes.count {
            switch state {
            case .ended:
                // After the end: zero padding (GNU tar pads to a record), or something appended.
                let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
                if firstNonZero == nil, let i = rest.firstIndex(where: { $0 != 0 }) { firstNonZero = afterEnd + Int64(i - rest.startIndex) }
                afterEnd += Int64(rest.count)
                return
            case let .data(remaining, padding):
                if remaining > 0 {
                    let n = Int(min(Int64(bytes.count - offset), remaining))
                    data(UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + n)]))
                    offset += n
                    state = .data(remaining: remaining - Int64(n), padding: padding)
                } else if padding > 0 {
                    let n = min(bytes.count - offset, padding)
                    offset += n
                    state = .data(remaining: 0, padding: padding - n)
                } else {
                    state = .header
                }
            case .header:
                let n = min(bytes.count - offset, Ustar.blockSize - block.count)
                block += bytes[offset..<(offset + n)]
                offset += n
                guard block.count == Ustar.blockSize else { continue }
                let header: Ustar.Member?
                do { header = try Ustar.member(block[...]) } catch { throw .badHeader(after: current, error) }
                block.removeAll(keepingCapacity: true)
                guard let header else {
                    zeroBlocks += 1
                    if zeroBlocks == 2 { state = .ended }
                    continue
                }
                guard zeroBlocks == 0 else { throw .badHeader(after: current, .field("a member after a zero block")) }
                guard header.type == UInt8(ascii: "0") || header.type == 0 else { throw .notAFile(header.name) }
                current = header.name
                member(header)
                state = .data(remaining: header.size, padding: Ustar.padding(header.size))
            }
        }
        if case .data(0, 0) = state { state = .header }
    }

    /// Call at the end of the stream.
    /// - Throws: `Problem.endsEarly` when the archive was not complete.
    public func finish() throws(Problem) {
        guard isComplete else {
            if case .data = state { throw .endsEarly(inside: current) }
            throw .endsEarly(inside: nil)
        }
    }
}
