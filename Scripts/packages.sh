# Sourced by Scripts/run, Scripts/install, Scripts/test and Scripts/bench: installs missing Debian
# packages and builds tv.
# Usage: ensure_packages PKG...   (apt-get update runs once, only when something is missing)

ensure_swift_on_path() {
    if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
        export PATH="/opt/swift/usr/bin:$PATH"
    fi
    command -v swift >/dev/null 2>&1 || { echo "tv: the Swift toolchain is not on PATH; install Swift 6 (swift.org) and try again." >&2; exit 1; }
}

ensure_packages() {
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    echo "Installing missing Debian packages: ${missing[*]}" >&2
    # tshark's package asks whether non-root users may capture; answer no, without a prompt.
    echo "wireshark-common wireshark-common/install-setuid boolean false" | $sudo debconf-set-selections 2>/dev/null || true
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# What building tv needs.
BUILD_PACKAGES=(libssl-dev libsqlite3-dev libpq-dev libnghttp2-dev zlib1g-dev libbrotli-dev libzstd-dev libidn2-dev libmicrohttpd-dev pkg-config openssl ca-certificates)
# What the tests use as real peers and cross-checks (python3-requests and nodejs: the runtimes
# with their own trusted-root lists, `tv ca trust --platform`; nghttp2-server, gzip, brotli, zstd, xxd: the
# fixture scripts in Scripts/fixtures that made the HTTP/2 captures and encoded bodies; ngtcp2-client and
# ngtcp2-server: a real QUIC client and server, for names read from QUIC Initial packets; jq and tshark:
# cross-checks of exports and capture files; tmux: drives `tv top` in a terminal of a chosen size;
# chromium, chromium-driver and python3-selenium: `tv web`'s pages in headless Chromium; wget, git,
# golang-go, default-jdk-headless, python3-venv: real runtimes through `tv exec --proxy` and
# `tv ca trust --doctor`; util-linux: unshare; postgresql: the scratch server the shared-store
# tests start, PostgresServer.swift; python3-prometheus-client: parses `tv run --metrics`;
# groff-base, bash-completion, zsh and fish: render the man pages and run or check the completion
# scripts; systemd: `systemd-analyze verify` of the unit, and systemd booted as PID 1 of a namespace to run it;
# util-linux's unshare, nsenter and setpriv, iproute2's ip: the namespaces of that test and of the package's;
# gdb: the stacks of a suite that runs past its deadline, Scripts/hung-suite-report).
TEST_PACKAGES=(python3 jq python3-requests nodejs curl nginx-light tmux libnss3-tools nghttp2-client nghttp2-server gzip brotli zstd xxd wrk iproute2 procps dnsmasq-base nftables tshark ngtcp2-client ngtcp2-server chromium chromium-driver python3-selenium wget git golang-go default-jdk-headless python3-venv util-linux postgresql python3-prometheus-client groff-base bash-completion zsh fish systemd gdb)
# What Scripts/package needs beside the build's: strip (binutils), dpkg-deb (dpkg), ldd (libc-bin).
PACKAGE_PACKAGES=(binutils dpkg libc-bin)
# Only for regenerating the TUN packet fixtures (Scripts/fixtures/capture_tunnel_packets.sh).
FIXTURE_PACKAGES=(tcpdump ethtool iputils-ping dnsmasq-base)

# Builds tv in release mode (what Scripts/run and Scripts/install use): .build/release/tv.
# Run from the repository's root; the compiler's output goes to standard error.
build_release_tv() {
    ensure_swift_on_path
    ensure_packages "${BUILD_PACKAGES[@]}"
    swift build -c release --product tv >&2
}
