import CMicroHTTPD
import Foundation
import CTVShims
import Synchronization
import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// `tv web`'s HTTP server: libmicrohttpd (Debian's `libmicrohttpd12`) on a listening socket this
/// type opens, one thread per connection (so a Server-Sent Events stream may wait for its next
/// event), at most `connectionLimit` at once. Every request goes through `WebAccessPolicy`
/// first; only an allowed one reaches `route`. The driver decides nothing itself.
public final class WebServer: Sendable {
    /// The largest request body read (a settings change is a few bytes); larger: 413.
    public static let maximumBody = 65_536
    /// Connections served at once (each holds a thread; its stack is reserved, not touched,
    /// until used). A trial held the old 64 with 70 idle sockets from another local process and
    /// the pages got no answer for two minutes.
    public static let connectionLimit: UInt32 = 256
    /// Seconds a connection may sit idle before libmicrohttpd closes it (was 120, the rest of
    /// that two minutes): an open page's event stream writes at least every 10 s
    /// (`WebEvents.keepAliveSeconds`), so it never idles this long.
    public static let idleTimeoutSeconds: UInt32 = 30

    public let policy: WebAccessPolicy
    let route: @Sendable (WebRequest) -> WebResponse
    /// The daemon handle's bit pattern (OpaquePointer is not Sendable); 0 once stopped.
    private let daemon = Mutex<Int>(0)

    /// Starts serving on `socket` (bound and listening; the server owns it from now on).
    /// - Throws: `MissingLibrary` when libmicrohttpd.so.12 cannot be opened (the socket is closed);
    ///   `WebServerError.start` when libmicrohttpd refuses to start.
    public init(socket: Int32, policy: WebAccessPolicy, route: @escaping @Sendable (WebRequest) -> WebResponse) throws {
        if let why = tv_lazy_library_open(TV_LAZY_LIBMICROHTTPD) {
            close(socket)
            throw MissingLibrary.web(reason: String(cString: why))
        }
        self.policy = policy
        self.route = route
        let flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_THREAD_PER_CONNECTION.rawValue
        let completed: MHD_RequestCompletedCallback = { _, _, state, _ in
            if let state, let raw = state.pointee {
                Unmanaged<UploadState>.fromOpaque(raw).release()
                state.pointee = nil
            }
        }
        let options: [CVarArg] = [
            Int32(truncatingIfNeeded: MHD_OPTION.UNESCAPE_CALLBACK.rawValue), unsafeBitCast(WebServer.unescape, to: OpaquePointer.self), Int(0),
            Int32(truncatingIfNeeded: MHD_OPTION.LISTEN_SOCKET.rawValue), socket,
            Int32(truncatingIfNeeded: MHD_OPTION.CONNECTION_LIMIT.rawValue), Self.connectionLimit,
            Int32(truncatingIfNeeded: MHD_OPTION.CONNECTION_TIMEOUT.rawValue), Self.idleTimeoutSeconds,
            Int32(truncatingIfNeeded: MHD_OPTION.NOTIFY_COMPLETED.rawValue), unsafeBitCast(completed, to: OpaquePointer.self), Int(0),
            Int32(truncatingIfNeeded: MHD_OPTION.END.rawValue),
        ]
        let me = Unmanaged.passUnretained(self).toOpaque()
        let daemon = withVaList(options) { list in
            MHD_start_daemon_va(flags, 0, nil, nil, WebServer.access, me, list)
        }
        guard let daemon else {
            close(socket)
            throw WebServerError.start
        }
        self.daemon.withLock { $0 = Int(bitPattern: UnsafeRawPointer(daemon)) }
    }

    /// libmicrohttpd's unescaping of the path and query (`MHD_OPTION_UNESCAPE_CALLBACK`), but an
    /// escaped control byte (`%00`…`%1F`, `%7F`) is left as it was sent: decoded, `%00` ended the
    /// C string the path reaches tv as, so `/api/status%00junk` was served as `/api/status` (a
    /// trial); left escaped, the path is refused (`WebAccessPolicy.isCanonical`). In place, never
    /// longer (the option's contract).
    static let unescape: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutablePointer<CChar>?) -> Int = { _, _, text in
        guard let text else { return 0 }
        func hex(_ c: CChar) -> UInt8? {
            switch UInt8(bitPattern: c) {
            case 0x30...0x39: return UInt8(bitPattern: c) - 0x30
            case 0x41...0x46: return UInt8(bitPattern: c) - 0x41 + 10
            case 0x61...0x66: return UInt8(bitPattern: c) - 0x61 + 10
            default: return nil
            }
        }
        var read = 0, write = 0
        while text[read] != 0 {
            if text[read] == 0x25, let high = hex(text[read + 1]), let low = hex(text[read + 2]) {
                let byte = high << 4 | low
                if byte >= 0x20 && byte != 0x7F {
                    text[write] = CChar(bitPattern: byte)
                    write += 1
                    read += 3
                    continue
                }
            }
            text[write] = text[read]
            write += 1
            read += 1
        }
        text[write] = 0
        return write
    }

    /// The token of an `Authorization` header's value: `Bearer TOKEN`, the scheme's case aside
    /// (RFC 9110 §11.1: auth schemes are case-insensitive), nil for any other scheme.
    static func bearerToken(_ value: String) -> String? {
        let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return parts[1].trimmingCharacters(in: .whitespaces)
    }

    /// Stops listening and waits for every connection's thread (streams end within a poll), at
    /// most `seconds`: an answer still being computed (a filter whose regex backtracks for
    /// minutes over a kept body) is not waited for, and ends with the process (a trial's
    /// `tv run --web` did not exit on Ctrl-C while one ran). Returns whether every thread ended.
    @discardableResult
    public func stop(waitingAtMost seconds: Double = 2) -> Bool {
        let address = daemon.withLock { address in defer { address = 0 }; return address }
        guard address != 0 else { return true }
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            if let handle = OpaquePointer(bitPattern: address) { MHD_stop_daemon(handle) }
            done.signal()
        }
        thread.name = "tv web stop"
        thread.start()
        return done.wait(timeout: .now() + seconds) == .success
    }

    /// A request's body as it arrives, kept between libmicrohttpd's calls of `access`.
    final class UploadState {
        var body: [UInt8] = []
        var tooLarge = false
    }

    /// libmicrohttpd's access handler: first call makes the upload state, the next ones gather
    /// the body, the last one decides and answers.
    private static let access: MHD_AccessHandlerCallback = { cls, connection, url, method, _, upload, uploadSize, state in
        guard let cls, let connection, let state, let uploadSize else { return .NO }
        let server = Unmanaged<WebServer>.fromOpaque(cls).takeUnretainedValue()
        if state.pointee == nil {
            state.pointee = Unmanaged.passRetained(UploadState()).toOpaque()
            return .YES
        }
        let upload_ = Unmanaged<UploadState>.fromOpaque(state.pointee!).takeUnretainedValue()
        if uploadSize.pointee > 0 {
            if let upload, upload_.body.count + uploadSize.pointee <= WebServer.maximumBody {
                upload_.body += UnsafeRawBufferPointer(start: UnsafeRawPointer(upload), count: uploadSize.pointee)
            } else {
                upload_.tooLarge = true
            }
            uploadSize.pointee = 0
            return .YES
        }
        let methodText = method.map { String(cString: $0) } ?? ""
        let path = url.map { String(cString: $0) } ?? "/"
        let answer = server.answer(connection: connection, method: methodText, path: path, upload: upload_)
        return WebServer.queue(answer, on: connection)
    }

    private func answer(connection: OpaquePointer, method: String, path: String, upload: UploadState) -> WebResponse {
        let header = { (name: String) in Self.value(connection, .HEADER_KIND, name) }
        var query = Self.arguments(connection)
        let facts = WebRequestFacts(
            method: method, path: path, host: header("Host"), queryToken: query["token"],
            bearerToken: header("Authorization").flatMap(WebServer.bearerToken),
            origin: header("Origin"), fetchSite: header("Sec-Fetch-Site"), hostLines: Self.count(connection, header: "Host"))
        switch policy.decide(facts) {
        case .refuse(let refusal):
            // A browser visiting a page gets a page; scripts and the API get JSON.
            var response = method == "GET" && !WebAccessPolicy.isAPI(path) && header("Accept")?.contains("text/html") == true
                ? WebResponse.errorPage(refusal.message, status: refusal.status)
                : WebResponse.error(refusal.message, status: refusal.status)
            if case .method = refusal { response.headers.append(("Allow", WebAccessPolicy.allowed(path))) }
            return response
        case .allow:
            if upload.tooLarge { return WebResponse.error("The request's body is larger than \(Self.maximumBody) bytes; send less.", status: 413) }
            query["token"] = nil
            // A HEAD is answered as its GET: libmicrohttpd sends the head alone, with the GET's
            // Content-Length (RFC 9110 §9.3.2; emptying the body here said 0: a trial).
            return route(WebRequest(method: method, path: path, query: query, body: upload.body))
        }
    }

    private static func queue(_ answer: WebResponse, on connection: OpaquePointer) -> MHD_Result {
        let response: OpaquePointer?
        if let stream = answer.stream {
            let box = Unmanaged.passRetained(StreamState(stream)).toOpaque()
            response = MHD_create_response_from_callback(UInt64.max, 4_096, readStream, box, freeStream)
        } else {
            response = answer.body.withUnsafeBytes { raw in
                MHD_create_response_from_buffer(raw.count, UnsafeMutableRawPointer(mutating: raw.baseAddress), .RESPMEM_MUST_COPY)
            }
        }
        guard let response else { return .NO }
        defer { MHD_destroy_response(response) }
        for (name, value) in WebResponse.standardHeaders + [("Content-Type", answer.contentType)] + answer.headers {
            _ = MHD_add_response_header(response, name, value)
        }
        return MHD_queue_response(connection, UInt32(answer.status), response)
    }

    /// A stream's bytes not yet handed to libmicrohttpd.
    final class StreamState {
        let stream: WebStream
        var pending: [UInt8] = []
        init(_ stream: WebStream) { self.stream = stream }
    }

    private static let readStream: MHD_ContentReaderCallback = { cls, _, buffer, max in
        guard let cls, let buffer else { return -2 }
        let state = Unmanaged<StreamState>.fromOpaque(cls).takeUnretainedValue()
        while state.pending.isEmpty {
            guard let next = state.stream.next() else { return -1 }  // MHD_CONTENT_READER_END_OF_STREAM
            state.pending = next
        }
        let n = min(max, state.pending.count)
        state.pending.withUnsafeBytes { raw in
            UnsafeMutableRawPointer(buffer).copyMemory(from: raw.baseAddress!, byteCount: n)
        }
        state.pending.removeFirst(n)
        return n
    }

    private static let freeStream: MHD_ContentReaderFreeCallback = { cls in
        guard let cls else { return }
        Unmanaged<StreamState>.fromOpaque(cls).release()
    }

    static func value(_ connection: OpaquePointer, _ kind: MHD_ValueKind, _ name: String) -> String? {
        MHD_lookup_connection_value(connection, kind, name).map { String(cString: $0) }
    }

    /// The query's parameters (first value of each name), as libmicrohttpd decoded them.
    /// The query's parameters while libmicrohttpd hands them over.
    private final class Gathered { var values: [String: String] = [:] }

    /// How many header lines named `name` (ASCII case aside) the request has.
    static func count(_ connection: OpaquePointer, header name: String) -> Int {
        final class Counter { let name: String; var count = 0; init(_ name: String) { self.name = name } }
        let counter = Counter(name.lowercased())
        let iterator: MHD_KeyValueIterator = { cls, _, key, _ in
            guard let cls, let key else { return .YES }
            let c = Unmanaged<Counter>.fromOpaque(cls).takeUnretainedValue()
            if String(cString: key).lowercased() == c.name { c.count += 1 }
            return .YES
        }
        withExtendedLifetime(counter) {
            _ = MHD_get_connection_values(connection, .HEADER_KIND, iterator, Unmanaged.passUnretained(counter).toOpaque())
        }
        return counter.count
    }

    static func arguments(_ connection: OpaquePointer) -> [String: String] {
        let gathered = Gathered()
        let iterator: MHD_KeyValueIterator = { cls, _, key, value in
            guard let cls, let key else { return .YES }
            let g = Unmanaged<Gathered>.fromOpaque(cls).takeUnretainedValue()
            let name = String(cString: key)
            if g.values[name] == nil { g.values[name] = value.map { String(cString: $0) } ?? "" }
            return .YES
        }
        withExtendedLifetime(gathered) {
            _ = MHD_get_connection_values(connection, .GET_ARGUMENT_KIND, iterator, Unmanaged.passUnretained(gathered).toOpaque())
        }
        return gathered.values
    }
}

/// Why the server did not start.
public enum WebServerError: Error, Equatable {
    /// libmicrohttpd would not start on the socket.
    case start
}
