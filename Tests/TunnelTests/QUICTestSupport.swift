import COpenSSL
import Foundation
import Wire
@testable import Tunnel

/// The RFC test vectors in Vectors/ ("name = value" lines, copied from ../shared/testdata):
/// RFC 9001 Appendix A (QUIC v1) and RFC 9369 Appendix A (QUIC v2).
struct QUICVectors {
    let values: [String: String]

    static let v1 = QUICVectors(file: "quic-rfc9001-appendix-a.txt")
    static let v2 = QUICVectors(file: "quic-rfc9369-appendix-a.txt")

    init(file: String) {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Vectors/" + file).path
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { fatalError("missing vector file \(path)") }
        var values: [String: String] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let equals = line.range(of: " = ") else { continue }
            values[String(line[..<equals.lowerBound])] = String(line[equals.upperBound...])
        }
        self.values = values
    }

    /// A hex value as bytes.
    func bytes(_ name: String) -> [UInt8] {
        guard let text = values[name] else { fatalError("no vector \(name)") }
        return hexBytes(text)
    }

    func int(_ name: String) -> Int { Int(values[name]!)! }
}

func hexBytes(_ text: String) -> [UInt8] {
    var out: [UInt8] = []
    var high: UInt8?
    for c in text.utf8 {
        let nibble: UInt8 = c <= 57 ? c - 48 : (c | 0x20) - 87
        if let h = high { out.append(h << 4 | nibble); high = nil } else { high = nibble }
    }
    return out
}

/// Builds protected client Initial packets the way RFC 9001 §5.3–5.4 says, with OpenSSL's
/// AES-128-GCM and AES-128-ECB directly (not tv's opening code), for inputs the RFC has no
/// vector for: ClientHellos split across packets, reordered, Retries. `SealerTests` checks it
/// reproduces the RFC's protected packet byte for byte.
enum InitialSealer {
    static func seal(version: QUICVersion = .v1, dcid: [UInt8], scid: [UInt8] = [], token: [UInt8] = [], keys: QUICInitialKeys? = nil,
                     packetNumber: UInt64, packetNumberLength: Int = 4, frames: [UInt8], padTo payloadLength: Int = 0) -> [UInt8] {
        let keys = keys ?? QUICInitialKeys(version: version, destinationConnectionID: dcid)!
        let payload = frames + [UInt8](repeating: 0, count: max(0, payloadLength - frames.count))
        let length = packetNumberLength + payload.count + 16
        var header: [UInt8] = [0xC0 | version.initialType << 4 | UInt8(packetNumberLength - 1)]
        header += withUnsafeBytes(of: version.rawValue.bigEndian, Array.init)
        header += [UInt8(dcid.count)] + dcid + [UInt8(scid.count)] + scid
        header += QUICVarint.encode(UInt64(token.count))! + token
        header += [UInt8(0x40 | length >> 8), UInt8(length & 0xFF)]
        let pnOffset = header.count
        for i in (0..<packetNumberLength).reversed() { header.append(UInt8((packetNumber >> (8 * UInt64(i))) & 0xFF)) }
        var nonce = keys.iv
        for i in 0..<8 { nonce[11 - i] ^= UInt8((packetNumber >> (8 * UInt64(i))) & 0xFF) }
        var packet = header + gcmSeal(key: keys.key, nonce: nonce, aad: header, plaintext: payload)
        let mask = ecb(keys.headerProtection, Array(packet[(pnOffset + 4)..<(pnOffset + 20)]))
        packet[0] ^= mask[0] & 0x0F
        for i in 0..<packetNumberLength { packet[pnOffset + i] ^= mask[1 + i] }
        return packet
    }

    /// A CRYPTO frame (RFC 9000 §19.6) carrying `data` at `offset`.
    static func crypto(_ offset: Int, _ data: ArraySlice<UInt8>) -> [UInt8] {
        [0x06] + QUICVarint.encode(UInt64(offset))! + QUICVarint.encode(UInt64(data.count))! + Array(data)
    }

    private static func gcmSeal(key: [UInt8], nonce: [UInt8], aad: [UInt8], plaintext: [UInt8]) -> [UInt8] {
        let context = EVP_CIPHER_CTX_new()!
        defer { EVP_CIPHER_CTX_free(context) }
        var out = [UInt8](repeating: 0, count: plaintext.count + 16)
        var n: Int32 = 0
        var tag = [UInt8](repeating: 0, count: 16)
        guard EVP_EncryptInit_ex(context, EVP_aes_128_gcm(), nil, nil, nil) == 1,
              EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, 12, nil) == 1,
              EVP_EncryptInit_ex(context, nil, nil, key, nonce) == 1,
              EVP_EncryptUpdate(context, nil, &n, aad, Int32(aad.count)) == 1,
              EVP_EncryptUpdate(context, &out, &n, plaintext, Int32(plaintext.count)) == 1 else { fatalError("GCM") }
        var last: Int32 = 0
        let written = Int(n)
        guard out.withUnsafeMutableBufferPointer({ EVP_EncryptFinal_ex(context, $0.baseAddress! + written, &last) }) == 1,
              EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, 16, &tag) == 1 else { fatalError("GCM tag") }
        return Array(out[0..<(written + Int(last))]) + tag
    }

    private static func ecb(_ key: [UInt8], _ block: [UInt8]) -> [UInt8] {
        let context = EVP_CIPHER_CTX_new()!
        defer { EVP_CIPHER_CTX_free(context) }
        var out = [UInt8](repeating: 0, count: 32)
        var n: Int32 = 0
        guard EVP_EncryptInit_ex(context, EVP_aes_128_ecb(), nil, key, nil) == 1, EVP_CIPHER_CTX_set_padding(context, 0) == 1,
              EVP_EncryptUpdate(context, &out, &n, block, 16) == 1 else { fatalError("ECB") }
        return Array(out[0..<16])
    }
}
/// `hello` (a bare ClientHello message) with one more extension at the end of its list, every
/// length that covers it grown.
func withExtension(_ hello: [UInt8], type: UInt16, data: [UInt8]) -> [UInt8] {
    let added = [UInt8(type >> 8), UInt8(type & 0xFF)] + [UInt8(data.count >> 8), UInt8(data.count & 0xFF)] + data
    var body = Array(hello[4...])
    // legacy_version(2) random(32) session_id<..32> cipher_suites<2..> compression<1..> extensions<..>
    var i = 34
    i += 1 + Int(body[i])
    i += 2 + (Int(body[i]) << 8 | Int(body[i + 1]))
    i += 1 + Int(body[i])
    let extensionsLength = (Int(body[i]) << 8 | Int(body[i + 1])) + added.count
    body[i] = UInt8(extensionsLength >> 8)
    body[i + 1] = UInt8(extensionsLength & 0xFF)
    body += added
    return [1, UInt8(body.count >> 16), UInt8(body.count >> 8 & 0xFF), UInt8(body.count & 0xFF)] + body
}
