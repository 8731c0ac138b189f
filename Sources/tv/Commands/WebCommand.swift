import CommandLineParser
import Foundation
import Synchronization
import TVHome
import Web
#if canImport(Glibc)
import Glibc
#endif

/// `tv web`: every screen in a browser on this machine (`WebAPI` for the routes, `WebServer` for
/// HTTP and its security decision). `tv run --web` serves the same beside a session.
enum WebCommand {
    static let listenHelp = "Where to serve (default 127.0.0.1:8081; loopback unless you say otherwise; port 0: any free one)."
    static let spec = CommandSpec(
        name: "web", summary: "Serve the screens (Dashboard, Timeline, Flow Inspector, …) to a browser on this machine, live.",
        discussion: "Prints one URL with a random token; opening it once, the pages keep the token in the browser's storage for this address and port (never a cookie, which the browser would send to every port of the address) and drop it from the address bar. Requests naming another host (DNS rebinding) or changing something from another origin (CSRF) are refused; scripts send `Authorization: Bearer TOKEN`. Runs until Ctrl-C or SIGTERM. The JSON API under /api/ is listed in the README.",
        options: [OptionSpec("listen", value: "HOST:PORT", help: listenHelp)])

    static let handlers: [String: @Sendable (Invocation) throws -> Int32] = ["web": run]

    static let defaultListen = "127.0.0.1:8081"

    static func run(_ inv: Invocation) throws -> Int32 {
        let home = try inv.home()
        let served = try start(inv, home: home, listen: inv.command.value("listen"))
        inv.console.line(served.url)
        // Served anyway (a session may make it), but said: a mistyped --data-dir showed only
        // empty pages (a trial).
        if !home.exists { inv.console.note(TVHomeError.missing(path: home.path).message) }
        Terminal.unblock([SIGINT, SIGTERM])
        let stop = Atomic<Int32>(0)
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let sources = [SIGINT, SIGTERM].map { sig -> DispatchSourceSignal in
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { stop.store(sig, ordering: .relaxed) }
            source.resume()
            return source
        }
        defer { sources.forEach { $0.cancel() } }
        while stop.load(ordering: .relaxed) == 0 { usleep(100_000) }
        served.stop()
        inv.console.note("tv web stopped.")
        return 0
    }

    /// A running server and the URL that opens it.
    struct Served: Sendable {
        let server: WebServer
        /// `http://127.0.0.1:8081/?token=…`
        let url: String
        func stop() {
            WebEvents.stopping.store(true, ordering: .relaxed)
            if !server.stop() {
                FileHandle.standardError.write(Data("tv web: an answer was still being worked out (a filter over kept bodies?); it was not waited for.\n".utf8))
            }
        }
    }

    /// Opens the listener and starts serving `home`'s screens; a listener beyond loopback is
    /// warned about on standard error (anyone who can reach it and learns the token reads the history).
    /// - Throws: `WebStartError` (a bad --listen, a port in use, libmicrohttpd refusing);
    ///   `MissingLibrary` when libmicrohttpd12 is not installed.
    /// - Parameter option: the option `listen` came from, for the sentences (`--web-listen` under `tv run --web`).
    static func start(_ inv: Invocation, home: TVHome, listen: String?, option: String = "--listen") throws -> Served {
        let text = listen ?? defaultListen
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else {
            throw WebStartError(message: "\(option) takes HOST:PORT (127.0.0.1:8081, [::1]:8081), not '\(text)'.")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let listener: WebListener
        do { listener = try WebListener.open(address: host, port: port) } catch let e as WebListenerError {
            throw WebStartError(message: e.message(option: option))
        }
        var random = SystemRandomNumberGenerator()
        let token = (0..<4).map { _ in String(random.next() as UInt64, radix: 16) }.map { String(repeating: "0", count: 16 - $0.count) + $0 }.joined()
        let policy = WebAccessPolicy(hosts: listener.hostNames, token: token)
        let api = WebAPI(home: home, environment: inv.environment)
        let server: WebServer
        do {
            server = try WebServer(socket: listener.socket, policy: policy, route: { api.answer($0) })
        } catch let missing as MissingLibrary {
            throw missing
        } catch {
            throw WebStartError(message: "The web server would not start on \(listener.authority); try another port with \(option).")
        }
        if !(listener.address.hasPrefix("127.") || listener.address == "::1") {
            inv.console.note("tv: warning: tv web listens on \(listener.authority): anyone who can reach it and learns the URL reads your history; listen on 127.0.0.1 unless you mean it.")
        }
        guard listener.isWildcard else { return Served(server: server, url: "http://\(listener.authority)/?token=\(token)") }
        // On every address: the URL through loopback, and the addresses it answers to from elsewhere.
        let loopback = WebListener.authority(of: listener.address == "::" ? "::1" : "127.0.0.1", port: listener.port)
        let others = policy.hosts.filter { $0 != loopback && !$0.hasPrefix("localhost:") }.sorted()
        if !others.isEmpty {
            inv.console.note("tv: it answers at \(others.map { "http://\($0)/" }.joined(separator: ", ")) too, with the same token.")
        }
        return Served(server: server, url: "http://\(loopback)/?token=\(token)")
    }
}

/// Why `tv web` did not start: one sentence.
struct WebStartError: UserFacingError {
    let message: String
    var exitCode: Int32 { 1 }
}
