import PinsetCore

/// The small deployment tests sign, store and serve: customer-N with one host, api.customer-N.example.com, pinned by
/// one hash-only pin derived from N, so that every customer's bundle differs.
public enum NumberedCustomers {
    public static func name(_ index: Int) throws -> CustomerName { try CustomerName("customer-\(index)") }

    public static func hostname(_ index: Int) throws -> Hostname { try Hostname("api.customer-\(index).example.com") }

    public static func pin(_ index: Int) -> Pin {
        Pin(spkiSHA256: SHA256Fingerprint(of: Array("key \(index)".utf8)), source: PinSource(kind: .hash))
    }

    /// Customer `index`'s pin set at version `index`.
    public static func pinSet(
        _ index: Int, signer: SignerAssignment = .deploymentDefault, signersNotBefore: Int64? = nil
    ) throws -> PinSet {
        PinSet(customer: try name(index), version: Int64(index), hosts: [HostPins(hostname: try hostname(index), pins: [pin(index)])],
               signer: signer, signersNotBefore: signersNotBefore)
    }
}
