import Foundation
import Testing
import TVHome

/// `PathText` answers as `NSString`'s path methods do, without trapping on one character.
@Suite("PathText")
struct PathTextTests {
    @Test("folder and name of absolute, relative, one-character, trailing-slash and root paths")
    func parts() {
        let cases: [(String, String, String)] = [
            ("/a/b", "/a", "b"), ("/a", "/", "a"), ("a", "", "a"), ("a/b/", "a", "b"), ("/", "/", "/"),
            ("", "", ""), ("ab", "", "ab"), ("./x", ".", "x"), ("a//b", "a", "b"), ("//a", "/", "a"),
            ("/var/tmp/out.tgz", "/var/tmp", "out.tgz"), ("/tmp//x/y.har", "/tmp/x", "y.har"), (".", "", "."),
        ]
        for (path, folder, name) in cases {
            #expect(PathText.folder(of: path) == folder, "\(path)")
            #expect(PathText.name(of: path) == name, "\(path)")
            // Where Foundation does not trap (two characters and more), it agrees.
            if path.count > 1 {
                #expect((path as NSString).deletingLastPathComponent == folder, "\(path)")
                #expect((path as NSString).lastPathComponent == name, "\(path)")
            }
        }
    }
}
