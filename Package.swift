// swift-tools-version:6.0
// TunnelVision (`tv`): a TLS-inspection MITM proxy with its own CA toolchain, for Linux.
// Module map: ../shared/DESIGN.md §2. Only the toolchain's libraries and Debian's C libraries.
import PackageDescription

/// The release `tv`'s link, for memory at rest (issue 21; measured with /proc/PID/smaps of a
/// `--static-swift-stdlib` tv at rest): the toolchain's lld packs the ~83,000 relative
/// relocations into DT_RELR (glibc ≥ 2.36; Debian 12 has 2.36), so start-up no longer reads the
/// 2 MiB `.rela.dyn`; `--no-export-dynamic` undoes the `-export-dynamic` that
/// `--static-swift-stdlib` adds, so the ~12,800 symbols of tv's own modules are not put in
/// `.dynsym`/`.dynstr` (0.9 MiB, read by every library symbol lookup). Together −2.9 MiB RSS.
/// `--symbol-ordering-file` puts the functions a resting `tv run` executes (Scripts/startup.order,
/// made by Scripts/startup-order) first in `.text`, so start-up touches few pages, each with its
/// fault-around window (−4 to −5 MiB at rest); symbols no longer present are skipped quietly.
let releaseLinkerSettings: [LinkerSetting] = [
    .unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "--no-export-dynamic",
                  "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/Scripts/startup.order",
                  "-Xlinker", "--no-warn-symbol-ordering"],
                 .when(configuration: .release)),
]

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
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CBrotli", pkgConfig: "libbrotlidec", providers: [.apt(["libbrotli-dev"])]),
        .systemLibrary(name: "CZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),
        .systemLibrary(name: "CIDN2", pkgConfig: "libidn2", providers: [.apt(["libidn2-dev"])]),
        // `tv web`'s HTTP server (i21-web; i21-ops' metrics may add the same target: one of them stays).
        // libpq: the shared history on a PostgreSQL server (i21-pg, issue 25).
        // Both are headers only, not linked: CTVShims opens them on first use (LazyLibraries.c),
        // so a `tv` that needs neither does not map them and the ~19 libraries they pull in.
        .systemLibrary(name: "CMicroHTTPD", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CPostgres", providers: [.apt(["libpq-dev"])]),
        // C functions wrapping the macros Swift cannot call, and Linux bits Glibc lacks.
        .target(name: "CTVShims", dependencies: ["COpenSSL"]),

        // Shared small pieces: the data folder layout, file modes, user-facing errors.
        .target(name: "TVHome"),
        // The nouns of a flow every layer shares: its status, host origin, transport, a chunk's
        // direction and the recorder seam, TLS alerts, errno, the engine's clock (toolchain only).
        .target(name: "FlowTerms"),
        // Our own command-line parser (no outside package can be fetched).
        .target(name: "CommandLineParser", dependencies: ["TVHome"]),
        // Root creation, leaf minting + cache, key storage, exports.
        .target(name: "LocalCA", dependencies: ["COpenSSL", "CTVShims", "TVHome"]),

        // SQLite: flows, pinned hosts, host names; migrations; the batched single writer. The
        // shared history on PostgreSQL (libpq) is the same store's second backend (Shared/).
        .target(name: "FlowStore", dependencies: ["CSQLite", "CPostgres", "CTVShims", "TVHome", "FlowTerms"]),
        // Decrypted content: chunks → turns under a byte budget, segment files + the turns index.
        .target(name: "Recording", dependencies: ["FlowStore", "TVHome", "FlowTerms", "CTVShims", "Wire"]),
        // HTTP/1.x and HTTP/2 read as messages from recorded turns; content decoding; HAR export.
        .target(name: "HTTPReading", dependencies: ["Recording", "TVHome", "Wire", "CNghttp2", "CZlib", "CBrotli", "CZstd", "FlowTerms"]),
        // Pure parsers: TLS ClientHello/ServerHello, the HTTP/1 codec (heads, chunked bodies), SOCKS5 (no I/O, no OpenSSL);
        // host names' U-labels to A-labels through libidn2 (IDNA, UTS #46); HPACK through nghttp2's
        // inflater (RFC 7541), the HTTP/2 frame scanner of the data path.
        .target(name: "Wire", dependencies: ["CIDN2", "CNghttp2"]),
        // The terminating proxy engine: the epoll loop (the TUN engine's too), sockets and listeners,
        // connection state machines, the two TLS legs.
        .target(name: "Proxy", dependencies: ["LocalCA", "Wire", "CTVShims", "COpenSSL", "TVHome", "FlowTerms"]),
        // Packet capture: pcapng files in $TV_HOME/captures, the `captures` / `packets` rows, the
        // writer thread behind a bounded queue (the TUN engine's `PacketRecorder`); packets are read
        // with Wire's `IPDatagramLayout` and `TCPFlags` (shared with the Tunnel's dissector).
        .target(name: "Capture", dependencies: ["FlowStore", "TVHome", "FlowTerms", "Settings", "Wire", "CTVShims"]),
        // The TUN front-end: packet parsing and rewriting, the TCP NAT, UDP/DNS forwarding,
        // fragment reassembly, namespaces for `tv exec`, policy routing for `--mode tun`; runs on Proxy's loop.
        // QUIC Initials are opened (names only) with OpenSSL's HKDF and AES.
        .target(name: "Tunnel", dependencies: ["Proxy", "LocalCA", "Wire", "COpenSSL", "CTVShims", "TVHome", "FlowTerms", "FlowStore", "Capture", "ProgramLookup"]),
        // The program behind each flow: sock_diag (the kernel's socket table) and /proc, on a
        // lookup thread of its own, off the data path.
        .target(name: "ProgramLookup", dependencies: ["CTVShims", "FlowTerms"]),
        // The control socket of a live `tv run` session.
        .target(name: "ControlChannel", dependencies: ["TVHome"]),

        // The filter language (mitmproxy's operators): a pure parser to an expression, and its
        // evaluation over the fields a flow or an exchange offers (i16-filters).
        .target(name: "FlowFilter", dependencies: ["TVHome", "Wire"]),

        // `tv web`: the request security decision (pure), the libmicrohttpd driver, the embedded
        // pages (Sources/Web/web, turned into WebAssets.swift by Scripts/web-assets).
        .target(name: "Web", dependencies: ["CMicroHTTPD", "CTVShims", "TVHome"], exclude: ["web"]),

        // Wiring of a session and the pure presentation values the command line prints.
        .target(name: "TVCore", dependencies: ["COpenSSL", "CZlib", "CTVShims", "TVHome", "FlowStore", "Capture", "Wire", "LocalCA", "ControlChannel", "Settings", "SetupActions", "Recording", "HTTPReading", "Proxy", "Tunnel", "FlowTerms", "FlowFilter", "ProgramLookup", "TrustStore"]),

        // Micro-benchmarks of tv's own hot paths (Scripts/bench).
        .executableTarget(name: "tv-bench", dependencies: ["COpenSSL", "CTVShims", "LocalCA", "Recording", "Wire", "FlowStore", "FlowTerms", "TVCore", "TVHome"]),

        // The one durable settings record ($TV_HOME/settings.json) and the live-session seam.
        .target(name: "Settings", dependencies: ["TVHome"]),
        // Asks a trust store, now, whether our root is installed and usable for TLS.
        .target(name: "TrustStore", dependencies: ["COpenSSL", "CTVShims", "LocalCA", "TVHome"]),
        // The stage machine and every sentence of the setup flow (pure; no I/O).
        .target(name: "CertificateSetup", dependencies: ["TrustStore", "TVHome"]),
        // The I/O around the stage machine: reading facts, guarding inspection, remake, remove, trust --apply.
        .target(name: "SetupActions", dependencies: ["CertificateSetup", "TrustStore", "Settings", "LocalCA", "TVHome", "CTVShims"]),

        .executableTarget(name: "tv", dependencies: ["CommandLineParser", "TVHome", "LocalCA", "ControlChannel", "FlowStore", "TVCore",
                                                     "Settings", "TrustStore", "CertificateSetup", "SetupActions",
                                                     "Recording", "HTTPReading", "Proxy", "Tunnel", "FlowTerms", "FlowFilter", "Capture", "Web"],
                          linkerSettings: releaseLinkerSettings),

        .testTarget(name: "CommandLineParserTests", dependencies: ["CommandLineParser"]),
        .testTarget(name: "TVHomeTests", dependencies: ["TVHome"]),
        .testTarget(name: "LocalCATests", dependencies: ["LocalCA", "COpenSSL", "CTVShims", "TVHome"]),
        .testTarget(name: "CLITests", dependencies: ["tv", "Recording", "FlowStore", "FlowTerms", "TVHome", "CTVShims"]),
        .testTarget(name: "ControlChannelTests", dependencies: ["ControlChannel", "TVHome"]),
        .testTarget(name: "ProgramLookupTests", dependencies: ["ProgramLookup", "CTVShims", "FlowTerms"]),
        .testTarget(name: "FlowStoreTests", dependencies: ["FlowStore", "TVHome", "FlowTerms", "CTVShims"]),
        .testTarget(name: "SettingsTests", dependencies: ["Settings", "TVHome", "CTVShims"]),
        .testTarget(name: "TrustStoreTests", dependencies: ["TrustStore", "LocalCA"]),
        .testTarget(name: "CertificateSetupTests", dependencies: ["CertificateSetup", "TrustStore", "SetupActions", "TVHome", "LocalCA"]),
        .testTarget(name: "SetupCommandTests", dependencies: ["tv", "LocalCA", "TVHome", "CTVShims"]),
        .testTarget(name: "TVCoreTests", dependencies: ["Tunnel", "TVCore", "FlowFilter", "FlowStore", "Recording", "HTTPReading", "FlowTerms", "ControlChannel", "TVHome", "Capture", "Settings", "ProgramLookup", "CTVShims"]),
        .testTarget(name: "RecordingTests", dependencies: ["Recording", "FlowStore", "TVHome", "FlowTerms", "CTVShims"]),
        .testTarget(name: "HTTPReadingTests", dependencies: ["HTTPReading", "Recording", "FlowTerms", "CTVShims"]),
        .testTarget(name: "WireTests", dependencies: ["Wire"]),
        .testTarget(name: "FlowFilterTests", dependencies: ["FlowFilter"]),
        // `tv web`'s security decision with exact values, and the embedded pages matching their sources
        // (the server through real curl and headless Chromium: RunTests' WebRunTests).
        .testTarget(name: "WebTests", dependencies: ["Web"]),
        // The pcapng encoder, the packet classifier and the capture writer, read back by tshark/capinfos.
        .testTarget(name: "CaptureTests", dependencies: ["Capture", "FlowStore", "FlowTerms", "TVHome", "Settings", "Wire", "CTVShims"]),
        // Vectors/: RFC 9001 and RFC 9369 Appendix A (QUIC Initial protection), read at run time.
        .testTarget(name: "TunnelTests", dependencies: ["Tunnel", "Proxy", "Wire", "COpenSSL", "CTVShims", "FlowTerms", "Capture", "ProgramLookup"], exclude: ["Vectors"]),
        // Namespaces, a TUN, nginx and dnsmasq: `tv exec`, `--mode tun`, `--mode transparent` (root only).
        .testTarget(name: "TunnelIntegrationTests", dependencies: ["tv", "Tunnel", "Proxy", "CTVShims", "Wire", "FlowStore", "FlowTerms"]),
        .testTarget(name: "ProxyTests", dependencies: ["Proxy", "Wire", "LocalCA", "COpenSSL", "CTVShims", "TVHome", "FlowTerms"]),
        // Issues 4 and 5 end to end through the built `tv` (tv run, flows, turns, …) with real
        // clients and servers; Shared/ links the CLITests and ProxyTests helpers it reuses.
        .testTarget(name: "RunTests", dependencies: ["tv", "LocalCA", "CTVShims"], exclude: ["Browser"]),
    ],
    swiftLanguageModes: [.v6]
)

/// Each function of tv's own modules in a section of its own in the release build, so the
/// linker's `--symbol-ordering-file` (above) can move the functions a resting `tv run` and its
/// first request execute together, one by one. Without it swiftc puts a whole source file's
/// functions in one `.text` section, lld can only move the file, and the ~2,900 ordered functions
/// (~1 MiB) lay spread over 7 MiB of `.text` (the Swift and C libraries' archives are already
/// built this way).
for target in package.targets where target.type != .system && target.type != .test {
    if target.name == "CTVShims" {
        target.cSettings = (target.cSettings ?? []) + [.unsafeFlags(["-ffunction-sections"], .when(configuration: .release))]
    } else {
        target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-Xfrontend", "-function-sections"], .when(configuration: .release))]
    }
}
