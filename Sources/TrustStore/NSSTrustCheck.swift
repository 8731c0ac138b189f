import Foundation
import LocalCA

/// Asks an NSS database (`cert9.db`, as Firefox and Chromium on Linux use) through `certutil`.
///
/// `certutil -L -d sql:DIR` lists nicknames with trust flags "SSL,S/MIME,JAR/XPI"; for each
/// nickname `certutil -L -d sql:DIR -n NICK -a` prints its certificates as PEM, compared by DER
/// with our root. Trust flags (certutil(1)): `C` trusted CA for TLS servers; `c` valid CA only;
/// none = known, not an anchor. So `,,` and `c,,` are installed-not-usable; `C,,` is usable.
struct NSSTrustCheck {
    let directory: String
    let environment: [String: String]
    /// Seconds each `certutil` run may take.
    var timeout: Double = 20

    var store: TrustStoreSpec { .nss(directory) }

    func ask(root: Certificate) -> TrustFacts {
        switch NSSDatabase.state(directory) {
        case .notAFolder: return unknown("\(directory) is a file, not an NSS database folder")
        case .noFolder: return TrustFacts(store: store, installed: .no, usable: .no, finding: .nssNoDatabase(folderExists: false))
        case .noDatabase: return TrustFacts(store: store, installed: .no, usable: .no, finding: .nssNoDatabase(folderExists: true))
        case .present: break
        }
        let listing: BoundedProcess.Result
        do {
            listing = try BoundedProcess.run("certutil", ["-L", "-d", "sql:" + directory], environment: environment, timeout: timeout)
        } catch let failure as BoundedProcess.Failure {
            let hint = failure == .notFound(program: "certutil") ? " (Debian: apt-get install libnss3-tools)" : ""
            return unknown("the NSS database \(directory) could not be read: \(failure.reason)\(hint)")
        } catch {
            return unknown("the NSS database \(directory) could not be read (\(error))")
        }
        guard listing.status == 0 else {
            return unknown("certutil could not open the NSS database \(directory) (\(listing.firstErrorLine))")
        }
        let rootDER = root.der
        for entry in NSSListing.parse(String(decoding: listing.stdout, as: UTF8.self)) {
            let pems: BoundedProcess.Result
            do {
                pems = try BoundedProcess.run("certutil", ["-L", "-d", "sql:" + directory, "-n", entry.nickname, "-a"],
                                              environment: environment, timeout: timeout)
            } catch let failure as BoundedProcess.Failure {
                return unknown("the NSS database \(directory) could not be read: \(failure.reason)")
            } catch {
                return unknown("the NSS database \(directory) could not be read (\(error))")
            }
            guard pems.status == 0 else {
                return unknown("certutil could not print '\(entry.nickname)' from \(directory) (\(pems.firstErrorLine))")
            }
            guard Certificate.allFromPEM(pems.stdout).contains(where: { $0.der == rootDER }) else { continue }
            if entry.sslFlags.contains("C") {
                return TrustFacts(store: store, installed: .yes, usable: .yes, finding: .nssTrusted(nickname: entry.nickname))
            }
            return TrustFacts(store: store, installed: .yes, usable: .no,
                              finding: .nssNotTrustedForTLS(nickname: entry.nickname, trust: entry.trust))
        }
        return TrustFacts(store: store, installed: .no, usable: .no, finding: .nssAbsent)
    }

    private func unknown(_ sentence: String) -> TrustFacts {
        TrustFacts(store: store, installed: .unknown(because: sentence), usable: .unknown(because: sentence),
                   finding: .unreadable(sentence))
    }
}

/// Whether a folder holds an NSS database: the one rule `tv ca status`, `tv setup` and
/// `tv ca trust --apply` share (a trial's empty folder was "in doubt" to the first two and got a
/// database from the third).
public enum NSSDatabase: Sendable, Equatable {
    /// The folder holds `cert9.db` (the SQL database `sql:` names).
    case present
    /// The folder exists and holds no `cert9.db`.
    case noDatabase
    /// Nothing is at the path (nor, maybe, at the folders above it).
    case noFolder
    /// Something other than a folder is at the path.
    case notAFolder

    /// The state of `directory` now.
    public static func state(_ directory: String) -> NSSDatabase {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) else { return .noFolder }
        guard isDirectory.boolValue else { return .notAFolder }
        return FileManager.default.fileExists(atPath: directory + "/cert9.db") ? .present : .noDatabase
    }
}

/// One line of `certutil -L`: a nickname and its three trust-flag fields.
public struct NSSListing: Sendable, Equatable {
    public let nickname: String
    /// The SSL field (e.g. "C", "c", "CT", "").
    public let sslFlags: String
    /// The whole trust text, e.g. "C,,".
    public let trust: String

    public init(nickname: String, sslFlags: String, trust: String) {
        self.nickname = nickname
        self.sslFlags = sslFlags
        self.trust = trust
    }

    /// Parses `certutil -L` output: two header lines, then `NICKNAME<spaces>SSL,S/MIME,JAR` per
    /// certificate (nicknames may contain spaces, so the flags are the last word of the line).
    public static func parse(_ text: String) -> [NSSListing] {
        var out: [NSSListing] = []
        for raw in text.split(separator: "\n") {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("Certificate Nickname") || line == "SSL,S/MIME,JAR/XPI" { continue }
            guard let split = line.lastIndex(where: { $0 == " " || $0 == "\t" }) else { continue }
            let trust = String(line[line.index(after: split)...])
            let fields = trust.split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count == 3, fields.allSatisfy({ $0.allSatisfy(\.isLetter) }) else { continue }
            let nickname = line[..<split].trimmingCharacters(in: .whitespaces)
            guard !nickname.isEmpty else { continue }
            out.append(NSSListing(nickname: nickname, sslFlags: String(fields[0]), trust: trust))
        }
        return out
    }
}
