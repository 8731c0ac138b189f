import COpenSSL
import CTVShims
import Foundation

/// A certificate read from a trust store, keeping any OpenSSL trust settings it carried
/// (`TRUSTED CERTIFICATE` blocks, read with `PEM_read_bio_X509_AUX`, pem(3)).
final class StoredCertificate {
    /// The owned `X509`; freed in `deinit`.
    let handle: OpaquePointer

    init(owning handle: OpaquePointer) { self.handle = handle }
    deinit { X509_free(handle) }

    /// The certificate's DER without the trust settings (`i2d_X509`, not `i2d_X509_AUX`), so a
    /// trusted entry compares equal to the plain certificate it was made from.
    var der: [UInt8] {
        var out: UnsafeMutablePointer<UInt8>?
        let count = i2d_X509(handle, &out)
        guard count > 0, let out else { return [] }
        defer { tv_openssl_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(count)))
    }

    /// Every PEM certificate in `bytes`, plain or `TRUSTED CERTIFICATE`, in order.
    static func allFromPEM(_ bytes: [UInt8]) -> [StoredCertificate] {
        let bio = bytes.withUnsafeBytes { BIO_new_mem_buf($0.baseAddress, Int32($0.count)) }
        defer { BIO_free(bio) }
        var out: [StoredCertificate] = []
        // PEM_read_bio_X509_AUX accepts "TRUSTED CERTIFICATE", "CERTIFICATE" and "X509 CERTIFICATE".
        while let cert = PEM_read_bio_X509_AUX(bio, nil, nil, nil) { out.append(StoredCertificate(owning: cert)) }
        ERR_clear_error()
        return out
    }
}

/// Reads the files of a store for the "installed?" question, noting what could not be read.
struct StoreFileReader {
    /// Files larger than this are not certificate files (a bundle of every public root is ~250 KB).
    static let maximumFileSize = 16 << 20

    enum Outcome {
        case read([UInt8])
        case missing
        case unreadable(String)
    }

    /// Reads a file whole, following symlinks.
    static func read(_ path: String) -> Outcome {
        var st = stat()
        guard stat(path, &st) == 0 else {
            return errno == ENOENT ? .missing : .unreadable("\(path) cannot be examined (\(String(cString: strerror(errno))))")
        }
        if (st.st_mode & S_IFMT) == S_IFDIR { return .unreadable("\(path) is a folder, not a file") }
        if Int(st.st_size) > maximumFileSize { return .unreadable("\(path) is larger than 16 MiB, too large to be a certificate file") }
        guard let data = FileManager.default.contents(atPath: path) else {
            return .unreadable("\(path) cannot be read")
        }
        return .read([UInt8](data))
    }

    /// The names in a folder (not recursive), or a sentence saying why it cannot be listed.
    static func list(_ dir: String) -> Result<[String], ReadProblem> {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: dir, isDirectory: &isDir) else {
            return .failure(ReadProblem(sentence: "\(dir) does not exist"))
        }
        guard isDir.boolValue else { return .failure(ReadProblem(sentence: "\(dir) is a file, not a folder")) }
        do { return .success(try FileManager.default.contentsOfDirectory(atPath: dir).sorted()) } catch {
            return .failure(ReadProblem(sentence: "\(dir) cannot be listed"))
        }
    }

    struct ReadProblem: Error { let sentence: String }
}
