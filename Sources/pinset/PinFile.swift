import PinsetCore

/// Pins from a file the CLI read, by the rule the admin API applies to the same sources in its requests
/// (`PinMaterial.pins(hashes:certificates:publicKeys:certificateKeys:label:detail:)`): the path is the origin its
/// errors name and the source detail its pins record.
enum PinFile {
    /// A PEM or DER certificate file: a pin for every certificate in it, or for the first one's key only.
    static func certificatePins(_ path: String, _ contents: [UInt8], keys: PinMaterial.CertificateKeys, label: String?) throws -> [Pin] {
        try PinMaterial.pins(hashes: [], certificates: [(path, contents)], publicKeys: [], certificateKeys: keys, label: label, detail: path)
    }

    /// A PEM public key or DER SubjectPublicKeyInfo file.
    static func publicKeyPins(_ path: String, _ contents: [UInt8], label: String?) throws -> [Pin] {
        try PinMaterial.pins(hashes: [], certificates: [], publicKeys: [(path, contents)], certificateKeys: .everyCertificate, label: label, detail: path)
    }

    /// Base64 SPKI SHA-256 hashes.
    static func hashPins(_ hashes: [String], label: String?) throws -> [Pin] {
        try PinMaterial.pins(hashes: hashes, certificates: [], publicKeys: [], certificateKeys: .everyCertificate, label: label, detail: "")
    }
}
