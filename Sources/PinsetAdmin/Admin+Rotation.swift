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

    /// Pins keys for a host's next certificate (see `PinStore.markNextKeys`), recording `reason`: as an editor; on a
    /// customer that requires review, as an operator, since a next key is a pin apps accept from the next bundle on,
    /// and a request would not show it to a reviewer.
    public func addNextKeys(_ pins: [Pin], for hostname: Hostname, of customer: CustomerName, reason: String, by principal: AdminPrincipal) throws -> NextKeyChange {
        try requireEditor(principal, of: customer, "pin next keys")
        try requireOperatorWhereReviewed(customer, principal, "pin next keys for \(hostname)", because: "apps accept a next key from the next bundle on, without a reviewer having seen it")
        return try store.markNextKeys(pins, for: hostname, of: customer, reason: reason, actor: principal.actor)
    }

    /// Whether each host of `customer` (all customers when nil; one host when `hostname` is given) may switch its
    /// live key to a next key now (`RotationGate`), from the store's pins and the uptake figures the running
    /// servers share.
    ///
    /// - Throws: `AdminError` when the customer or host does not exist.
    public func rotationReadiness(customer: CustomerName?, hostname: Hostname?, key: SHA256Fingerprint?, gate: RotationGate, now: Date = Date()) throws -> [RotationGate.Readiness] {
        var hosts = try store.rotationHosts(of: customer)
        if let customer, hosts.isEmpty, try store.pinSet(for: customer) == nil {
            throw AdminError.noCustomer(customer)
        }
        if let hostname {
            hosts = hosts.filter { $0.hostname == hostname }
            if hosts.isEmpty {
                guard let customer else {
                    throw AdminError("No customer has a host \(hostname). List a customer's hosts with 'pinset host list CUSTOMER'.", kind: .notFound, code: .hostNotFound)
                }
                throw AdminError.noHost(hostname, of: customer)
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
    ///
    /// As an editor; on a customer that requires review, as an operator, since it removes pins unreviewed (only
    /// those the validated live chain shows unused, but which keys stay is the point of review). `liveCheck` says
    /// where and how the chain is fetched; a named admin's fetch is charged to its budget, and its roles are read
    /// again after it, before the write.
    public func completeRotation(
        of hostname: Hostname, of customer: CustomerName, keep: Set<SHA256Fingerprint>, reason: String, by principal: AdminPrincipal, liveCheck: LiveCheckSettings
    ) async throws -> RotationCompletion {
        let what = "complete the rotation of \(hostname)", why = "it retires pins without a reviewer seeing which"
        try requireEditor(principal, of: customer, "complete rotations")
        try requireOperatorWhereReviewed(customer, principal, what, because: why)
        var settings = liveCheck
        if let account = principal.account {
            settings = liveCheck.started(by: account)
            try settings.spendBudget()
        }
        guard let host = try store.rotationHosts(of: customer).first(where: { $0.hostname == hostname }) else {
            if try store.pinSet(for: customer) == nil { throw AdminError.noCustomer(customer) }
            throw AdminError.noHost(hostname, of: customer)
        }
        if host.includeSubdomains {
            throw AdminError("Refused: \(hostname) covers its subdomains, which may serve other keys than the one chain fetched here, so which pins are unused cannot be told. Nothing was changed. Remove old pins by hand with 'pinset pin remove' once no subdomain serves them.")
        }
        if let unknown = keep.first(where: { kept in !host.pins.contains { $0.pin.spkiSHA256 == kept || $0.pin.certificateSHA256 == kept } }) {
            throw AdminError("--keep \(unknown.base64) is not a pin of \(hostname). Nothing was changed. List its pins with 'pinset pin list \(customer) \(hostname)'.")
        }
        let endpoint = "\(hostname.rawValue):\(host.port)"
        var live: [LiveCertificate]
        let started = ContinuousClock.now
        do {
            let (presented, path) = try await LiveChainFetcher.fetchValidatedChain(
                endpoint: endpoint, caFile: settings.caFile, connectTo: settings.connectTo(host: hostname, port: host.port), addressPolicy: settings.addressPolicy,
                timeout: settings.timeout)
            let presentedDER = try presented.map { try PinMaterial.derBytes(of: $0) }
            let anchors = try path.map { try PinMaterial.derBytes(of: $0) }.filter { !presentedDER.contains($0) }
            live = try LiveCertificate.chain(fromDER: presentedDER + anchors)
        } catch {
            if let failure = error as? LiveChainError { await settings.holdFailure(failure, since: started) }
            let reason = (error as? LiveChainError)?.told(toOperator: settings.toldInFull, endpoint: endpoint) ?? "\(error)"
            throw AdminError("Refused: the chain \(endpoint) serves could not be fetched and validated, so which keys are live is unknown. \(reason) Nothing was changed. Check that the new certificate is deployed, or pass --connect-to and --ca-file.")
        }
        if let account = principal.account {
            // The chain was fetched over the network: the admin's roles and the review rule are read again.
            try requireStill(account) { current in
                try current.require(current.mayEdit(customer), "complete rotations", customer)
                try requireOperatorWhereReviewed(customer, .admin(current), what, because: why)
            }
        }
        return try store.completeRotation(of: hostname, of: customer, live: live, keep: keep, expected: host.pins.map(\.pin), reason: reason, actor: principal.actor)
    }
}
