import Foundation
import PinsetCore
import PinsetFileSystem
import PinsetLiveCheck
import PinsetStore
import X509

/// One certificate's renewals with key pre-rotation (deploy/acme/README.md): every certificate is issued for a
/// key pinned as next at the previous renewal, and goes live only once the rotation gate says apps have it.
///
/// Each step takes the state directory's lock, and checks what it relies on again itself: a certificate issued
/// outside these steps cannot put an unpinned key live either.
public struct ACMERenewal: Sendable {
    public let configuration: ACMEConfiguration
    public let state: ACMEStateDirectory
    let admin: Admin
    let report: ACMEReporter
    let now: @Sendable () -> Date

    public init(configuration: ACMEConfiguration, admin: Admin, report: ACMEReporter, now: @escaping @Sendable () -> Date = { Date() }) throws(ACMEFailure) {
        self.configuration = configuration
        self.state = try ACMEStateDirectory.at(configuration.stateDirectory)
        self.admin = admin
        self.report = report
        self.now = now
    }

    var host: String { configuration.host.rawValue }
    var customer: String { configuration.customer.rawValue }
    var statusCommand: String { "'pinset rotation status \(customer) \(host)'" }

    // MARK: The gate

    /// The gate's verdict on `key` for the host, with its reasons as lines.
    func gate(_ key: String) throws(ACMEFailure) -> (verdict: RotationGate.Readiness.Verdict, reasons: String) {
        let readiness: [RotationGate.Readiness]
        do {
            readiness = try admin.rotationReadiness(
                customer: configuration.customer, hostname: configuration.host, key: try SHA256Fingerprint(base64: key),
                gate: RotationGate(minimumShare: configuration.minimumShare), now: now()
            )
        } catch {
            throw ACMEFailure(.error, "the rotation gate could not be read: \(error) Nothing was issued or deployed.")
        }
        guard let host = readiness.first else {
            throw ACMEFailure(.error, "the rotation gate gave no answer for \(self.host). Nothing was issued or deployed.")
        }
        var reasons: [String] = host.keyNote.map { ["  - \($0)"] } ?? []
        for candidate in host.candidates {
            reasons += candidate.blockers.map { "  - \(candidate.key.base64): \($0.sentence)" }
        }
        return (host.verdict, reasons.joined(separator: "\n"))
    }

    /// Returns when `key` may go live; otherwise throws the gate's refusal (3 or 4).
    func requireSafe(_ key: String) throws(ACMEFailure) {
        let (verdict, reasons) = try gate(key)
        try requireSafe(key, verdict: verdict, reasons: reasons)
    }

    func requireSafe(_ key: String, verdict: RotationGate.Readiness.Verdict, reasons: String) throws(ACMEFailure) {
        switch verdict {
        case .safe:
            return
        case .notYet:
            throw ACMEFailure(.notYet, "the next key \(key) of \(host) is pinned but not yet safe to go live (above: why). Nothing was issued or deployed; the renewal can run again once \(statusCommand) says safe.", detail: reasons)
        case .noNextKey:
            throw ACMEFailure(.noNextKey, "the key in \(state.nextKey) (\(key)) is not a next pin of \(host) of '\(customer)', so apps would refuse a certificate for it. Nothing was issued or deployed. Pin it with 'pinset acme bootstrap' (or 'pinset rotation add-next'), then wait until the gate says safe.", detail: reasons)
        }
    }

    /// Pins the key in `path` as a next key of the host.
    func pinAsNext(_ path: String, reason: String) throws(ACMEFailure) {
        do {
            let key = try ACMEKeyMaterial.privateKey(at: path)
            let pin = try PinMaterial.pin(for: key.publicKey, source: PinSource(kind: .publicKey, detail: path), label: "next key (pinset acme)")
            _ = try admin.addNextKeys([pin], for: configuration.host, of: configuration.customer, reason: reason, by: admin.localOperator)
        } catch let error as ACMEFailure {
            throw error
        } catch {
            throw ACMEFailure(.error, "could not pin the key in \(path) as next: \(error)")
        }
    }

    /// Generates the key for the renewal after this one as `pending.key` (or reuses one an interrupted run left)
    /// and pins it as next; its pin.
    func pinPendingKey(reason: String) throws(ACMEFailure) -> String {
        if !AtomicFile.exists(state.pendingKey) {
            try ACMEKeyMaterial.generateKey(configuration.keyType, at: state.pendingKey)
        }
        let hash = try ACMEKeyMaterial.pin(ofKeyAt: state.pendingKey)
        // Left by an interrupted run after it was pinned: already next, nothing to add.
        if try gate(hash).verdict != .noNextKey { return hash }
        do {
            try pinAsNext(state.pendingKey, reason: reason)
        } catch {
            throw ACMEFailure(.error, "could not pin the new next key \(hash): \(error.message) Nothing was deployed; fix that and run again (the key in \(state.pendingKey) is reused).")
        }
        return hash
    }

    // MARK: bootstrap

    /// The first next key: generated (0600) and pinned, or an existing unpinned one pinned. Idempotent.
    public func bootstrap() throws(ACMEFailure) {
        let lock = try state.lock(host: host)
        defer { withExtendedLifetime(lock) {} }
        if AtomicFile.exists(state.nextKey) {
            let hash = try ACMEKeyMaterial.pin(ofKeyAt: state.nextKey)
            if try gate(hash).verdict != .noNextKey {
                report.say("the next key \(hash) of \(host) is already pinned as next; nothing to do.")
                return
            }
            // Generated but never pinned (or unpinned since): pin it now.
            try pinAsNext(state.nextKey, reason: "acme: next key of \(host) pinned again by pinset acme bootstrap")
            report.say("pinned the next key \(hash) of \(host). Renewals may use it once \(statusCommand) says safe.")
            return
        }
        let hash = try pinPendingKey(reason: "acme: first next key of \(host) (pinset acme bootstrap)")
        try moveFile(state.pendingKey, to: state.nextKey)
        report.say("generated and pinned the next key \(hash) of \(host) (\(state.nextKey), mode 0600).")
        report.say("The first renewal may use it once \(statusCommand) says safe.")
    }

    // MARK: prepare

    /// What an ACME client is to send: the CSR of the next key, or of the live key (the fallback).
    public struct Prepared: Sendable, Equatable {
        public enum Key: String, Sendable { case next, live }
        public var key: Key
        public var request: String
        public var keyHash: String
    }

    /// The gate for the next key, then its CSR. `whenDue`: nil (nothing to do) unless the deployed certificate is
    /// due or PINSET_ACME_FORCE is set. `liveKeyFallback`: when the gate says not yet and the deployed certificate
    /// expires within PINSET_ACME_REUSE_DAYS, the CSR of the live key instead.
    public func prepare(whenDue: Bool, liveKeyFallback: Bool) throws(ACMEFailure) -> Prepared? {
        let lock = try state.lock(host: host)
        defer { withExtendedLifetime(lock) {} }
        if whenDue && !configuration.force {
            let (certificateFile, _) = try configuration.deployTargets()
            if let notAfter = try notDue() {
                report.say("\(host) is not due for renewal (\(certificateFile) expires \(Self.format(notAfter))); nothing to do.")
                return nil
            }
        }
        guard AtomicFile.exists(state.nextKey) else {
            throw ACMEFailure(.noNextKey, "there is no next key in \(state.path). Run 'pinset acme bootstrap' to generate and pin one, then wait until \(statusCommand) says safe. Nothing was issued.")
        }
        let nextKey = try ACMEKeyMaterial.privateKey(at: state.nextKey)
        let hash = try ACMEKeyMaterial.pin(ofKeyAt: state.nextKey)
        if let certificateFile = configuration.certificateFile, AtomicFile.exists(certificateFile),
           (try? ACMEKeyMaterial.pin(of: ACMEKeyMaterial.leaf(at: certificateFile).publicKey)) == hash {
            throw ACMEFailure(.error, "the next key \(hash) is already the key of the deployed certificate \(certificateFile): an earlier deploy stopped before it replaced it. Delete \(state.nextKey) and run 'pinset acme bootstrap' to pin a new one.")
        }
        let (verdict, reasons) = try gate(hash)
        if verdict == .notYet && liveKeyFallback, let expiry = try expiresWithinReuseDays() {
            return try prepareLiveKey(nextHash: hash, expiry: expiry, reasons: reasons)
        }
        try requireSafe(hash, verdict: verdict, reasons: reasons)
        try ACMEKeyMaterial.writeRequest(key: nextKey, domains: configuration.domains, to: state.nextCSR)
        report.say("the next key \(hash) of \(host) passed the gate; the certificate is to be issued from \(state.nextCSR).")
        return Prepared(key: .next, request: state.nextCSR, keyHash: hash)
    }

    /// The gate stays closed (its uptake share comes from what clients claim, which a flood can hold down) while
    /// the deployed certificate runs out: renewing with the live key keeps the host valid without any risk to
    /// pinning apps, since that key is already pinned and served.
    func prepareLiveKey(nextHash: String, expiry: Date, reasons: String) throws(ACMEFailure) -> Prepared {
        let (_, keyFile) = try configuration.deployTargets()
        if !reasons.isEmpty { report.warn(reasons) }
        let live: String
        do {
            live = try liveKeyHash()
        } catch {
            throw ACMEFailure(.notYet, "the next key \(nextHash) of \(host) is pinned but not yet safe to go live (above: why), and the deployed certificate expires \(Self.format(expiry)), within PINSET_ACME_REUSE_DAYS=\(configuration.reuseDays) days, but the live key cannot be reused: \(error.message) Nothing was issued or deployed. Check why the gate stays closed ('pinset rotation status \(customer) \(host) --json'; docs/key-rotation.md) before the certificate expires.")
        }
        report.warn("WARNING: the next key \(nextHash) of \(host) is still not safe to go live (above: pinset's reason), and the deployed certificate expires \(Self.format(expiry)), within PINSET_ACME_REUSE_DAYS=\(configuration.reuseDays) days. Renewing with the LIVE key \(live) instead (already pinned and served, so no app is locked out): the key rotation is postponed, and the next key stays pinned for the following renewal. Find out why the gate stays closed: 'pinset rotation status \(customer) \(host) --json' and the access log (a flood of old Pinset-Version claims can hold it closed; docs/key-rotation.md).")
        try ACMEKeyMaterial.writeRequest(key: try ACMEKeyMaterial.privateKey(at: keyFile), domains: configuration.domains, to: state.liveCSR)
        return Prepared(key: .live, request: state.liveCSR, keyHash: live)
    }

    /// The pin of the key in PINSET_ACME_KEY_FILE, after checking that it is the key of the deployed certificate
    /// and a pin of the host.
    func liveKeyHash() throws(ACMEFailure) -> String {
        let (certificateFile, keyFile) = try configuration.deployTargets()
        let live = try ACMEKeyMaterial.pin(ofKeyAt: keyFile)
        let deployed = try? ACMEKeyMaterial.pin(of: ACMEKeyMaterial.leaf(at: certificateFile).publicKey)
        guard deployed == live else {
            throw ACMEFailure(.error, "the key in \(keyFile) (\(live)) is not the key of the deployed certificate \(certificateFile) (\(deployed ?? "unreadable")).")
        }
        let pinned: Bool
        do {
            let pinSet = try admin.pinSet(of: configuration.customer, visibleTo: admin.localOperator)
            pinned = pinSet.hosts.first { $0.hostname == configuration.host }?.pins.contains { $0.spkiSHA256?.base64 == live } ?? false
        } catch {
            throw ACMEFailure(.error, "the pins of \(host) could not be read: \(error)")
        }
        guard pinned else {
            throw ACMEFailure(.error, "the live key \(live) is not a pin of \(host) of '\(customer)', so apps may not accept it either.")
        }
        return live
    }

    // MARK: deploy

    /// The chain to install: `fullchain`, or what lego's hook passes (LEGO_CERT_PATH, plus the issuer file when
    /// lego ran with --no-bundle).
    public static func issuedChain(fullchain: String?, environment: [String: String]) throws(ACMEFailure) -> [String] {
        if let fullchain {
            guard AtomicFile.exists(fullchain) else { throw ACMEFailure(.usage, "--fullchain '\(fullchain)' does not exist.") }
            return [fullchain]
        }
        if let path = environment["LEGO_CERT_PATH"], !path.isEmpty {
            guard AtomicFile.exists(path) else { throw ACMEFailure(.error, "lego's LEGO_CERT_PATH '\(path)' does not exist.") }
            let issuer = (path.hasSuffix(".crt") ? String(path.dropLast(4)) : path) + ".issuer.crt"
            if let certificates = try? ACMEKeyMaterial.chain([path]).certificates, certificates.count == 1, AtomicFile.exists(issuer) {
                return [path, issuer]
            }
            return [path]
        }
        throw ACMEFailure(.usage, "deploy needs the issued certificate chain: pass --fullchain FILE (leaf first), or run it as lego's --run-hook/--renew-hook, which sets LEGO_CERT_PATH.")
    }

    /// Installs a certificate issued from the CSR of `prepare` (the chain in `chainFiles`): the key must be the
    /// prepared next key and still pass the gate. The key for the following renewal is pinned first; then the
    /// key and the chain go where the TLS server reads them, the reload command runs, and, unless
    /// PINSET_ACME_COMPLETE=no, the rotation is completed once the host serves them.
    public func deploy(chainFiles: [String]) async throws(ACMEFailure) {
        let (certificateFile, keyFile) = try configuration.deployTargets()
        let lock = try state.lock(host: host)
        defer { withExtendedLifetime(lock) {} }
        guard AtomicFile.exists(state.nextKey) else {
            throw ACMEFailure(.error, "there is no next key in \(state.path), so this certificate was not issued from a CSR of 'pinset acme prepare'. Nothing was deployed.")
        }
        let hash = try ACMEKeyMaterial.pin(ofKeyAt: state.nextKey)
        let (certificates, chainPEM) = try ACMEKeyMaterial.chain(chainFiles)
        let leafHash = try leafPin(certificates[0], chainFiles[0])
        guard leafHash == hash else {
            throw ACMEFailure(.error, "the issued certificate's key (\(leafHash)) is not the prepared next key (\(hash)): it was not issued from \(state.nextCSR). Nothing was deployed. Issue from that CSR (see 'pinset acme prepare').")
        }
        guard ACMEKeyMaterial.certificate(certificates[0], covers: host) else {
            throw ACMEFailure(.error, "the issued certificate is not valid for \(host). Nothing was deployed; check PINSET_ACME_DOMAINS.")
        }
        // Second line of defence: whoever issued it, the key must still pass the gate before it goes live.
        try requireSafe(hash)
        let serial = ACMEKeyMaterial.serial(of: certificates[0])

        // The key for the renewal after this one, pinned before anything changes on the server.
        let following = try pinPendingKey(reason: "acme: next key after certificate \(serial) of \(host) (\(Self.format(now())))")
        report.say("pinned the following next key \(following) of \(host).")

        let keyPEM: [UInt8]
        do { keyPEM = try PrivateFilePermissions.read(state.nextKey, limit: 1024 * 1024) } catch {
            throw ACMEFailure(.error, "cannot read the private key \(state.nextKey): \(error)")
        }
        try install(keyPEM: keyPEM, chainPEM: chainPEM, certificateFile: certificateFile, keyFile: keyFile,
                    note: "The following key stays pinned and is reused; fix the reload command and renew again.")
        // The used key now lives only where the server reads it; the pinned pending key is the next one.
        try moveFile(state.pendingKey, to: state.nextKey)
        state.remove(state.nextCSR)
        report.say("installed certificate \(serial) (key \(hash)) for \(host) and reloaded.")

        guard configuration.deployCompletes else {
            state.remove(state.rollbackCertificate, state.rollbackKey)
            report.say("PINSET_ACME_COMPLETE=no: not retiring old keys from here. Once every server of \(host) serves the new certificate, run 'pinset acme complete' (or 'pinset rotation complete \(customer) \(host)').")
            report.say("done: installed certificate \(serial) for \(host); the next renewal uses the key \(following).")
            return
        }
        try await complete(hash, reason: "acme: certificate \(serial) with key \(hash) live on \(host)")
        state.remove(state.rollbackCertificate, state.rollbackKey)
        report.say("done: \(host) serves certificate \(serial); the next renewal uses the key \(following).")
    }

    /// Installs a certificate issued for the live key (the fallback of `prepare`): the key file stays as it is (a
    /// combined file gets its key block back unchanged); nothing is pinned, retired or completed. Throws the
    /// warning with status 6 once the certificate is live.
    public func deployLiveKey(chainFiles: [String]) throws(ACMEFailure) {
        let (certificateFile, keyFile) = try configuration.deployTargets()
        let lock = try state.lock(host: host)
        defer { withExtendedLifetime(lock) {} }
        guard AtomicFile.exists(certificateFile) else {
            throw ACMEFailure(.error, "there is no deployed certificate \(certificateFile), so there is no live key to renew with. Nothing was deployed.")
        }
        let live: String
        do { live = try liveKeyHash() } catch { throw ACMEFailure(.error, "\(error.message) Nothing was deployed.") }
        let (certificates, chainPEM) = try ACMEKeyMaterial.chain(chainFiles)
        let leafHash = try leafPin(certificates[0], chainFiles[0])
        guard leafHash == live else {
            throw ACMEFailure(.error, "the issued certificate's key (\(leafHash)) is not the live key (\(live)) of \(keyFile): it was not issued from \(state.liveCSR). Nothing was deployed.")
        }
        guard ACMEKeyMaterial.certificate(certificates[0], covers: host) else {
            throw ACMEFailure(.error, "the issued certificate is not valid for \(host). Nothing was deployed; check PINSET_ACME_DOMAINS.")
        }
        let serial = ACMEKeyMaterial.serial(of: certificates[0])
        // One file, key then chain: the same key block goes in front of the new chain.
        var keyPEM: [UInt8]?
        if keyFile == certificateFile { keyPEM = Array(try ACMEKeyMaterial.privateKeyBlock(at: keyFile).utf8) }
        try install(keyPEM: keyPEM, chainPEM: chainPEM, certificateFile: certificateFile, keyFile: keyFile,
                    note: "Nothing else changed; fix the reload command and renew again.")
        state.remove(state.rollbackCertificate, state.rollbackKey, state.liveCSR)
        var nextNote = ""
        if AtomicFile.exists(state.nextKey) {
            nextNote = " The next key \((try? ACMEKeyMaterial.pin(ofKeyAt: state.nextKey)) ?? "(unreadable)") stays pinned for the following renewal."
        }
        report.say("installed certificate \(serial) (the live key \(live)) for \(host) and reloaded.")
        throw ACMEFailure(.reusedLiveKey, "WARNING: renewed \(host) with its live key \(live) (certificate \(serial)), because the rotation gate stayed closed with the certificate close to expiry. Rotation postponed: no key was retired or added.\(nextNote) Find out why the gate stays closed ('pinset rotation status \(customer) \(host) --json', the access log) before the next renewal.")
    }

    func leafPin(_ certificate: Certificate, _ file: String) throws(ACMEFailure) -> String {
        do { return try ACMEKeyMaterial.pin(of: certificate.publicKey) } catch {
            throw ACMEFailure(.error, "\(file) holds no readable certificate key (\(error)). Nothing was deployed.")
        }
    }

    // MARK: complete

    /// Waits until the host serves the deployed certificate's key, then completes the rotation.
    public func completeDeployed() async throws(ACMEFailure) {
        let (certificateFile, _) = try configuration.deployTargets()
        let lock = try state.lock(host: host)
        defer { withExtendedLifetime(lock) {} }
        let hash: String
        do { hash = try ACMEKeyMaterial.pin(of: ACMEKeyMaterial.leaf(at: certificateFile).publicKey) } catch {
            throw ACMEFailure(.error, "cannot read the deployed certificate \(certificateFile): \(error)")
        }
        try await complete(hash, reason: "acme: certificate with key \(hash) live on \(host) (pinset acme complete)")
        // The copies a deploy keeps until the new certificate is known to be served.
        state.remove(state.rollbackCertificate, state.rollbackKey)
        report.say("done: \(host) serves the key \(hash); keys neither live nor next are retired.")
    }

    /// Waits (PINSET_ACME_WAIT_SECONDS at most) until the host serves `key`, then `rotation complete`: the next
    /// mark of the key now served is cleared and keys neither live, nor next, nor kept are retired.
    func complete(_ key: String, reason: String) async throws(ACMEFailure) {
        let deadline = ContinuousClock.now + .seconds(configuration.waitSeconds)
        while true {
            try await waitUntilServed(key, deadline: deadline)
            let completion: RotationCompletion
            do {
                completion = try await admin.completeRotation(
                    of: configuration.host, of: configuration.customer, keep: Set(configuration.keep), reason: reason, by: admin.localOperator,
                    liveCheck: LiveCheckSettings(caFile: configuration.caFile, connectTo: configuration.connect?.description)
                )
            } catch {
                throw ACMEFailure(.incomplete, "the new certificate is live, but 'pinset rotation complete' failed: \(error) Old keys stay pinned until it succeeds: fix that and run 'pinset acme complete'.")
            }
            for promoted in completion.promoted { report.say("live    \(promoted.base64) (was next)") }
            for retired in completion.retired { report.say("retired \(retired.spkiSHA256?.base64 ?? retired.label)") }
            // Right after a reload, a handshake can still reach a process of the old configuration: the completion
            // then saw the old key live and left every pin in place, so it runs again until it sees the new one.
            guard completion.remaining.contains(where: { $0.isNext && $0.pin.spkiSHA256?.base64 == key }) else { return }
            if ContinuousClock.now >= deadline {
                throw ACMEFailure(.incomplete, "\(host) at \(configuration.connectDescription) still presents an older certificate on some connections after \(configuration.waitSeconds) s, so the new key \(key) stays marked next and old keys stay pinned. Check that every server process reloaded (PINSET_ACME_RELOAD), then run 'pinset acme complete'.")
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }

    /// Returns once a handshake with the host presents `key`; throws 5 at `deadline`.
    func waitUntilServed(_ key: String, deadline: ContinuousClock.Instant) async throws(ACMEFailure) {
        let fetcher = LiveChainFetcher(roots: .system, timeout: .seconds(10))
        while true {
            var served: String?
            if let chain = try? await fetcher.fetchChain(host: host, port: configuration.connect?.port ?? 443, connectTo: configuration.connect, verify: false),
               let leaf = chain.first {
                served = try? ACMEKeyMaterial.pin(of: leaf.publicKey)
            }
            if served == key { return }
            if ContinuousClock.now >= deadline {
                throw ACMEFailure(.incomplete, "\(host) at \(configuration.connectDescription) still serves \(served ?? "no certificate (no TLS answer)") instead of the new key \(key) after \(configuration.waitSeconds) s. Check PINSET_ACME_RELOAD and PINSET_ACME_CONNECT; once the new certificate is served, run 'pinset acme complete'.")
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }

    // MARK: status and due

    /// The deployed certificate, the next key and the gate's verdict on it: returns when it is safe, throws 3 or 4
    /// (with the gate's reasons) otherwise.
    public func status() throws(ACMEFailure) {
        if let certificateFile = configuration.certificateFile, AtomicFile.exists(certificateFile) {
            if let leaf = try? ACMEKeyMaterial.leaf(at: certificateFile) {
                report.say("deployed: \(certificateFile), key \((try? ACMEKeyMaterial.pin(of: leaf.publicKey)) ?? "unreadable"), expires \(Self.format(leaf.notValidAfter))")
            } else {
                report.say("deployed: \(certificateFile), unreadable")
            }
        }
        guard AtomicFile.exists(state.nextKey) else {
            throw ACMEFailure(.noNextKey, "no next key in \(state.path): run 'pinset acme bootstrap'.")
        }
        let hash = try ACMEKeyMaterial.pin(ofKeyAt: state.nextKey)
        report.say("next key: \(hash) (\(state.nextKey))")
        let (verdict, reasons) = try gate(hash)
        report.say("gate: \(verdict.rawValue)")
        switch verdict {
        case .safe: return
        case .notYet: throw ACMEFailure(.notYet, "the next key \(hash) of \(host) is pinned but not yet safe to go live (above: why).", detail: reasons)
        case .noNextKey: throw ACMEFailure(.noNextKey, "the next key \(hash) is not a next pin of \(host) of '\(customer)'. Pin it with 'pinset acme bootstrap'.", detail: reasons)
        }
    }

    /// Whether the deployed certificate is due for renewal: missing, or fewer than PINSET_ACME_RENEW_DAYS (default:
    /// a third of its lifetime) left.
    public func isDue() throws(ACMEFailure) -> Bool {
        try notDue() == nil
    }

    /// nil when due; otherwise when the deployed certificate expires.
    func notDue() throws(ACMEFailure) -> Date? {
        let (certificateFile, _) = try configuration.deployTargets()
        guard AtomicFile.exists(certificateFile) else { return nil }
        let leaf: Certificate
        do { leaf = try ACMEKeyMaterial.leaf(at: certificateFile) } catch {
            throw ACMEFailure(.error, "cannot read the validity of \(certificateFile): \(error.message)")
        }
        let needed = configuration.renewDays.map { TimeInterval($0) * 86400 }
            ?? leaf.notValidAfter.timeIntervalSince(leaf.notValidBefore) / 3
        return leaf.notValidAfter.timeIntervalSince(now()) < needed ? nil : leaf.notValidAfter
    }

    /// When the deployed certificate expires, if that is within PINSET_ACME_REUSE_DAYS (never when that is 0).
    func expiresWithinReuseDays() throws(ACMEFailure) -> Date? {
        guard configuration.reuseDays > 0, let certificateFile = configuration.certificateFile, AtomicFile.exists(certificateFile),
              let leaf = try? ACMEKeyMaterial.leaf(at: certificateFile)
        else { return nil }
        return leaf.notValidAfter.timeIntervalSince(now()) < TimeInterval(configuration.reuseDays) * 86400 ? leaf.notValidAfter : nil
    }

    // MARK: Files

    func moveFile(_ from: String, to: String) throws(ACMEFailure) {
        guard rename(from, to) == 0 else {
            throw ACMEFailure(.error, "could not rename \(from) to \(to): \(String(cString: strerror(errno))).")
        }
    }

    static func format(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle())
    }
}
