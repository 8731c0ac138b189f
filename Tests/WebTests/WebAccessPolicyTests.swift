import Foundation
import Testing
@testable import Web

/// `tv web`'s security decision: request facts in, the exact decision out.
@Suite("tv web's access policy (issue 24)")
struct WebAccessPolicyTests {
    let token = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
    var policy: WebAccessPolicy { WebAccessPolicy(hosts: ["127.0.0.1:8081", "localhost:8081"], token: token) }

    func get(_ path: String = "/api/flows", host: String? = "127.0.0.1:8081", query: String? = nil, bearer: String? = nil) -> WebRequestFacts {
        WebRequestFacts(method: "GET", path: path, host: host, queryToken: query, bearerToken: bearer)
    }

    @Test func theHostMustBeAListeningName() {
        #expect(policy.decide(get(bearer: token)) == .allow)
        #expect(policy.decide(get(host: "LOCALHOST:8081", bearer: token)) == .allow)
        // DNS rebinding: a name that resolves to 127.0.0.1 is still not one of ours.
        #expect(policy.decide(get(host: "evil.example:8081", bearer: token)) == .refuse(.wrongHost("evil.example:8081")))
        #expect(policy.decide(get(host: "127.0.0.1", bearer: token)) == .refuse(.wrongHost("127.0.0.1")))
        #expect(policy.decide(get(host: "127.0.0.1:8082", bearer: token)) == .refuse(.wrongHost("127.0.0.1:8082")))
        #expect(policy.decide(get(host: nil, bearer: token)) == .refuse(.wrongHost(nil)))
        // The host is checked before anything else, even a right token, and for the pages too.
        #expect(policy.decide(get(host: "evil.example", query: token)) == .refuse(.wrongHost("evil.example")))
        #expect(policy.decide(get("/", host: "evil.example:8081")) == .refuse(.wrongHost("evil.example:8081")))
    }

    @Test func theAPINeedsTheToken() {
        #expect(policy.decide(get()) == .refuse(.noToken))
        #expect(policy.decide(get("/api")) == .refuse(.noToken))
        #expect(policy.decide(get(bearer: "f" + token.dropFirst())) == .refuse(.wrongToken))
        #expect(policy.decide(get(bearer: "short")) == .refuse(.wrongToken))
        #expect(policy.decide(get("/api/events", query: "nope")) == .refuse(.wrongToken))
        // In the query: only what cannot send a header, the event stream and the files.
        for path in ["/api/events", "/api/har", "/api/flows/7/har", "/api/flows/7/turns/2/raw", "/api/captures/3/file",
                     "/api/captures/decrypted/decrypted-20261204-101500.pcapng/file", "/api/audit/sessions/1/bundle"] {
            #expect(policy.decide(get(path, query: token)) == .allow, "\(path)")
        }
        for path in ["/api/flows", "/api/status", "/api/flows/7", "/api/settings", "/api/captures", "/api/har/x"] {
            #expect(policy.decide(get(path, query: token)) == .refuse(.noToken), "\(path)")
        }
        // A bearer decides over the query.
        #expect(policy.decide(get(query: token, bearer: "old")) == .refuse(.wrongToken))
    }

    @Test func thePagesNeedNoToken() {
        // tv's own HTML, CSS and JavaScript: the same for everyone, nothing recorded in them.
        for path in ["/", "/app.js", "/app.css", "/index.html", "/apiary"] {
            #expect(policy.decide(get(path)) == .allow, "\(path)")
        }
        #expect(policy.decide(get("/", query: "stale")) == .allow)
        // Read only: a POST to a page is no method it has (it answered 200: a trial).
        let post = WebRequestFacts(method: "POST", path: "/app.js", host: "127.0.0.1:8081", origin: "http://127.0.0.1:8081")
        #expect(policy.decide(post) == .refuse(.method("POST")))
    }

    @Test func scriptsAndPagesSendTheTokenAsABearer() {
        #expect(policy.decide(get("/api/flows", bearer: token)) == .allow)
        #expect(policy.decide(get("/api/flows", bearer: "wrong")) == .refuse(.wrongToken))
        let post = WebRequestFacts(method: "POST", path: "/api/settings", host: "127.0.0.1:8081", bearerToken: token)
        #expect(policy.decide(post) == .allow)
    }

    @Test func aChangeMustComeFromThisOrigin() {
        func post(origin: String?, site: String?, bearer: String? = nil) -> WebRequestFacts {
            WebRequestFacts(method: "POST", path: "/api/settings", host: "127.0.0.1:8081", bearerToken: bearer ?? token,
                            origin: origin, fetchSite: site)
        }
        #expect(policy.decide(post(origin: "http://127.0.0.1:8081", site: "same-origin")) == .allow)
        #expect(policy.decide(post(origin: "http://localhost:8081", site: nil)) == .allow)
        #expect(policy.decide(post(origin: nil, site: "same-origin")) == .allow)
        #expect(policy.decide(post(origin: "http://evil.example", site: "cross-site")) == .refuse(.crossOrigin("http://evil.example")))
        #expect(policy.decide(post(origin: "https://127.0.0.1:8081", site: nil)) == .refuse(.crossOrigin("https://127.0.0.1:8081")))
        #expect(policy.decide(post(origin: "null", site: nil)) == .refuse(.crossOrigin("null")))
        #expect(policy.decide(post(origin: nil, site: "same-site")) == .refuse(.crossOrigin("same-site")))
        // A foreign origin is refused whatever the credential, before it is looked at.
        #expect(policy.decide(post(origin: "http://evil.example", site: nil, bearer: "wrong")) == .refuse(.crossOrigin("http://evil.example")))
        // No token: refused as such, after the origin was found to be ours.
        let none = WebRequestFacts(method: "POST", path: "/api/settings", host: "127.0.0.1:8081", origin: "http://127.0.0.1:8081")
        #expect(policy.decide(none) == .refuse(.noToken))
        // A token in the URL never carries a POST.
        let queried = WebRequestFacts(method: "POST", path: "/api/settings", host: "127.0.0.1:8081", queryToken: token, origin: "http://127.0.0.1:8081")
        #expect(policy.decide(queried) == .refuse(.noToken))
    }

    @Test func onlyReadingAndChangingMethods() {
        for method in ["PUT", "DELETE", "OPTIONS", "TRACE", "CONNECT", "get"] {
            for path in ["/", "/api/flows"] {
                let facts = WebRequestFacts(method: method, path: path, host: "127.0.0.1:8081", bearerToken: token)
                #expect(policy.decide(facts) == .refuse(.method(method)))
            }
        }
        #expect(policy.decide(WebRequestFacts(method: "HEAD", path: "/api/flows", host: "127.0.0.1:8081", bearerToken: token)) == .allow)
        // A 405 names what is served (RFC 9110 §15.5.6).
        #expect(WebAccessPolicy.allowed("/") == "GET, HEAD" && WebAccessPolicy.allowed("/app.js") == "GET, HEAD")
        #expect(WebAccessPolicy.allowed("/api/settings") == "GET, HEAD, POST" && WebAccessPolicy.allowed("/api") == "GET, HEAD, POST")
    }

    @Test("a path with an empty, '.' or '..' segment is refused before the token is looked at: `//api/settings` (and `/%2Fapi/…`, which libmicrohttpd decodes to it) answered without the token (a trial)")
    func uncanonicalPathsAreRefused() {
        for path in ["//api/settings", "//api/flows/6/har", "/./api/settings", "/x/../api/settings", "/api//flows", "/api/flows/..", "//", "/api/."] {
            #expect(policy.decide(WebRequestFacts(method: "GET", path: path, host: "127.0.0.1:8081")) == .refuse(.uncanonicalPath), "\(path)")
            #expect(policy.decide(WebRequestFacts(method: "GET", path: path, host: "127.0.0.1:8081", bearerToken: token)) == .refuse(.uncanonicalPath), "\(path)")
        }
        for path in ["/", "/app.js", "/api", "/api/", "/api/settings", "/api/flows/6/har", "/api/captures/decrypted/decrypted-1.pcapng/file"] {
            #expect(WebAccessPolicy.isCanonical(path), "\(path)")
        }
        #expect(policy.decide(WebRequestFacts(method: "GET", path: "/api/", host: "127.0.0.1:8081")) == .refuse(.noToken))
        // A target that is not a path at all is said as that (an absolute URL was told "an empty,
        // '.' or '..' segment": a trial).
        for target in ["http://127.0.0.1:8081/api/status", "*", "api/flows", ""] {
            #expect(policy.decide(WebRequestFacts(method: "GET", path: target, host: "127.0.0.1:8081", bearerToken: token)) == .refuse(.notAPath), "\(target)")
        }
        #expect(WebRefusal.notAPath.status == 400)
        #expect(WebRefusal.notAPath.message == "The request target is not a path beginning with '/' (an absolute URL or '*'), which tv web, not a proxy, does not take; ask for the path alone.")
        #expect(WebRefusal.uncanonicalPath.status == 400)
        #expect(WebRefusal.uncanonicalPath.message == "The path has an empty, '.' or '..' segment or a control byte, which tv web does not read; ask for it without them, as its pages do.")
        // A control byte, escaped as `WebServer.unescape` leaves it or raw: `%00` cut the path
        // short, and `/api/status%00junk` was served as `/api/status` (a trial).
        for path in ["/api/flows/1%00xyz", "/app.js%00.html", "/api/status%1f", "/x%7F", "/x%7f", "/a\u{1}b"] {
            #expect(!WebAccessPolicy.isCanonical(path), "\(path)")
        }
        for path in ["/api/flows?q=%20", "/a%2", "/a%25", "/a%20b"] { #expect(WebAccessPolicy.isCanonical(path), "\(path)") }
        // What libmicrohttpd hands tv: everything decoded but an escaped control byte.
        func unescaped(_ text: String) -> String {
            var bytes = Array(text.utf8CString)
            let count = bytes.withUnsafeMutableBufferPointer { WebServer.unescape(nil, nil, $0.baseAddress) }
            return String(cString: Array(bytes.prefix(count)) + [0])
        }
        #expect(unescaped("/api/flows/1%00xyz") == "/api/flows/1%00xyz")
        #expect(unescaped("/a%20b%2Fc%7e%7F%2") == "/a b/c~%7F%2")
    }

    @Test func twoHostLinesAreRefusedWhicheverComesFirst() {
        // RFC 9112 §3.2: 400; the first line's value was the one judged (a trial's second
        // `Host: evil.example` after ours was served).
        let doubled = WebRequestFacts(method: "GET", path: "/api/flows", host: "127.0.0.1:8081", bearerToken: token, hostLines: 2)
        #expect(policy.decide(doubled) == .refuse(.duplicateHost))
        #expect(WebRefusal.duplicateHost.status == 400)
        #expect(WebRefusal.duplicateHost.message == "The request has more than one Host header, which RFC 9112 §3.2 answers with 400; send one.")
        #expect(WebRequestFacts(method: "GET", path: "/", host: "127.0.0.1:8081").hostLines == 1)
        #expect(WebRequestFacts(method: "GET", path: "/", host: nil).hostLines == 0)
    }

    @Test func refusalsSayWhatToDo() {
        #expect(WebRefusal.wrongHost("evil.example").status == 421)
        #expect(WebRefusal.noToken.status == 403)
        #expect(WebRefusal.wrongToken.status == 403)
        #expect(WebRefusal.crossOrigin(nil).status == 403)
        #expect(WebRefusal.method("PUT").status == 405)
        #expect(WebRefusal.wrongHost("evil.example").message == "tv web does not answer to the name 'evil.example'; open the URL `tv web` printed.")
        #expect(WebRefusal.crossOrigin("http://evil.example").message == "A change was asked from another origin (http://evil.example); only tv web's own pages may change settings.")
        #expect(WebRefusal.noToken.message == "This needs the token in the URL `tv web` printed: open that URL once in this browser (its pages keep the token for this address and port), or send `Authorization: Bearer TOKEN`.")
    }

    @Test func theListenersNames() {
        #expect(WebListener(socket: -1, address: "127.0.0.1", port: 8081).hostNames == ["127.0.0.1:8081", "localhost:8081"])
        #expect(WebListener(socket: -1, address: "::1", port: 9000).hostNames == ["[::1]:9000", "localhost:9000"])
        #expect(WebListener(socket: -1, address: "192.0.2.7", port: 8081).hostNames == ["192.0.2.7:8081"])
        // On every address: each of the machine's addresses of the family, numeric only (a
        // rebinding attacker's name is still refused), localhost through loopback.
        let machine = ["127.0.0.1", "192.0.2.7", "10.1.2.3", "::1", "2001:db8::5", "fe80::1"]
        #expect(WebListener.hostNames(address: "0.0.0.0", port: 8081, interfaceAddresses: machine)
                == ["127.0.0.1:8081", "localhost:8081", "192.0.2.7:8081", "10.1.2.3:8081"])
        #expect(WebListener.hostNames(address: "::", port: 8081, interfaceAddresses: machine)
                == ["[::1]:8081", "localhost:8081", "[2001:db8::5]:8081", "[fe80::1]:8081"])
        #expect(WebListener.hostNames(address: "0.0.0.0", port: 8081, interfaceAddresses: []) == [])
        let policy = WebAccessPolicy(hosts: WebListener.hostNames(address: "0.0.0.0", port: 8081, interfaceAddresses: machine), token: "t")
        #expect(policy.decide(WebRequestFacts(method: "GET", path: "/", host: "192.0.2.7:8081", bearerToken: "t")) == .allow)
        #expect(policy.decide(WebRequestFacts(method: "GET", path: "/", host: "0.0.0.0:8081", bearerToken: "t")) == .refuse(.wrongHost("0.0.0.0:8081")))
        #expect(policy.decide(WebRequestFacts(method: "GET", path: "/", host: "evil.example:8081", bearerToken: "t")) == .refuse(.wrongHost("evil.example:8081")))
        // The real machine's: loopback at least.
        #expect(WebListener.interfaceAddresses().contains("127.0.0.1"))
    }

    @Test func theHeadersEveryAnswerCarries() {
        let csp = WebResponse.standardHeaders.first { $0.0 == "Content-Security-Policy" }?.1
        #expect(csp == "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
        #expect(WebResponse.error("No.", status: 404).body == Array(#"{"error":"No."}"#.utf8))
    }
}

/// The embedded pages are the files in Sources/Web/web (Scripts/web-assets was run), and they
/// keep the Content-Security-Policy's promises: no inline script or style, nothing from elsewhere.
@Suite("tv web's embedded pages")
struct WebAssetsTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/Web/web")

    @Test func theEmbeddedFilesAreTheSources() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.sources.path).sorted()
        #expect(WebPages.names == names.map { "/" + $0 })
        for name in names {
            let text = try String(contentsOf: Self.sources.appendingPathComponent(name), encoding: .utf8)
            // The literal ends before the file's last newline.
            #expect(WebPages.text("/" + name).map { $0 + "\n" } == text, "run Scripts/web-assets after editing \(name)")
        }
    }

    @Test func nothingInlineNothingFromElsewhere() throws {
        let html = try #require(WebPages.text("/index.html"))
        #expect(!html.contains("<script>"))
        #expect(!html.contains("style="))
        #expect(html.range(of: #" on[a-z]+="#, options: .regularExpression) == nil, "no inline event handlers")
        for name in WebPages.names {
            let text = try #require(WebPages.text(name))
            #expect(!text.contains("http://") || text.contains("http://www.w3.org/2000/svg"), "\(name) names another origin")
            #expect(!text.contains("https://"), "\(name) names another origin")
            #expect(!text.contains("innerHTML"), "\(name) sets HTML from text")
        }
    }
}

/// What `tv web` says when it cannot listen: the address, when the address is the problem.
@Suite struct WebListenerErrorTests {
    @Test func anAddressThatIsNotThisMachinesIsSaidAsSuch() {
        #expect(WebListenerError.bind(address: "10.255.255.1", port: 18185, errno: EADDRNOTAVAIL).message
                == "Could not listen on 10.255.255.1:18185: 10.255.255.1 is not an address of this machine; give --listen one of its own, such as 127.0.0.1:18185.")
        #expect(WebListenerError.bind(address: "127.0.0.1", port: 80, errno: EADDRINUSE).message(option: "--web-listen")
                == "Could not listen on 127.0.0.1:80 (Address already in use); choose another port with --web-listen 127.0.0.1:PORT.")
        #expect(WebListenerError.bind(address: "::2", port: 18485, errno: EADDRNOTAVAIL).message.hasPrefix("Could not listen on [::2]:18485: ::2 is not"))
    }
}
