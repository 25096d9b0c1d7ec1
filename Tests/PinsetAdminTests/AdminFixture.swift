import Foundation
import PinsetAdmin
import PinsetCore
import PinsetSigning
import PinsetStore
import PinsetTestSupport

/// A deployment in a temporary directory (a real SQLite file and key files), with the admin operations on it.
struct AdminFixture {
    let temporary: TemporaryDirectory
    let dataDirectory: DataDirectory
    /// The database the operations work on, for a test to set up or read what they did: `Admin` does not hand it out.
    let store: PinStore
    let admin: Admin

    init() throws {
        temporary = try TemporaryDirectory(prefix: "pinset-admin")
        dataDirectory = DataDirectory(temporary.file("data"))
        _ = try dataDirectory.initialize(keyType: .p256, commonName: "Admin test trust server", validityDays: 30)
        store = try PinStore.open(path: dataDirectory.databasePath)
        admin = try Admin.forLocalOperator("admin-test", store: store, dataDirectory: dataDirectory)
    }

    func remove() { temporary.remove() }

    /// Every row of the database, to show that a refused operation changed nothing.
    func dump() throws -> String {
        let result = try ProcessRunner.run("sqlite3", [dataDirectory.databasePath, ".dump"])
        return result.stdoutText
    }

    func bytes(_ path: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path).map(Array.init)
    }

    static func identity(_ name: String) throws -> SigningIdentity {
        try SigningIdentity.generate(keyType: .p256, commonName: name, validityDays: 30)
    }
}
