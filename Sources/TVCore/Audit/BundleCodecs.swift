import COpenSSL
import CZlib

/// gzip (RFC 1952) written through zlib's `deflate`, one piece at a time: the evidence bundle's
/// compression, which GNU tar (`tar xzf`) and Python's `tarfile` (`r:gz`) read.
final class GzipCompressor {
    private let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    private var out = [UInt8](repeating: 0, count: 65_536)
    private let started: Bool

    /// Fails (nil) only when zlib cannot allocate its state.
    init?(level: Int32 = 6) {
        stream.initialize(to: z_stream())
        started = tv_deflateInit2(stream, level, 15 + 16) == Z_OK
        // A failed init still runs deinit (every property is set): it frees the stream.
        if !started { return nil }
    }

    deinit {
        if started { deflateEnd(stream) }
        stream.deallocate()
    }

    /// Compresses `input`, handing what is ready to `emit`.
    func take(_ input: UnsafeRawBufferPointer, emit: ([UInt8]) -> Void) {
        run(input, flush: Z_NO_FLUSH, emit: emit)
    }

    /// Ends the member (its CRC-32 and length), handing the rest to `emit`.
    func finish(emit: ([UInt8]) -> Void) {
        run(UnsafeRawBufferPointer(start: nil, count: 0), flush: Z_FINISH, emit: emit)
    }

    private func run(_ input: UnsafeRawBufferPointer, flush: Int32, emit: ([UInt8]) -> Void) {
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: UInt8.self))
        stream.pointee.avail_in = uInt(input.count)
        while true {
            let (rc, produced) = out.withUnsafeMutableBufferPointer { buffer -> (Int32, Int) in
                stream.pointee.next_out = buffer.baseAddress
                stream.pointee.avail_out = uInt(buffer.count)
                let rc = deflate(stream, flush)
                return (rc, buffer.count - Int(stream.pointee.avail_out))
            }
            if produced > 0 { emit(Array(out[..<produced])) }
            if flush == Z_FINISH {
                if rc == Z_STREAM_END || rc == Z_STREAM_ERROR { return }
            } else if stream.pointee.avail_in == 0 && produced < out.count {
                return
            }
        }
    }
}

/// gzip read through zlib's `inflate` (one member, its CRC-32 checked by zlib at the end).
final class GzipDecompressor {
    /// Why the compressed stream could not be read.
    enum Problem: Error, Equatable {
        /// zlib's own words (a bad header, a CRC mismatch, damaged data).
        case damaged(String)
        /// The stream stopped before the member's end.
        case endsEarly
    }

    private let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    private var out = [UInt8](repeating: 0, count: 65_536)
    private(set) var ended = false
    /// Input bytes after the member's end (the verifier's `appended`: tv writes one member).
    private(set) var trailingBytes: Int64 = 0
    private let started: Bool

    init?() {
        stream.initialize(to: z_stream())
        started = tv_inflateInit2(stream, 15 + 16) == Z_OK
        // A failed init still runs deinit (every property is set): it frees the stream.
        if !started { return nil }
    }

    deinit {
        if started { inflateEnd(stream) }
        stream.deallocate()
    }

    /// Decompresses `input`, handing the bytes to `emit`; what follows the member's end is only
    /// counted (`trailingBytes`).
    func take(_ input: UnsafeRawBufferPointer, emit: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard !ended else {
            trailingBytes += Int64(input.count)
            return
        }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: UInt8.self))
        stream.pointee.avail_in = uInt(input.count)
        while true {
            let (rc, produced) = out.withUnsafeMutableBufferPointer { buffer -> (Int32, Int) in
                stream.pointee.next_out = buffer.baseAddress
                stream.pointee.avail_out = uInt(buffer.count)
                let rc = inflate(stream, Z_NO_FLUSH)
                return (rc, buffer.count - Int(stream.pointee.avail_out))
            }
            if produced > 0 { try out.withUnsafeBytes { try emit(UnsafeRawBufferPointer(rebasing: $0[..<produced])) } }
            switch rc {
            case Z_STREAM_END:
                ended = true
                trailingBytes += Int64(stream.pointee.avail_in)
                return
            case Z_OK:
                if stream.pointee.avail_in == 0 && produced < out.count { return }
            case Z_BUF_ERROR:
                return  // needs more input
            default:
                let words = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(rc)"
                throw Problem.damaged(words)
            }
        }
    }

    /// Call at the end of the input.
    func finish() throws {
        guard ended else { throw Problem.endsEarly }
    }
}

/// SHA-256 (FIPS 180-4) through OpenSSL's EVP digest interface, fed in pieces.
final class SHA256Digest {
    private let context: OpaquePointer

    /// Fails (nil) only when OpenSSL cannot allocate or start the digest.
    init?() {
        guard let context = EVP_MD_CTX_new() else { return nil }
        guard EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else {
            EVP_MD_CTX_free(context)
            return nil
        }
        self.context = context
    }

    deinit { EVP_MD_CTX_free(context) }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        _ = EVP_DigestUpdate(context, bytes.baseAddress, bytes.count)
    }

    func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The digest as 64 lowercase hex digits.
    func hex() -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        _ = EVP_DigestFinal_ex(context, &digest, &length)
        return digest[..<Int(length)].map { byte in
            let text = String(byte, radix: 16)
            return byte < 16 ? "0" + text : text
        }.joined()
    }

    /// SHA-256 of `bytes`, as hex.
    static func hex(_ bytes: [UInt8]) -> String? {
        guard let digest = SHA256Digest() else { return nil }
        digest.update(bytes)
        return digest.hex()
    }
}
