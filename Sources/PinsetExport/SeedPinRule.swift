import PinsetAdminContract
import PinsetCore

/// The rule a seed bundle is held to: the same backup-pin rule as the static formats, counting every pin the
/// Pinset client matches (a key, or a certificate known only by its hash). A seed is replaced at the app's first
/// successful update, but an app that cannot reach the trust server keeps it, so it must not lock the app out
/// either.
public enum SeedPinRule {
    public static func check(_ document: AdminResponse.PinSet) throws {
        // A seed is signed on this host, so the document is its own; the names are checked all the same.
        guard let customer = (try? CustomerName(document.customer))?.rawValue else {
            throw ExportRefusal("The pin set names no valid customer ('\(document.customer.prefix(40))').")
        }
        var problems: [String] = []
        // Only the pins the bundle lists now: a pin outside its publish window is not in the seed's bundle.
        for host in document.hosts {
            let listed = host.pins.filter { $0.listed != false }
            guard !listed.isEmpty else { continue }
            let distinct = Set(listed.map { $0.pinSHA256 ?? $0.certificateSHA256.map { "cert-sha256:\($0)" } ?? $0.pin })
            if distinct.count < StaticPinSet.minimumKeysPerHost {
                problems.append(StaticPinSet.backupKeyProblem(customer: customer, hostname: host.hostname, keys: distinct.count))
            }
        }
        if !problems.isEmpty {
            throw ExportRefusal("Nothing exported for '\(customer)'; a seed that would lock the app out is refused:\n" + problems.map { "  - \($0)" }.joined(separator: "\n"))
        }
        if !document.hosts.contains(where: { $0.pins.contains { $0.listed != false } }) {
            throw ExportRefusal("'\(customer)' has no host with pins to export. Add a host and at least \(StaticPinSet.minimumKeysPerHost) pins with 'pinset host add' and 'pinset pin add'.")
        }
    }
}
