import Foundation
import Testing

/// `tv inspect off` always works, whatever else is broken.
struct InspectOffTests {
    @Test func offWorksWithACorruptCAAndAnUnreadableStore() throws {
        let box = TVSandbox()
        #expect(box.tv("ca", "create").status == 0)
        box.write(box.bundle, box.rootPEM)
        #expect(box.tv("inspect", "on").status == 0)
        box.write(box.ca + "/root.pem", "garbage")
        box.write(box.home + "/settings.json", "{\"inspection.enabled\": true, \"trust.store\": \"nss:\(box.path)/missing-db\"}")
        let result = box.tv("inspect", "off")
        #expect(result.status == 0)
        #expect(result.out == "Inspection is now off.\n")
        #expect(result.err == "")
        #expect(box.settings == "{\n  \"inspection.enabled\": false,\n  \"trust.store\": \"nss:\(box.path)/missing-db\"\n}\n")
        #expect(box.tv("inspect", "off").out == "Inspection is off (it already was).\n")
    }

    @Test func offRewritesACorruptSettingsFileAndSaysSo() throws {
        let box = TVSandbox()
        try FileManager.default.createDirectory(atPath: box.home, withIntermediateDirectories: true)
        box.write(box.home + "/settings.json", "{\"inspection.enabled\": tr")
        #expect(box.tv("inspect", "status").status == 1)
        let result = box.tv("inspect", "off")
        #expect(result.status == 0)
        #expect(result.out == "Inspection is now off. The settings file \(box.home)/settings.json could not be read (it is not valid JSON), so it was rewritten with inspection off and every other setting at its default, except history.maxAge, captures.maxBytes and captures.maxAge: off, so that nothing kept is deleted before you set them again; the old file is kept at \(box.home)/settings.json.corrupt.\n")
        #expect(box.settings == "{\n  \"captures.maxAge\": \"off\",\n  \"captures.maxBytes\": \"off\",\n  \"history.maxAge\": \"off\",\n  \"inspection.enabled\": false\n}\n")
        #expect(box.read(box.home + "/settings.json.corrupt") == "{\"inspection.enabled\": tr")
    }

    @Test func aCAInDoubtTurnsInspectionOffOnTheNextCommand() throws {
        let box = TVSandbox()
        #expect(box.tv("ca", "create").status == 0)
        box.write(box.bundle, box.rootPEM)
        #expect(box.tv("inspect", "on").status == 0)
        try FileManager.default.removeItem(atPath: box.ca + "/root-key.pem")
        let status = box.tv("ca", "status")
        #expect(status.status == 1)
        #expect(status.err == "Inspection was on, but the CA is in doubt (\(box.ca)/root-key.pem is missing while root.pem and leaf-key.pem are there); it is now off. Repair the CA, then `tv setup`.\n")
        #expect(status.out.contains("Something is in doubt (failed)"))
        #expect(!box.inspectionOn)
    }

    /// The leaf key carries no trust: a trial's missing one put the CA in doubt (inspection
    /// turned off, advice to delete the root); now it is made again and inspection stays on.
    @Test func aMissingLeafKeyIsMadeAgainAndInspectionStaysOn() throws {
        let box = TVSandbox()
        #expect(box.tv("ca", "create").status == 0)
        box.write(box.bundle, box.rootPEM)
        #expect(box.tv("inspect", "on").status == 0)
        try FileManager.default.removeItem(atPath: box.ca + "/leaf-key.pem")
        let status = box.tv("inspect", "status")
        #expect(status.status == 0, "\(status.err)")
        #expect(status.err == "The leaf key \(box.ca)/leaf-key.pem was missing; tv made a new one (ECDSA P-256). It is only the key tv's leaves carry: the root, and every device that trusts it, are unchanged.\n")
        #expect(box.inspectionOn)
        #expect(FileManager.default.fileExists(atPath: box.ca + "/leaf-key.pem"))
    }
}
