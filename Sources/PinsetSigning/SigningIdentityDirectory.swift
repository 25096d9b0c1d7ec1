import Foundation
import PinsetCore
import PinsetFileSystem
import X509

/// The one place that decides which identity signs a customer's bundle: the deployment's default, or the
/// customer's own — never the default in place of a missing own key (that customer's apps do not trust it).
///
/// Parsed identities are cached per key file and reused while `lstat` of the key, certificate and anchor files
/// shows no change, so a pass costs three `lstat` calls per own identity instead of parsing an RSA-4096 key per
/// customer; any change (write, rename, `chmod`, `chown`) re-reads the files through
/// `SigningIdentity.load`, with all of its permission checks, and verifies the chain again to the anchor the
/// apps embed (`trust-cert.der`): files edited by hand can pair the key with a chain no app accepts. Validity
/// is checked on every lookup.
///
/// Thread-safe.
public final class SigningIdentityDirectory: @unchecked Sendable {
    // `@unchecked Sendable`: `cache` is only touched under `lock`.

    /// Files to read identities from; `nil` when the default identity was given in memory.
    public let locations: SigningIdentityLocations?
    private let fixedDefault: Checked?
    private let lock = NSLock()
    private var cache: [String: CachedIdentity] = [:]
    /// Identities loaded since the last pass whose certificate differs from the one cached before.
    private var announcements: [String] = []

    private struct Problem: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    private struct CachedIdentity {
        let key: FileMetadata
        let certificate: FileMetadata
        let anchor: FileMetadata
        let identity: Checked
    }

    /// An identity with its validity window and what its chain lacks, computed once when it is loaded.
    private struct Checked {
        let identity: SigningIdentity
        let window: ClosedRange<Date>
        /// Why the chain does not lead to the anchor the apps embed; never signs while set. Kept with the
        /// identity rather than failing the load, so that `/status` still lists its certificates.
        let chainProblem: String?

        init(_ identity: SigningIdentity, chainProblem: String? = nil) {
            self.identity = identity
            self.window = identity.validityWindow
            self.chainProblem = chainProblem
        }

        /// The full check (and its message) runs only when the cheap comparison says something is wrong.
        func problem(at now: Date, bundleExpires: Date) -> String? {
            if window.contains(now) && bundleExpires <= window.upperBound { return nil }
            return identity.validityProblem(at: now, bundleExpires: bundleExpires)
                ?? "the certificates of this identity are not valid together at \(now)"
        }

        /// Validity, then the revocation floor the pin sets signed by this identity carry, then the chain.
        func problem(at now: Date, bundleExpires: Date, signersNotBefore: Int64?) -> String? {
            problem(at: now, bundleExpires: bundleExpires) ?? identity.revocationFloorProblem(signersNotBefore) ?? chainProblem
        }

        /// The cheap comparison first: the full chain walk runs only within the longest warning interval.
        func warnings(at now: Date, stopsSigningBefore lead: TimeInterval) -> [String] {
            window.upperBound.timeIntervalSince(now) < SigningIdentity.anchorExpiryWarningInterval + lead ? identity.expiryWarnings(at: now, stopsSigningBefore: lead) : []
        }
    }

    /// Reads the default and customers' identities from files.
    public init(locations: SigningIdentityLocations) {
        self.locations = locations
        self.fixedDefault = nil
    }

    /// Signs every customer with `defaultIdentity`; a customer recorded with its own identity is refused,
    /// since there is no key directory to read it from.
    public init(defaultIdentity: SigningIdentity) {
        self.locations = nil
        self.fixedDefault = Checked(defaultIdentity)
    }

    /// The identity to sign `customer`'s bundle with, valid from `now` until `bundleExpires` and from no earlier
    /// than the revocation floor `signersNotBefore` of that identity.
    public func identity(
        for customer: CustomerName,
        signer: SignerAssignment,
        now: Date,
        bundleExpires: Date,
        signersNotBefore: Int64? = nil
    ) -> Result<SigningIdentity, SigningIdentityFailure> {
        let loaded: Result<Checked, Problem> = switch signer {
        case .deploymentDefault: defaultIdentity()
        case .customerOwn: ownIdentity(of: customer)
        }
        switch loaded {
        case .failure(let problem):
            return .failure(SigningIdentityFailure(customer: customer, signer: signer, reason: problem.reason))
        case .success(let checked):
            if let problem = checked.problem(at: now, bundleExpires: bundleExpires, signersNotBefore: signersNotBefore) {
                return .failure(SigningIdentityFailure(customer: customer, signer: signer, reason: problem))
            }
            return .success(checked.identity)
        }
    }

    /// Looks up every customer's identity for one pass: the default identity once, each own identity once.
    /// An identity whose certificate is valid from before the revocation floor its pin sets carry
    /// (`PinSetHeader.signersNotBefore`, read from the store with the assignment) does not sign: its clients would
    /// refuse the bundles.
    public func resolve(_ headers: [PinSetHeader], now: Date, bundleExpires: Date) -> SigningIdentityResolution {
        // Every customer of the default identity carries that identity's one floor.
        let defaultHeader = headers.first { $0.signer == .deploymentDefault }
        // Loaded once per pass, so the identity that signs is the one reported and warned about, even when its
        // files are replaced during the pass.
        let loadedDefault = defaultIdentity()
        let defaultResult: Result<Checked, Problem>? = defaultHeader.map { header in
            loadedDefault.flatMap { checked in
                checked.problem(at: now, bundleExpires: bundleExpires, signersNotBefore: header.signersNotBefore).map { .failure(Problem($0)) } ?? .success(checked)
            }
        }
        var warnings: [String] = []
        var expiry = SigningIdentityExpiry()
        var figures: [SigningIdentityExpiry.Figures] = []
        if case .success(let checked) = defaultResult {
            expiry.include(checked.identity)
        }
        // Listed even when it cannot sign (its expiry is then what the operator looks for) or signs no one.
        if case .success(let checked) = loadedDefault {
            figures.append(.init(customer: nil, identity: checked.identity, signersNotBefore: defaultHeader?.signersNotBefore, stopsSigningBefore: bundleExpires.timeIntervalSince(now)))
        }
        // Warned about even while no customer uses it: it signs the next customer added.
        if case .success(let checked) = defaultResult ?? loadedDefault {
            warnings += checked.warnings(at: now, stopsSigningBefore: bundleExpires.timeIntervalSince(now)).map { "default signing identity: \($0)" }
        }
        var signers: [Result<SigningIdentity, SigningIdentityFailure>] = []
        signers.reserveCapacity(headers.count)
        for header in headers {
            switch header.signer {
            case .deploymentDefault:
                signers.append((defaultResult ?? .failure(Problem("no default signing identity"))).map(\.identity).mapError {
                    SigningIdentityFailure(customer: header.customer, signer: .deploymentDefault, reason: $0.reason)
                })
            case .customerOwn:
                switch ownIdentity(of: header.customer) {
                case .failure(let problem):
                    signers.append(.failure(SigningIdentityFailure(customer: header.customer, signer: .customerOwn, reason: problem.reason)))
                case .success(let checked):
                    figures.append(.init(customer: header.customer, identity: checked.identity, signersNotBefore: header.signersNotBefore, stopsSigningBefore: bundleExpires.timeIntervalSince(now)))
                    if let problem = checked.problem(at: now, bundleExpires: bundleExpires, signersNotBefore: header.signersNotBefore) {
                        signers.append(.failure(SigningIdentityFailure(customer: header.customer, signer: .customerOwn, reason: problem)))
                    } else {
                        warnings += checked.warnings(at: now, stopsSigningBefore: bundleExpires.timeIntervalSince(now)).map { "customer '\(header.customer)': \($0)" }
                        expiry.include(checked.identity)
                        signers.append(.success(checked.identity))
                    }
                }
            }
        }
        if let locations {
            // Keys of customers that were removed or went back to the default key are not kept in memory.
            var inUse: Set<String> = [locations.defaultKeyPath]
            for header in headers where header.signer == .customerOwn { inUse.insert(locations.keyPath(of: header.customer)) }
            lock.withLock { cache = cache.filter { inUse.contains($0.key) } }
        }
        let defaultProblem: String? = if case .failure(let problem) = defaultResult { problem.reason } else { nil }
        let loaded = lock.withLock {
            defer { announcements = [] }
            return announcements
        }
        return SigningIdentityResolution(
            identities: signers, defaultIdentityProblem: defaultProblem, warnings: warnings, expiry: expiry, identityExpiries: figures, loaded: loaded
        )
    }

    // MARK: - Loading

    private func defaultIdentity() -> Result<Checked, Problem> {
        if let fixedDefault { return .success(fixedDefault) }
        guard let locations else { return .failure(Problem("no default signing identity is configured")) }
        return cachedLoad(keyPath: locations.defaultKeyPath, certificatePath: locations.defaultCertificatePath, anchorPath: locations.defaultAnchorPath, missingKey: {
            "the default signing key \(locations.defaultKeyPath) does not exist. Restore it from the backup, or set signingKeyPath."
        })
    }

    private func ownIdentity(of customer: CustomerName) -> Result<Checked, Problem> {
        guard let locations else {
            return .failure(Problem("this customer signs with its own key, but no customer key directory is configured; it is not signed with the default key, which its apps do not trust"))
        }
        let keyPath = locations.keyPath(of: customer)
        return cachedLoad(keyPath: keyPath, certificatePath: locations.certificatePEMPath(of: customer), anchorPath: locations.certificateDERPath(of: customer), missingKey: {
            "this customer signs with its own key, but \(keyPath) does not exist. Restore it from the backup (mode 0600) or give the customer a new identity with 'pinset customer identity rotate \(customer)'; it is not signed with the default key, which its apps do not trust."
        })
    }

    private func cachedLoad(keyPath: String, certificatePath: String, anchorPath: String, missingKey: () -> String) -> Result<Checked, Problem> {
        guard let keyMetadata = FileMetadata.of(keyPath) else {
            let error = errno
            forget(keyPath)
            return .failure(Problem(error == ENOENT ? missingKey() : "cannot read \(keyPath): \(String(cString: strerror(error)))"))
        }
        let certificateMetadata = FileMetadata.of(certificatePath)
        let anchorMetadata = FileMetadata.of(anchorPath)
        if let certificateMetadata, let anchorMetadata, let cached = lock.withLock({ cache[keyPath] }),
           cached.key.isUnchanged(comparedTo: keyMetadata), cached.certificate.isUnchanged(comparedTo: certificateMetadata),
           cached.anchor.isUnchanged(comparedTo: anchorMetadata) {
            return .success(cached.identity)
        }
        do {
            let identity = try SigningIdentity.load(keyPath: keyPath, certificatePath: certificatePath)
            let checked = Checked(identity, chainProblem: Self.chainProblem(identity, certificatePath: certificatePath, anchorPath: anchorPath))
            let announcement = "\(keyPath) signs with \(checked.identity.announcement) from now"
            lock.withLock {
                // A chain no app accepts never signs, so it is not announced as the signer.
                if checked.chainProblem == nil, cache[keyPath]?.identity.identity.certificate != checked.identity.certificate {
                    announcements.append(announcement)
                }
                if let certificateMetadata, let anchorMetadata {
                    cache[keyPath] = CachedIdentity(key: keyMetadata, certificate: certificateMetadata, anchor: anchorMetadata, identity: checked)
                }
            }
            return .success(checked)
        } catch {
            forget(keyPath)
            return .failure(Problem(String(describing: error)))
        }
    }

    /// Why the chain in `certificatePath` does not lead to the anchor in `anchorPath`, or `nil`.
    private static func chainProblem(_ identity: SigningIdentity, certificatePath: String, anchorPath: String) -> String? {
        let anchor: Certificate
        do {
            let bytes = try AtomicFile.read(anchorPath, limit: 1024 * 1024)
            anchor = try PinMaterial.certificates(fromFileContents: bytes, origin: anchorPath)[0]
        } catch {
            return "the trust anchor the apps embed cannot be read from \(anchorPath) (\(error)), so the chain in \(certificatePath) cannot be checked against it; nothing is signed with this identity until it is. Put the root certificate the apps embed there in DER form ('openssl x509 -in root.pem -outform der -out \(anchorPath)')."
        }
        do {
            try identity.checkChain(endingIn: anchor)
            return nil
        } catch {
            return "the chain in \(certificatePath) does not lead to the trust anchor in \(anchorPath): \(error.message) Nothing is signed with this identity until it does. Put back the signer certificate issued by that anchor, followed by its chain, or install a new one ('pinset signer request', 'pinset root issue', 'pinset signer install', with --customer NAME for a customer's own identity)."
        }
    }

    private func forget(_ keyPath: String) {
        lock.withLock { _ = cache.removeValue(forKey: keyPath) }
    }
}

/// The identities of one signing pass, in the order of the pin sets they were resolved for.
public struct SigningIdentityResolution: Sendable {
    public let identities: [Result<SigningIdentity, SigningIdentityFailure>]
    /// Why the deployment's default identity cannot sign, when a customer needed it.
    public let defaultIdentityProblem: String?
    /// Certificates close to their expiry.
    public let warnings: [String]
    /// When the first signer and the first root of the identities that signed expire.
    public let expiry: SigningIdentityExpiry
    /// Each identity whose files could be loaded, usable or not (the default first, then customers' own, by
    /// customer name), with its certificates' expiry and revocation floor.
    public let identityExpiries: [SigningIdentityExpiry.Figures]
    /// Identities (re)loaded with a new certificate since the previous pass, for the log: which certificate
    /// signs from when.
    public let loaded: [String]
}
