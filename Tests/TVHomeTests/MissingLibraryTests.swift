import Testing
@testable import TVHome

/// The sentence said when a library one feature needs cannot be opened (issue 21: libpq and
/// libmicrohttpd are opened on first use).
@Suite("MissingLibrary")
struct MissingLibraryTests {
    @Test("tv web without libmicrohttpd12: what, why (dlerror's words), and the apt-get line")
    func web() {
        let missing = MissingLibrary.web(reason: "libmicrohttpd.so.12: cannot open shared object file: No such file or directory")
        #expect(missing.message == "tv web needs libmicrohttpd12, which could not be opened (libmicrohttpd.so.12: cannot open shared object file: No such file or directory); install it with apt-get install libmicrohttpd12 and try again.")
        #expect(missing.exitCode == 1)
    }

    @Test("the shared store without libpq5")
    func sharedStore() {
        let missing = MissingLibrary.sharedStore(reason: "libpq.so.5 has no PQexecParams")
        #expect(missing == MissingLibrary(feature: "The shared store", package: "libpq5", reason: "libpq.so.5 has no PQexecParams"))
        #expect(missing.message == "The shared store needs libpq5, which could not be opened (libpq.so.5 has no PQexecParams); install it with apt-get install libpq5 and try again.")
    }
}
