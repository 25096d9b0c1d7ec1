import Foundation
import PinsetAdminContract
import PinsetCore
import PinsetFileSystem
import PinsetSigning
import PinsetStore
import X509

/// What `installSigner` put in place.
public struct SignerInstallation: Sendable {
    public var target: SignerTarget
    public var identity: SigningIdentity
    /// Customers whose bundles running servers re-sign with the new signer (same content, same version).
    public var customersResigned: [CustomerName]
}

/// What `raiseRevocationFloor` changed.
public struct RevocationFloorChange: Sendable {
    public var target: SignerTarget
    public var floor: Int64
    public var installedSignerNotBefore: Int64
    /// Customers that got a new version carrying the floor; empty when the floor already was that high, or when
    /// the identity signs for no customer yet.
    public var customersWithNewVersion: [CustomerName]
    /// The floor before this call, `nil` when none was set.
    public var previousFloor: Int64?
    /// Whether this call raised the floor (the first one included).
    public var raisedFloor: Bool { previousFloor.map { floor > $0 } ?? true }
    /// The notBefore of the signer the installed one replaced, when there is one.
    public var previousSignerNotBefore: Int64?

    /// The replaced signer is valid from the floor or later, so the floor does not revoke it.
    public var previousSignerStaysTrusted: Bool { previousSignerNotBefore.map { $0 >= floor } ?? false }
}

extension Admin {
    /// The signing identity a `signer`/`root adopt` operation works on.
    public func signerTarget(customer: String?) throws -> SignerTarget {
        try SignerTarget.resolve(customer: customer, in: dataDirectory, store: store)
    }

    /// Makes a new signer key for `target` and its certificate request, kept beside the identity's key until
    /// the offline root has issued a certificate for it.
    public func requestSigner(for target: SignerTarget, keyType: SigningKeyType, commonName: String) throws {
        let request = try SignerRequest.generate(keyType: keyType, commonName: commonName)
        try AtomicFile.createDirectory(target.files.directory, mode: 0o700)
        let keyPEM = try request.privateKey.serializeAsPEM().pemString + "\n"
        try AtomicFile.write(Array(keyPEM.utf8), to: target.files.pendingKeyPath, mode: 0o600)
        try AtomicFile.write(Array(try request.requestPEM.utf8), to: target.files.requestPath, mode: 0o644)
    }

    /// Installs the signer certificate issued for the pending key of `customer`'s identity (the default one
    /// when `nil`). The certificate must chain to the trust anchor apps embed (or to `newTrustAnchorPath`, a
    /// root certificate, when the anchor is being replaced) and must not be below the revocation floor, or
    /// the server would stop signing with it.
    public func installSigner(certificatePath: String, customer: String?, newTrustAnchorPath: String? = nil, now: Date = Date()) throws -> SignerInstallation {
        let target = try signerTarget(customer: customer)
        let files = target.files
        guard AtomicFile.exists(files.pendingKeyPath) else {
            throw AdminError("No pending signer key at \(files.pendingKeyPath). Run 'pinset signer request\(customer.map { " --customer \($0)" } ?? "")' first and have the root issue a certificate for that request.")
        }
        let pendingKey = try SigningIdentity.privateKey(fromFileContents: try PrivateFilePermissions.read(files.pendingKeyPath, limit: 1024 * 1024), origin: files.pendingKeyPath)
        let anchorPath = newTrustAnchorPath ?? files.certificateDERPath
        let anchors = try PinMaterial.certificates(fromFileContents: try AtomicFile.read(anchorPath, limit: 1024 * 1024), origin: anchorPath)
        if newTrustAnchorPath != nil {
            do {
                try SigningRoot.checkRootCertificate(anchors[0])
            } catch {
                throw AdminError("\(anchorPath): \(error.message) Nothing was changed.")
            }
        }
        let issued = try PinMaterial.certificates(fromFileContents: try AtomicFile.read(certificatePath, limit: 1024 * 1024), origin: certificatePath)
        let identity: SigningIdentity
        do {
            identity = try SigningIdentity.issuedSigner(certificate: issued[0], privateKey: pendingKey, anchor: anchors[0], now: now)
        } catch {
            throw AdminError("\(certificatePath): \(error.message) Nothing was changed.")
        }
        do {
            try identity.requireRemainingValidity(at: now, schedule: signingSchedule)
        } catch {
            throw AdminError("\(certificatePath): \(error)")
        }
        // Installed, it would stop this identity's signing: the server never signs below the floor.
        if let problem = identity.revocationFloorProblem(try store.signersNotBefore(of: target.customer)) {
            throw AdminError("\(certificatePath): \(problem) Nothing was changed.")
        }
        let summary = identity.auditSummary
        let resigned = try files.replace(with: identity) {
            try store.recordSignerCertificateInstalled(for: target.customer, details: summary, actor: actor)
        }
        // The replaced key is not needed to roll back (its certificate is expiring or it was the root key of
        // an adopted deployment, which must not stay online); the pending key and request are used up.
        for leftover in [files.keyPath + ".previous", files.pendingKeyPath, files.requestPath] { unlink(leftover) }
        return SignerInstallation(target: target, identity: identity, customersResigned: resigned)
    }

    /// Revokes every signer certificate of `customer`'s identity (the default one when `nil`) valid from
    /// before `floor` (default: the installed signer's notBefore, the latest floor that keeps it signing), as an
    /// operator.
    public func raiseRevocationFloor(customer: String?, to requestedFloor: Int64?, by principal: AdminPrincipal) throws -> RevocationFloorChange {
        if let account = principal.account, let customer { _ = try pinSet(of: try CustomerName(customer), visibleTo: account) }
        try requireOperator(principal, "raise revocation floors")
        let target = try signerTarget(customer: customer)
        let identity: SigningIdentity
        do {
            identity = try SigningIdentity.load(keyPath: target.files.keyPath, certificatePath: target.files.certificatePEMPath)
        } catch {
            throw AdminError("The installed signer of \(target.label) cannot be read: \(error). Nothing was changed.")
        }
        let installed = identity.certificate.notBeforeUnixSeconds
        let floor = requestedFloor ?? installed
        guard floor <= installed else {
            throw AdminError("The floor \(Self.describe(unixSeconds: floor)) is later than the notBefore \(Self.describe(unixSeconds: installed)) of the signer certificate installed for \(target.label): clients would refuse every bundle this deployment signs. Install a newer signer first ('pinset signer request', 'pinset root issue', 'pinset signer install'), or give a floor no later than \(installed). Nothing was changed.", code: .revocationFloorRefused)
        }
        let details = "signers valid from before \(Self.describe(unixSeconds: floor)) are revoked; installed signer \(identity.auditSummary)"
        let raised = try store.raiseSignersNotBefore(to: floor, for: target.customer, details: details, actor: principal.actor)
        return RevocationFloorChange(
            target: target, floor: floor, installedSignerNotBefore: installed, customersWithNewVersion: raised.customers, previousFloor: raised.previousFloor,
            previousSignerNotBefore: Self.previousSignerNotBefore(target.files, root: identity.trustAnchor)
        )
    }

    /// Makes `target`'s current self-signed key and certificate the offline root written to `rootDirectory`;
    /// apps keep embedding the same certificate.
    public func adoptRoot(of target: SignerTarget, rootDirectory: String) throws -> (root: SigningRoot, locations: SigningRootLocations) {
        let identity = try SigningIdentity.load(keyPath: target.files.keyPath, certificatePath: target.files.certificatePEMPath)
        guard identity.intermediates.isEmpty else {
            throw AdminError("\(target.files.keyPath) already belongs to a signer issued by '\(PinMaterial.describe(identity.trustAnchor.subject))'; the root key is not on this instance. Issue new signers from the machine that holds that root.")
        }
        let root: SigningRoot
        do {
            root = try SigningRoot(privateKey: identity.privateKey, certificate: identity.certificate)
        } catch {
            throw AdminError("\(target.files.certificatePEMPath): \(error.message) Nothing was written.")
        }
        let locations = SigningRootLocations(directory: rootDirectory)
        try root.write(to: locations)
        return (root, locations)
    }

    /// The notBefore of the signer certificate `installSigner` replaced, kept as `*.previous`; `nil` when there
    /// is none, it cannot be read or it is `root`. The signer an instance replaced is usually the one to
    /// revoke; whole seconds make one issued within the same second as the installed signer escape the floor.
    /// The root of an adopted deployment is left out: no floor revokes the key that issues the signers.
    static func previousSignerNotBefore(_ files: IdentityFileSet, root: Certificate) -> Int64? {
        let path = files.certificatePEMPath + ".previous"
        guard AtomicFile.exists(path), let bytes = try? AtomicFile.read(path, limit: 1024 * 1024),
              let certificate = try? PinMaterial.certificates(fromFileContents: bytes, origin: path).first,
              certificate != root else { return nil }
        return certificate.notBeforeUnixSeconds
    }

    /// Unix seconds, or an ISO 8601 date and time with a zone, as a revocation floor.
    public static func parseRevocationFloor(_ text: String) throws -> Int64 {
        let seconds: Int64
        if let integer = Int64(text) {
            seconds = integer
        } else if let date = ISO8601Time.parse(text, dateOnly: false) {
            seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        } else {
            throw AdminError("--not-before '\(text)' is neither Unix seconds nor an existing ISO 8601 time such as 2026-11-23T12:00:00Z. Nothing was changed.")
        }
        guard seconds >= 0 else {
            throw AdminError("--not-before '\(text)' is before 1970-01-01T00:00:00Z (Unix seconds \(seconds)); a revocation floor is a later time, normally the notBefore of a signer certificate. Nothing was changed.")
        }
        return seconds
    }

    /// A time given in Unix seconds, as ISO 8601 with the seconds beside it.
    public static func describe(unixSeconds seconds: Int64) -> String {
        "\(Date(timeIntervalSince1970: TimeInterval(seconds)).formatted(.iso8601)) (\(seconds))"
    }
}
