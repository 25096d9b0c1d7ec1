import Foundation
import PinsetCore

extension PinStore {
    /// Refuses a pin with neither hash, and one whose SubjectPublicKeyInfo does not hash to its SPKI SHA-256:
    /// legacy `pk` clients and `pin-sha256` clients would disagree about it.
    static func validateKeyMaterial(_ pins: [Pin], of hostname: Hostname) throws {
        for pin in pins {
            guard pin.spkiSHA256 != nil || pin.certificateSHA256 != nil else {
                throw StoreError(.invalidInput, "A pin for \(hostname) has neither an SPKI hash nor a certificate hash.")
            }
            if let spki = pin.subjectPublicKeyInfo, SHA256Fingerprint(of: spki) != pin.spkiSHA256 {
                throw StoreError(.invalidInput, "The pin \(pin.displayName) carries a SubjectPublicKeyInfo whose SHA-256 is \(SHA256Fingerprint(of: spki).base64). Make the pin from the certificate or key itself.")
            }
        }
    }
}
