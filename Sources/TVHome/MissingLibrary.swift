/// A Debian library that only one feature needs, and that `tv` opens when that feature is first
/// used (dlopen, CTVShims' LazyLibraries.c), could not be opened: the feature cannot run, the
/// rest of tv can.
public struct MissingLibrary: UserFacingError, Equatable {
    /// What needs the library, as the sentence's subject ("tv web", "The shared store").
    public let feature: String
    /// The Debian package that holds it ("libmicrohttpd12").
    public let package: String
    /// Why it could not be opened (dlerror's words: "libmicrohttpd.so.12: cannot open shared
    /// object file: No such file or directory").
    public let reason: String

    public init(feature: String, package: String, reason: String) {
        self.feature = feature
        self.package = package
        self.reason = reason
    }

    /// `tv web`'s library: libmicrohttpd.so.12.
    public static func web(reason: String) -> MissingLibrary {
        MissingLibrary(feature: "tv web", package: "libmicrohttpd12", reason: reason)
    }

    /// The shared store's library: libpq.so.5.
    public static func sharedStore(reason: String) -> MissingLibrary {
        MissingLibrary(feature: "The shared store", package: "libpq5", reason: reason)
    }

    public var message: String {
        "\(feature) needs \(package), which could not be opened (\(reason)); install it with apt-get install \(package) and try again."
    }
}
