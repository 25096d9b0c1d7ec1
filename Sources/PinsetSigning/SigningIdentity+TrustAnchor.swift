import Foundation
import PinsetCore
import PinsetVerification
import X509

extension SigningIdentity {
    /// How close to expiry the trust anchor draws a warning: apps in the field need months to receive a new one.
    public static let anchorExpiryWarningInterval: TimeInterval = 90 * 86_400
    /// How close to expiry any other certificate of the chain draws a warning: time to issue a new signer
    /// certificate from the anchor.
    public static let expiryWarningInterval: TimeInterval = 14 * 86_400

    /// The certificate apps embed: the last of the chain, which `checkChain` requires to be self-signed.
    ///
    /// Legacy clients verify with OpenSSL's `PKCS7_verify` and only the embedded certificate as trust store;
    /// without partial-chain verification OpenSSL accepts a path only when it ends in a self-signed
    /// certificate of that store. The signer itself is the anchor only when it is self-signed.
    public var trustAnchor: Certificate { intermediates.last ?? certificate }

    /// DER of `trustAnchor`: what `pinset init` prints and writes to `trust-cert.der`. Throws rather than give
    /// an empty anchor, which apps would embed and then reject every bundle with.
    public var trustAnchorDER: [UInt8] {
        get throws(SigningIdentityError) {
            do {
                return try PinMaterial.derBytes(of: trustAnchor)
            } catch {
                throw SigningIdentityError("The trust anchor '\(PinMaterial.describe(trustAnchor.subject))' cannot be encoded as DER: \(error).")
            }
        }
    }

    /// Checks that every certificate is within its validity dates at `now`, then `checkChainStructure()`.
    ///
    /// - Returns: `expiryWarnings(at:)`.
    /// - Throws: when a certificate is expired or not yet valid, or the structure is refused.
    public func checkChain(at now: Date) throws(SigningIdentityError) -> [String] {
        for (index, certificate) in chain.enumerated() {
            let name = Self.describe(certificate, index: index)
            if now < certificate.notValidBefore {
                throw SigningIdentityError("\(name) is not valid before \(Self.format(certificate.notValidBefore)); clients reject bundles it vouches for until then. Check the system clock or the certificate.")
            }
            if now > certificate.notValidAfter {
                throw SigningIdentityError("\(name) expired on \(Self.format(certificate.notValidAfter)); clients reject every bundle it vouches for. Issue a new certificate.")
            }
        }
        try checkChainStructure()
        return expiryWarnings(at: now)
    }

    /// Checks what does not change with time: that the chain leads from the signer to a self-signed anchor,
    /// each certificate issued (name and signature) by the next, and that it meets OpenSSL's S/MIME signing
    /// purpose (`SMIMEUsage`) as legacy clients apply it: every issuer a CA, every extendedKeyUsage with
    /// emailProtection.
    ///
    /// - Throws: when the chain is out of order, goes through a certificate OpenSSL refuses, or does not end
    ///   in a self-signed certificate (then no anchor an app could embed is known).
    public func checkChainStructure() throws(SigningIdentityError) {
        let chain = self.chain
        for (index, certificate) in chain.enumerated() {
            let name = Self.describe(certificate, index: index)
            if index + 1 < chain.count {
                let issuer = chain[index + 1]
                guard certificate.issuer == issuer.subject, issuer.publicKey.isValidSignature(certificate.signature, for: certificate) else {
                    throw SigningIdentityError("\(name) is not issued by the certificate after it ('\(PinMaterial.describe(issuer.subject))'). Order the file signer first, then each issuer, ending with the root the apps embed.")
                }
                // OpenSSL refuses a path through an issuer that is not a CA by its own rules (`check_ca`).
                let problem: String?
                do { problem = try SMIMEUsage.issuerProblem(issuer) } catch {
                    throw SigningIdentityError("The key usage extensions of '\(PinMaterial.describe(issuer.subject))' are malformed: \(error).")
                }
                if let problem {
                    throw SigningIdentityError("'\(PinMaterial.describe(issuer.subject))' issues '\(PinMaterial.describe(certificate.subject))' but \(problem), so OpenSSL-based clients reject the chain. Reissue it with basicConstraints CA:TRUE and, if it has a keyUsage, keyCertSign.")
                }
            }
            // OpenSSL's S/MIME purpose applies to every certificate of the chain, the root included.
            let allowsSMIME: Bool
            do { allowsSMIME = try SMIMEUsage.extendedKeyUsageAllowsSMIME(certificate) } catch {
                throw SigningIdentityError("The extendedKeyUsage of \(name) is malformed: \(error).")
            }
            if !allowsSMIME {
                throw SigningIdentityError("\(name) has an extendedKeyUsage without emailProtection, so OpenSSL's S/MIME verification in legacy clients rejects every bundle signed through it. Reissue it with extendedKeyUsage=emailProtection or without the extension.")
            }
        }
        let anchor = trustAnchor
        guard anchor.issuer == anchor.subject, anchor.publicKey.isValidSignature(anchor.signature, for: anchor) else {
            throw SigningIdentityError("The chain ends with '\(PinMaterial.describe(anchor.subject))', issued by '\(PinMaterial.describe(anchor.issuer))', which is not in the file. Apps can only embed a self-signed root as the trust anchor (OpenSSL-based clients reject any other): append the root certificate the apps embed to the certificate file.")
        }
    }

    /// Checks `checkChainStructure()` and that the chain ends in `anchor`, the certificate the apps embed
    /// (`trust-cert.der`): a chain that verifies on its own but leads to another root signs bundles that every
    /// app refuses.
    public func checkChain(endingIn anchor: Certificate) throws(SigningIdentityError) {
        try checkChainStructure()
        guard trustAnchor == anchor else {
            let embedded = "the trust anchor the apps embed ('\(PinMaterial.describe(anchor.subject))')"
            let found = intermediates.isEmpty ? "is self-signed, not issued by \(embedded)" : "leads to the root '\(PinMaterial.describe(trustAnchor.subject))', not to \(embedded)"
            throw SigningIdentityError("The signing certificate '\(PinMaterial.describe(certificate.subject))' \(found), so apps reject every bundle it signs.")
        }
    }

    /// Warnings for certificates of the chain that expire soon: the trust anchor within
    /// `anchorExpiryWarningInterval`, any other within `expiryWarningInterval` of the moment the server stops
    /// signing with it, `lead` before its expiry (the bundle lifetime: no bundle may outlive its signer).
    public func expiryWarnings(at now: Date, stopsSigningBefore lead: TimeInterval = SigningSchedule.default.minimumRemainingValidity) -> [String] {
        let anchor = trustAnchor
        return chain.enumerated().compactMap { index, certificate in
            let remaining = certificate.notValidAfter.timeIntervalSince(now)
            let threshold = (certificate == anchor ? Self.anchorExpiryWarningInterval : Self.expiryWarningInterval) + lead
            guard remaining < threshold else { return nil }
            let name = Self.describe(certificate, index: index)
            guard remaining > 0 else {
                return "\(name) expired on \(Self.format(certificate.notValidAfter)): clients reject every bundle it vouches for."
            }
            let days = Int((remaining / 86_400).rounded())
            let consequence = certificate == anchor
                ? "every app that embeds it rejects all bundles after that; ship apps with a new anchor well before"
                : "bundles are rejected after that unless it is replaced"
            let stop = certificate.notValidAfter.addingTimeInterval(-lead)
            let stops = lead > 0 ? " The server stops signing with it from \(Self.format(stop)), \(Int(lead)) s before, so that no bundle outlives it." : ""
            return "\(name) expires on \(Self.format(certificate.notValidAfter)), in \(days) day\(days == 1 ? "" : "s"): \(consequence).\(stops)"
        }
    }

    private static func describe(_ certificate: Certificate, index: Int) -> String {
        "The \(index == 0 ? "signing" : "chain") certificate '\(PinMaterial.describe(certificate.subject))'"
    }

}
