import COpenSSL
import CTVShims
import Foundation
import Synchronization
@testable import LocalCA

// Reading certificates back with OpenSSL, independently of the accessors under test where that
// matters (extension text, criticality, raw serial encoding, the set of extensions present).

/// The current time as `tv` reads it: whole seconds since 1970-01-01 UTC.
func currentTime() -> Int64 { Int64(Date().timeIntervalSince1970) }

let day: Int64 = 86_400

/// One extension as OpenSSL prints it (`openssl x509 -text` uses the same printer).
struct ExtensionReading: Equatable {
    var critical: Bool
    var text: String
}

/// The extension with `nid` as OpenSSL prints it, or nil when absent.
func extensionReading(_ cert: Certificate, _ nid: Int32) -> ExtensionReading? {
    let index = X509_get_ext_by_NID(cert.handle, nid, -1)
    guard index >= 0, let ext = X509_get_ext(cert.handle, index) else { return nil }
    guard let bio = BIO_new(BIO_s_mem()) else { return nil }
    defer { BIO_free(bio) }
    X509V3_EXT_print(bio, ext, 0, 0)
    var pointer: UnsafeMutablePointer<CChar>?
    let count = tv_bio_get_mem_data(bio, &pointer)
    var text = ""
    if count > 0, let pointer {
        text = pointer.withMemoryRebound(to: UInt8.self, capacity: count) {
            String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self)
        }
    }
    return ExtensionReading(critical: X509_EXTENSION_get_critical(ext) == 1,
                            text: text.trimmingCharacters(in: .whitespacesAndNewlines))
}

/// The NIDs of every extension, in certificate order (duplicates kept, so a duplicate shows).
func extensionNIDs(_ cert: Certificate) -> [Int32] {
    (0..<X509_get_ext_count(cert.handle)).map { i in
        OBJ_obj2nid(X509_EXTENSION_get_object(X509_get_ext(cert.handle, i)))
    }
}

/// The subject's entries as (NID, UTF-8 value), in order.
func subjectEntries(_ cert: Certificate) -> [(Int32, String)] {
    let name = X509_get_subject_name(cert.handle)
    return (0..<X509_NAME_entry_count(name)).map { i in
        let entry = X509_NAME_get_entry(name, i)
        let nid = OBJ_obj2nid(X509_NAME_ENTRY_get_object(entry))
        var utf8: UnsafeMutablePointer<UInt8>?
        let n = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(entry))
        defer { tv_openssl_free(utf8) }
        guard n >= 0, let utf8 else { return (nid, "") }
        return (nid, String(decoding: UnsafeBufferPointer(start: utf8, count: Int(n)), as: UTF8.self))
    }
}

/// The serial as DER carries it: (ASN.1 type, content octets). Type V_ASN1_INTEGER = positive.
func rawSerial(_ cert: Certificate) -> (type: Int32, octets: [UInt8]) {
    let serial = X509_get0_serialNumber(cert.handle)!
    let n = Int(ASN1_STRING_length(serial))
    let p = ASN1_STRING_get0_data(serial)!
    return (ASN1_STRING_type(serial), Array(UnsafeBufferPointer(start: p, count: n)))
}

func signatureNID(_ cert: Certificate) -> Int32 { X509_get_signature_nid(cert.handle) }
func x509Version(_ cert: Certificate) -> Int { Int(X509_get_version(cert.handle)) }

/// Where a verification points the host check.
enum VerifyTarget {
    case host(String)
    case ip(String)
    case none
}

/// Verifies `leaf` against `root` as the only anchor, as a TLS client would: purpose sslserver,
/// X.509 strict checks, the host or IP checked, at time `at` (`purpose` nil: OpenSSL's default). Returns OpenSSL's error (0 = OK).
func verify(_ leaf: Certificate, root: Certificate, _ target: VerifyTarget, at time: Int64, strict: Bool = true,
            purpose: Int32? = X509_PURPOSE_SSL_SERVER) -> Int32 {
    let store = X509_STORE_new()!
    defer { X509_STORE_free(store) }
    X509_STORE_add_cert(store, root.handle)
    let ctx = X509_STORE_CTX_new()!
    defer { X509_STORE_CTX_free(ctx) }
    X509_STORE_CTX_init(ctx, store, leaf.handle, nil)
    let param = X509_STORE_CTX_get0_param(ctx)
    if let purpose { X509_VERIFY_PARAM_set_purpose(param, purpose) }
    X509_VERIFY_PARAM_set_time(param, time_t(time))
    if strict { X509_VERIFY_PARAM_set_flags(param, UInt(X509_V_FLAG_X509_STRICT)) }
    switch target {
    case .host(let name): X509_VERIFY_PARAM_set1_host(param, name, 0)
    case .ip(let text): X509_VERIFY_PARAM_set1_ip_asc(param, text)
    case .none: break
    }
    let ok = X509_verify_cert(ctx)
    let error = X509_STORE_CTX_get_error(ctx)
    ERR_clear_error()
    return ok == 1 ? 0 : error
}

/// A CA held in memory only (no files), for profile tests.
func makeAuthority(root rootType: KeyType = .ecdsaP256, leaf leafType: KeyType = .ecdsaP256, now: Int64) throws -> CertificateAuthority {
    let rootKey = try PrivateKey.generate(rootType)
    let root = try CertificateAuthority.makeRoot(key: rootKey, now: now)
    return CertificateAuthority(root: root, rootKey: rootKey, leafKey: try PrivateKey.generate(leafType))
}

/// A fresh empty folder under the system's temporary folder, removed by `remove()`.
struct TemporaryFolder {
    let path: String

    init(_ label: String = "tv-test") {
        let template = NSTemporaryDirectory() + "/\(label)-XXXXXX"
        var bytes = Array(template.utf8CString)
        let made = bytes.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        path = String(decoding: bytes.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }

    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let file = path + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        return file
    }
}

/// Every entry below `directory` with its bytes (folders as nil) and mode, to prove nothing changed.
func snapshot(_ directory: String) -> [String: (bytes: [UInt8]?, mode: mode_t)] {
    var out: [String: (bytes: [UInt8]?, mode: mode_t)] = [:]
    guard let items = FileManager.default.enumerator(atPath: directory) else { return out }
    for case let item as String in items {
        let path = directory + "/" + item
        var isDir: ObjCBool = false
        _ = FileManager.default.fileExists(atPath: path, isDirectory: &isDir)
        let bytes = isDir.boolValue ? nil : FileManager.default.contents(atPath: path).map { [UInt8]($0) }
        var st = stat()
        lstat(path, &st)
        out[item] = (bytes, st.st_mode)
    }
    return out
}

func sameSnapshot(_ a: [String: (bytes: [UInt8]?, mode: mode_t)], _ b: [String: (bytes: [UInt8]?, mode: mode_t)]) -> Bool {
    guard Set(a.keys) == Set(b.keys) else { return false }
    return a.allSatisfy { key, value in b[key]!.bytes == value.bytes && b[key]!.mode == value.mode }
}

/// Keys shared by tests that only need *a* key of a type: RSA-3072 generation costs about a
/// second on this machine, and the suite must stay fast. `slot` gives distinct keys of one type.
func pooledKey(_ type: KeyType, slot: Int = 0) throws -> PrivateKey {
    try keyPool.withLock { pool in
        if let key = pool["\(type.name)/\(slot)"] { return key }
        let key = try PrivateKey.generate(type)
        pool["\(type.name)/\(slot)"] = key
        return key
    }
}

private let keyPool = Mutex<[String: PrivateKey]>([:])
