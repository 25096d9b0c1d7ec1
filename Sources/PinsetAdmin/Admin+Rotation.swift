import Foundation
import PinsetAdminContract
import PinsetCore
import PinsetLiveCheck
import PinsetStore

extension Admin {
    /// Pins keys for a host's next certificate (see `PinStore.markNextKeys`), recording `reason`.
    /// The label of next keys, as every front end takes it: 'next key' when none is given; plain text of at most
    /// ``AdminLimits/labelLength`` characters once white space at either end is trimmed.
    public static func nextKeyLabel(_ text: String?) throws -> String {
        let label = try PinStore.validatedReviewText(text ?? "next key", what: "label", required: true)
        guard label.count <= AdminLimits.labelLength else {
            throw InputError("The label is \(label.count) characters long; give at most \(AdminLimits.labelLength).")
        }
        return label
    }

    public func addNextKeys(_ pins: [Pin], for hostname: Hostname, of customer: CustomerName, reason: String) throws -> NextKeyChange {
        try store.markNextKeys(pins, for: hostname, of: customer, reason: reason, actor: actor)
    }

    /// Whether each host of `customer` (all customers when nil; one host when `hostname` is given) may switch its
    /// live key to a next key now (`RotationGate`), from the store's pins and the uptake figures the running
    /// servers share.
    ///
    /// - Throws: `AdminError` when the customer or host does not exist.
    public func rotationReadiness(customer: CustomerName?, hostname: Hostname?, key: SHA256Fingerprint?, gate: RotationGate, now: Date = Date()) throws -> [RotationGate.Readiness] {
        var hosts = try store.rotationHosts(of: customer)
        if let customer, hosts.isEmpty, try store.pinSet(for: customer) == nil {
            throw AdminError("Customer '\(customer)' does not exist. List customers with 'pinset customer list'.")
        }
        if let hostname {
            hosts = hosts.filter { $0.hostname == hostname }
            if hosts.isEmpty {
                let name = customer?.rawValue ?? "CUSTOMER"
                throw AdminError("'\(name)' has no host \(hostname). Show its hosts with 'pinset host list \(name)'.", kind: .notFound)
            }
        }
        var uptake: [CustomerName: SharedUptake] = [:]
        return try hosts.map { host in
            let figures = try uptake[host.customer] ?? store.sharedUptake(of: host.customer, at: now)
            uptake[host.customer] = figures
            return gate.judge(host, uptake: figures, key: key, now: now)
        }
    }

    /// Finishes a renewal of `hostname`: fetches the chain it serves now (validated against `caFile` or the system
    /// store, reached at `connectTo` when given), then clears the next mark of the keys it serves and retires pins
    /// of keys neither live, nor next, nor in `keep` (see `PinStore.completeRotation`). Live is every certificate
    /// the server sent and every one of the validated path to the trust anchor, so a pinned root is never retired.
    ///
    /// - Throws: `AdminError` when the chain cannot be fetched or validated, when the host covers its subdomains
    ///   (which may serve other keys: retire by hand there), when a kept hash is not a pin of the host, or the
    ///   store's refusal.
    /// - Parameters:
    ///   - addressPolicy: where the host's name may lead (the server's checks); nil: anywhere (the local CLI).
    ///   - toldInFull: whether a chain that could not be fetched is told in detail (not to a non-operator through
    ///     the server: ``LiveChainError/told(toOperator:endpoint:)``).
    ///   - beforeWrite: run after the chain was fetched, just before the write (a named admin's roles are read again
    ///     there).
    public func completeRotation(
        of hostname: Hostname, of customer: CustomerName, keep: Set<SHA256Fingerprint>, reason: String, caFile: String?, connectTo: String?,
        addressPolicy: OutboundAddressPolicy? = nil, toldInFull: Bool = true, beforeWrite: () throws -> Void = {}
    ) async throws -> RotationCompletion {
        guard let host = try store.rotationHosts(of: customer).first(where: { $0.hostname == hostname }) else {
            if try store.pinSet(for: customer) == nil {
                throw AdminError("Customer '\(customer)' does not exist. List customers with 'pinset customer list'.")
            }
            throw AdminError("'\(customer)' has no host \(hostname). Show its hosts with 'pinset host list \(customer)'.", kind: .notFound)
        }
        if host.includeSubdomains {
            throw AdminError("Refused: \(hostname) covers its subdomains, which may serve other keys than the one chain fetched here, so which pins are unused cannot be told. Nothing was changed. Remove old pins by hand with 'pinset pin remove' once no subdomain serves them.")
        }
        if let unknown = keep.first(where: { kept in !host.pins.contains { $0.pin.spkiSHA256 == kept || $0.pin.certificateSHA256 == kept } }) {
            throw AdminError("--keep \(unknown.base64) is not a pin of \(hostname). Nothing was changed. List its pins with 'pinset pin list \(customer) \(hostname)'.")
        }
        let endpoint = "\(hostname.rawValue):\(host.port)"
        var live: [LiveCertificate]
        do {
            let (presented, path) = try await LiveChainFetcher.fetchValidatedChain(endpoint: endpoint, caFile: caFile, connectTo: connectTo, addressPolicy: addressPolicy)
            let presentedDER = try presented.map { try PinMaterial.derBytes(of: $0) }
            let anchors = try path.map { try PinMaterial.derBytes(of: $0) }.filter { !presentedDER.contains($0) }
            live = try LiveCertificate.chain(fromDER: presentedDER + anchors)
        } catch {
            let reason = (error as? LiveChainError)?.told(toOperator: toldInFull, endpoint: endpoint) ?? "\(error)"
            throw AdminError("Refused: the chain \(endpoint) serves could not be fetched and validated, so which keys are live is unknown. \(reason) Nothing was changed. Check that the new certificate is deployed, or pass --connect-to and --ca-file.")
        }
        try beforeWrite()
        return try store.completeRotation(of: hostname, of: customer, live: live, keep: keep, expected: host.pins.map(\.pin), reason: reason, actor: actor)
    }
}
