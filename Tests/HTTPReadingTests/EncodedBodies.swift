/// Content-coded bodies made with the real tools by Scripts/fixtures/make_encoded_bodies.sh
/// (`gzip -9 -n`, `brotli -q 11`, `zstd -19`, python3 `zlib.compress(…, 9)`), all of the same
/// 512-byte plain body.
enum EncodedBodies {
    /// "TunnelVision decodes this body.\n" 16 times.
    static let plain: [UInt8] = Array(String(repeating: "TunnelVision decodes this body.\n", count: 16).utf8)
    static let gzip = hex("1f8b08000000000002030b29cdcb4bcd09cb2ccecccf5348494dce4f492d5628c9c82c5648ca4fa9d4e30a19951fd6f200fc5fcf6b00020000")
    static let br = hex("1fff01f8c5636c9c633c3cb1c0061c69405ca813e0fd42410e7964f0d6c90232a7822df43501")
    static let zstd = hex("28b52ffd04684d0100040254756e6e656c566973696f6e206465636f646573207468697320626f64792e0a0100e81eaa7a024f920119")
    static let deflate = hex("78da0b29cdcb4bcd09cb2ccecccf5348494dce4f492d5628c9c82c5648ca4fa9d4e30a19951fd6f2004293bc31")
}
