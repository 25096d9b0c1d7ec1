import Foundation
import GRDB
import PinsetCore

extension ChangeRecorder {
    /// Inserts one pin row for a host; the caller has checked that the host does not have it yet.
    func insertPin(_ pin: Pin, hostID: Int64) throws {
        try db.execute(sql: """
            INSERT INTO pin (host_id, spki_sha256, spki_der, certificate_sha256, label, source, not_after, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [
                hostID, Data(pin.spkiSHA256.bytes), pin.subjectPublicKeyInfo.map { Data($0) },
                pin.certificateSHA256.map { Data($0.bytes) }, pin.label, pin.source.storedForm,
                StoredRows.storedNotAfter(pin.notAfter), now,
            ])
    }
}

extension PinStore {
    /// Refuses a pin whose SubjectPublicKeyInfo does not hash to its SPKI SHA-256: legacy `pk` clients and
    /// `pin-sha256` clients would disagree about it.
    static func validateKeyMaterial(_ pins: [Pin]) throws {
        for pin in pins {
            if let spki = pin.subjectPublicKeyInfo, SHA256Fingerprint(of: spki) != pin.spkiSHA256 {
                throw StoreError(.invalidInput, "The pin \(pin.spkiSHA256.base64) carries a SubjectPublicKeyInfo whose SHA-256 is \(SHA256Fingerprint(of: spki).base64). Make the pin from the certificate or key itself.")
            }
        }
    }
}
