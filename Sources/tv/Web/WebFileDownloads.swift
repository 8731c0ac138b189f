import Foundation
import TVCore
import Web
#if canImport(Glibc)
import Glibc
#endif

/// The downloads of `tv web` that a command writes to a file (`-o FILE`): HAR (`tv export har`)
/// and the audit bundle (`tv audit bundle`). The command writes into a fresh folder of its own
/// (0700), the file is opened, then removed with its folder, and the open file is streamed:
/// nothing is left on disk, and a file of any size is never read into memory whole.
struct WebFileDownload: Sendable, Equatable {
    /// What is written.
    enum Source: Sendable, Equatable {
        /// One flow's conversation as HAR: `tv export har ID`.
        case flowHAR(Int64)
        /// The flows the Timeline's filters select (the `tv flows` options given), as HAR:
        /// `tv export har ID… [--filter EXPR]` of the flows `tv flows --json OPTIONS` lists,
        /// `requests` (a filter expression) picking their requests.
        case timelineHAR(options: [String], requests: String?)
        /// An audit session's evidence: `tv audit bundle ID --yes [--no-content] [--no-keys]`;
        /// nil: the query's value was neither yes nor no (refused before anything is written).
        case auditBundle(Int64, content: Bool?, keys: Bool?)
    }

    var source: Source
    /// The file name offered to the browser (`Content-Disposition`, RFC 6266).
    var name: String
    var contentType: String

    /// The most flows one Timeline HAR holds; a filter selecting more is refused with a sentence.
    static let timelineFlowLimit = 10_000

    /// The download a request names, or nil when its path is not one (a pure decision over the
    /// path after `/api/`, the method and the query):
    /// - `GET /api/flows/ID/har`
    /// - `GET /api/har?host=&program=&status=&since=&from=&to=&filter=` (the Timeline's filters,
    ///   as `GET /api/flows` takes them)
    /// - `GET /api/audit/sessions/ID/bundle[?content=no][&keys=no]`
    static func route(_ parts: [String], method: String, query: [String: String]) -> WebFileDownload? {
        guard method == "GET" || method == "HEAD" else { return nil }
        if parts.count == 3, parts[0] == "flows", parts[2] == "har", let id = Int64(parts[1]), id > 0 {
            return WebFileDownload(source: .flowHAR(id), name: "flow-\(id).har", contentType: "application/json")
        }
        if parts == ["har"] {
            // The flow filters pick the flows; `filter` picks their requests, as `tv export har
            // --filter` does (it picked flows, so `~c 404` found no flow where the command
            // wrote three entries: a trial).
            let names = WebAPI.flowFilters.filter { $0 != "limit" && $0 != "after" && $0 != "filter" }
            let options = names.compactMap { name in query[name].map { "--\(name)=\($0)" } }
            return WebFileDownload(source: .timelineHAR(options: options, requests: query["filter"]), name: "timeline.har", contentType: "application/json")
        }
        if parts.count == 4, parts[0] == "audit", parts[1] == "sessions", parts[3] == "bundle", let id = Int64(parts[2]), id > 0 {
            return WebFileDownload(source: .auditBundle(id, content: includes(query["content"]), keys: includes(query["keys"])),
                                   name: "audit-session-\(id).tar.gz", contentType: "application/gzip")
        }
        return nil
    }

    /// Whether a bundle's `content` or `keys` is included: absent or `yes` includes it, `no`
    /// leaves it out, and anything else is nil (refused: `keys=false` put the TLS secrets in the
    /// bundle, as everything but exactly `no` did: a trial).
    static func includes(_ value: String?) -> Bool? {
        switch value {
        case nil, "yes"?: return true
        case "no"?: return false
        default: return nil
        }
    }
}

extension WebAPI {
    /// Runs the download's command into a private folder and streams what it wrote; a refusal is
    /// the command's sentence (as every route's).
    func written(_ download: WebFileDownload) -> WebResponse {
        var words: [String]
        switch download.source {
        case .flowHAR(let id):
            words = ["export", "har", String(id)]
        case let .timelineHAR(options, requests):
            let ids: [Int64]
            switch selectedFlows(options) {
            case .failure(let refusal): return refusal.response
            case .success(let found): ids = found
            }
            guard !ids.isEmpty else {
                return WebResponse.error("No connection matches these filters, so there is no HAR to make; clear a filter and try again.", status: 404)
            }
            words = ["export", "har"] + ids.map(String.init) + (requests.map { ["--filter", $0] } ?? [])
        case .auditBundle(let id, let content?, let keys?):
            words = ["audit", "bundle", String(id), "--yes"] + (content ? [] : ["--no-content"]) + (keys ? [] : ["--no-keys"])
        case .auditBundle:
            return WebResponse.error("A bundle's content= and keys= take yes or no (nothing else); give keys=no to leave the TLS secrets out, content=no the kept content.", status: 400)
        }
        var template = Array((FileManager.default.temporaryDirectory.path + "/tv-web-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            return WebResponse.error("tv web could not make a private folder to write the file in; check that \(FileManager.default.temporaryDirectory.path) is writable.", status: 500)
        }
        let folder = String(cString: made)
        let file = folder + "/" + download.name
        defer {
            unlink(file)
            rmdir(folder)
        }
        let answer = run(words + ["-o", file])
        guard answer.status == 200 else { return answer }
        // Opened before the defer removes it: the stream reads the open file.
        guard let stream = WebFileStream(path: file) else {
            return WebResponse.error("The command wrote no file; run `tv \(words.prefix(2).joined(separator: " "))` to see why.", status: 500)
        }
        return WebResponse(status: 200, contentType: download.contentType, body: [],
                           headers: [("Content-Disposition", "attachment; filename=\"\(download.name)\"")], stream: stream)
    }

    /// A refused download: an answer already made (the command's sentence and status).
    struct Refusal: Error {
        let response: WebResponse
    }

    /// The ids of the flows `tv flows --json OPTIONS` lists, every page; more than
    /// `timelineFlowLimit` is refused.
    func selectedFlows(_ options: [String]) -> Result<[Int64], Refusal> {
        var ids: [Int64] = []
        var after: String?
        repeat {
            let page = run(["flows", "--json", "--limit=1000"] + options + (after.map { ["--after=\($0)"] } ?? []))
            guard page.status == 200 else { return .failure(Refusal(response: page)) }
            let object = (try? JSONSerialization.jsonObject(with: Data(page.body))) as? [String: Any] ?? [:]
            ids += (object["flows"] as? [[String: Any]] ?? []).compactMap { ($0["id"] as? NSNumber)?.int64Value }
            after = object["nextCursor"] as? String
            if ids.count > WebFileDownload.timelineFlowLimit {
                return .failure(Refusal(response: WebResponse.error(
                    "The Timeline's filters select more than \(WebFileDownload.timelineFlowLimit) connections; narrow them (a shorter interval) and download again.", status: 413)))
            }
        } while after != nil
        return .success(ids)
    }
}
