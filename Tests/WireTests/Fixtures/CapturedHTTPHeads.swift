// Real HTTP proxy request heads: a python3 server on 127.0.0.1 (head_server.py, see FixtureCapture.swift)
// dumped what curl sent up to the end of the head (plus any body in the same read);
// captured 2026-11-30 on Debian 12 with OpenSSL 3.0.22, curl 7.88.1, Python 3.11.7.

enum CapturedHTTPHeads {
    /// `curl -x http://127.0.0.1:18471 https://a.test/`: CONNECT a.test:443.
    static let curlConnect: [UInt8] = hex(
        "434f4e4e45435420612e746573743a34343320485454502f312e310d0a486f73743a20612e746573743a3434330d0a55",
        "7365722d4167656e743a206375726c2f372e38382e310d0a50726f78792d436f6e6e656374696f6e3a204b6565702d41",
        "6c6976650d0a0d0a"
    )

    /// `curl -x http://127.0.0.1:18472 'http://a.test:8080/path?q=1'`: absolute-form GET.
    static let curlAbsoluteGET: [UInt8] = hex(
        "47455420687474703a2f2f612e746573743a383038302f706174683f713d3120485454502f312e310d0a486f73743a20",
        "612e746573743a383038300d0a557365722d4167656e743a206375726c2f372e38382e310d0a4163636570743a202a2f",
        "2a0d0a50726f78792d436f6e6e656374696f6e3a204b6565702d416c6976650d0a0d0a"
    )

    /// `curl -x http://127.0.0.1:18473 -d 'hello=world' http://a.test/form`: absolute-form POST, Content-Length 11,
    /// followed by its 11-byte body in the same read.
    static let curlAbsolutePOST: [UInt8] = hex(
        "504f535420687474703a2f2f612e746573742f666f726d20485454502f312e310d0a486f73743a20612e746573740d0a",
        "557365722d4167656e743a206375726c2f372e38382e310d0a4163636570743a202a2f2a0d0a50726f78792d436f6e6e",
        "656374696f6e3a204b6565702d416c6976650d0a436f6e74656e742d4c656e6774683a2031310d0a436f6e74656e742d",
        "547970653a206170706c69636174696f6e2f782d7777772d666f726d2d75726c656e636f6465640d0a0d0a68656c6c6f",
        "3d776f726c64"
    )

}
