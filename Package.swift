// swift-tools-version:6.0
// TunnelVision (`tv`): a TLS-inspection MITM proxy with its own CA toolchain, for Linux.
// Module map: ../shared/DESIGN.md §2. Only the toolchain's libraries and Debian's C libraries.
import PackageDescription

let package = Package(
    name: "TunnelVision",
    products: [
        .executable(name: "tv", targets: ["tv"]),
        .library(name: "Proxy", targets: ["Proxy"]),
        .library(name: "LocalCA", targets: ["LocalCA"]),
    ],
    targets: [
        // System libraries (Debian -dev packages, found through pkg-config).
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CNghttp2", pkgConfig: "libnghttp2", providers: [.apt(["libnghttp2-dev"])]),
        // C functions wrapping the macros Swift cannot call, and Linux bits Glibc lacks.
        .target(name: "CTVShims", dependencies: ["COpenSSL"]),

        // Shared small pieces: the data folder layout, file modes, user-facing errors.
        .target(name: "TVHome"),
        // Our own command-line parser (no outside package can be fetched).
        .target(name: "CommandLineParser"),
        // Root creation, leaf minting + cache, key storage, exports.
        .target(name: "LocalCA", dependencies: ["COpenSSL", "CTVShims", "TVHome"]),

        // Pure parsers: TLS ClientHello/ServerHello, HTTP/1 request heads, SOCKS5 (no I/O, no OpenSSL).
        .target(name: "Wire"),
        // The terminating proxy engine: event loops, connection state machines, the two TLS legs.
        .target(name: "Proxy", dependencies: ["LocalCA", "Wire", "CTVShims", "COpenSSL", "TVHome"]),

        .executableTarget(name: "tv", dependencies: ["CommandLineParser", "TVHome", "LocalCA"]),

        .testTarget(name: "CommandLineParserTests", dependencies: ["CommandLineParser"]),
        .testTarget(name: "TVHomeTests", dependencies: ["TVHome"]),
        .testTarget(name: "LocalCATests", dependencies: ["LocalCA", "COpenSSL", "CTVShims", "TVHome"]),
        .testTarget(name: "CLITests", dependencies: ["tv"]),
        .testTarget(name: "WireTests", dependencies: ["Wire"]),
        .testTarget(name: "ProxyTests", dependencies: ["Proxy", "Wire", "LocalCA", "COpenSSL", "CTVShims", "TVHome"]),
    ],
    swiftLanguageModes: [.v6]
)
