/// The embedded pages (`WebAssets`, generated from Sources/Web/web by Scripts/web-assets).
public enum WebPages {
    /// The page or file at `path` (`/` is `index.html`); 404 for anything else.
    public static func asset(_ path: String) -> WebResponse {
        let name = path == "/" ? "/index.html" : path
        guard let file = WebAssets.files[name] else {
            return WebResponse.error("There is no page \(path) in tv web.", status: 404)
        }
        return WebResponse(status: 200, contentType: file.contentType, body: Array(file.text.utf8))
    }

    /// The names of the embedded files (`/index.html`, `/app.js`, …).
    public static var names: [String] { WebAssets.files.keys.sorted() }

    /// The text of an embedded file, nil when there is none (tests compare it with the source).
    public static func text(_ name: String) -> String? { WebAssets.files[name]?.text }
}
