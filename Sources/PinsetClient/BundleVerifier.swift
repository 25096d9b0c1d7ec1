import Foundation
import PinsetCore
import PinsetVerification
import X509

/// Turns signed bundle bytes into a `VerifiedPinSet`, or says which check failed.
///
/// The checks run in a fixed order against one `now`, and the first failure is reported:
/// 1. the CMS signature, against the configured trust anchors only (`SignatureVerifier`: SHA-256/384/512,
///    exactly one signer, chain and validity of the signer certificate at `now`, or for a seed at the time it
///    says it was signed);
/// 2. the payload parses with every key of the right JSON type (`BundlePayload.decode`);
/// 3. `customer` is the configured customer;
/// 4. the signer certificate's notBefore is not earlier than the revocation floor: the highest
///    `signers-not-before` of this bundle, of the last accepted one and of any accepted before (`signersNotBefore`),
///    and the bundle's `timestamp` lies within the signer certificate's validity (a stored bundle is verified
///    again at that time, so one signed outside it would be lost at the next start);
/// 5. bounds (`BundleBounds`): the lifetime `expires - timestamp` is at most `maximumBundleLifetime`, and
///    `version` lies at most `BundleBounds.maximumVersionLead` ahead of the bundle's own signing time, and no
///    host's report-only window ends more than `BundleBounds.maximumReportOnlySeconds` after it;
/// 6. freshness: signed no longer than `freshnessWindow` ago (downloads only) and not further in the future
///    than `allowedClockSkew`;
/// 7. `expires` is later than `now` (at `now == expires` the bundle is already expired); downloads only;
/// 8. the version is not lower than the last accepted one (rollback), and an equal version carries the same
///    content digest — unless the floor of step 4 revokes the signer of the last accepted bundle. Then that
///    bundle came from a revoked key (a leaked key may have pushed its version to the limit of step 5), and
///    this one replaces it whatever its version: fast-forward recovery, as TUF discards metadata whose keys
///    were rotated away (spec 5.3.11). Step 4 keeps refusing the revoked key's bundles from then on. Not for a
///    download under a transparency policy: there every bundle held was in the log, so a revoked key cannot
///    have pushed its version without the log key too, while a leaked current key could sign any older logged
///    content with a floor that revokes the held signer and so roll the app back to it (an empty pin set even)
///    with a genuine proof. A signer key stolen together with the log key is recovered from with a new log key
///    (docs/transparency.md): the log stops advancing at the witnesses, and apps keep refusing until they ship it.
///
/// `now` is the caller's time; `PinsetUpdater` never passes a time earlier than the latest signing time of
/// the bundles it holds, so a device clock set back cannot make an expired bundle or certificate good again.
///
/// Nothing is parsed as JSON before the signature holds, so a hostile body only ever reaches the strict DER
/// parser of the CMS envelope.
public enum BundleVerifier {
    /// Where the bundle comes from, which decides whether freshness applies.
    public enum Source: Hashable, Sendable {
        /// From the network: every check applies.
        case download
        /// Shipped inside the app, and checked as the state file is: its chain at the time it was signed, with
        /// neither freshness nor expiry. An app is installed months after its release, long after any bundle it
        /// ships has expired and its signer certificate too; refusing the seed then would leave the first
        /// launch unpinned for as long as someone blocks the trust server. Freshness and expiry protect against
        /// a network attacker replaying an old bundle, and a seed does not come from the network: it arrives
        /// with the app's own (platform-signed) code. Every other check applies, and the rollback check means a
        /// seed never replaces newer pins.
        case seed
    }

    /// The time the signature of a bundle from `source` is verified at: `now`, or for a seed the time its
    /// payload says it was signed. That time is read before the signature holds only to choose when to verify;
    /// the verified payload carries the same bytes, and step 4 holds it within the signer's validity.
    static func signatureTime(of signedBundle: [UInt8], source: Source, now: Date) -> Date {
        guard source == .seed, let content = SignatureVerifier.unverifiedContent(of: signedBundle),
              let claimed = try? BundlePayload.decode(content) else { return now }
        return Date(timeIntervalSince1970: TimeInterval(claimed.timestamp))
    }

    /// Whether a bundle from `source` may replace pins whose signer the revocation floor revokes whatever its
    /// version (step 8).
    static func allowsFastForward(_ source: Source, _ configuration: PinsetClientConfiguration) -> Bool {
        source != .download || configuration.transparency == nil
    }

    /// Runs every check above on `signedBundle` and returns the pins it carries, or the first check that failed.
    /// Stateless: `PinsetUpdater` calls it with what it holds; a program without one passes its own.
    ///
    /// - Parameters:
    ///   - lastAccepted: the pin set held, for the rollback and same-version checks (step 8); `nil` for none.
    ///   - signersNotBefore: the revocation floor held, Unix seconds (`PinsetUpdater.signersNotBefore`).
    ///   - source: `.download` for bytes from the network, `.seed` for a bundle shipped with the app.
    ///   - now: the time the checks run at; never earlier than the signing time of the bundles held.
    public static func verify(
        _ signedBundle: [UInt8],
        configuration: PinsetClientConfiguration,
        lastAccepted: VerifiedPinSet?,
        signersNotBefore: Int64? = nil,
        source: Source,
        at now: Date
    ) async -> Result<VerifiedPinSet, PinUpdateError> {
        switch await verifySignature(signedBundle, trustAnchors: configuration.trustAnchors, at: signatureTime(of: signedBundle, source: source, now: now)) {
        case .failure(let error):
            return .failure(error)
        case .success(let content):
            return checkContent(
                content, signedBundle: signedBundle, configuration: configuration, lastAccepted: lastAccepted,
                signersNotBefore: signersNotBefore, source: source, at: now
            )
        }
    }

    /// Step 1 alone. Kept apart so that the updater can run the remaining, synchronous steps against the
    /// state as it is after this suspension point.
    static func verifySignature(
        _ signedBundle: [UInt8],
        trustAnchors: [Certificate],
        at time: Date
    ) async -> Result<SignatureVerifiedContent, PinUpdateError> {
        switch await SignatureVerifier.verify(signedBundle, trustAnchors: trustAnchors, at: time) {
        case .success(let content): .success(content)
        case .failure(let error): .failure(PinUpdateError(.signature(error.code), error.reason))
        }
    }

    /// Steps 2–7.
    static func checkContent(
        _ content: SignatureVerifiedContent,
        signedBundle: [UInt8],
        configuration: PinsetClientConfiguration,
        lastAccepted: VerifiedPinSet?,
        signersNotBefore: Int64?,
        source: Source,
        at now: Date
    ) -> Result<VerifiedPinSet, PinUpdateError> {
        let payload: BundlePayload
        do {
            payload = try BundlePayload.decode(content.content)
        } catch {
            return .failure(PinUpdateError(.malformedPayload, "the signed content is not a valid bundle payload: \(error)"))
        }
        guard payload.customer == configuration.customer else {
            return .failure(PinUpdateError(.wrongCustomer, "the bundle is for customer '\(payload.customer)', not '\(configuration.customer)'"))
        }
        let floor = effectiveFloor(signersNotBefore, lastAccepted, payload)
        if let problem = revocationProblem(signer: content.signer, floor: floor) {
            return .failure(problem)
        }
        if let problem = signingTimeProblem(signer: content.signer, timestamp: payload.timestamp) {
            return .failure(problem)
        }
        if let problem = BundleBounds.lifetimeProblem(
            timestamp: payload.timestamp, expires: payload.expires, maximumLifetimeSeconds: configuration.maximumBundleLifetime.wholeSeconds
        ) {
            return .failure(PinUpdateError(.lifetimeTooLong, problem))
        }
        if let problem = BundleBounds.versionProblem(version: payload.version, signedAt: payload.timestamp) {
            return .failure(PinUpdateError(.versionAheadOfSigningTime, problem))
        }
        if let problem = BundleBounds.reportOnlyProblem(hosts: payload.hosts, signedAt: payload.timestamp) {
            return .failure(PinUpdateError(.reportOnlyTooLong, problem))
        }
        let nowSeconds = Int64(now.timeIntervalSince1970.rounded(.down))
        if source == .download, nowSeconds - payload.timestamp > configuration.freshnessWindow.wholeSeconds {
            return .failure(PinUpdateError(.stale, "signed \(nowSeconds - payload.timestamp) s ago; the freshness window is \(configuration.freshnessWindow.wholeSeconds) s"))
        }
        if payload.timestamp - nowSeconds > configuration.allowedClockSkew.wholeSeconds {
            return .failure(PinUpdateError(.fromTheFuture, "signed \(payload.timestamp - nowSeconds) s in the future; the allowed clock skew is \(configuration.allowedClockSkew.wholeSeconds) s"))
        }
        guard source == .seed || nowSeconds < payload.expires else {
            return .failure(PinUpdateError(.expired, "expired \(nowSeconds - payload.expires) s ago (a bundle is valid while now < expires)"))
        }
        if let lastAccepted, !(allowsFastForward(source, configuration) && revokesSigner(of: lastAccepted, floors: floor)) {
            guard payload.version >= lastAccepted.version else {
                return .failure(PinUpdateError(.rollback, "version \(payload.version) is lower than the accepted version \(lastAccepted.version)"))
            }
            if payload.version == lastAccepted.version, payload.contentDigest != lastAccepted.contentDigest {
                return .failure(PinUpdateError(.versionContentMismatch, "version \(payload.version) was accepted before with different pins"))
            }
        }
        return .success(VerifiedPinSet(payload: payload, signedBundle: signedBundle, origin: source == .download ? .downloaded : .seed, signer: content.signer))
    }

    /// The revocation floor a new bundle is checked under: the highest of the floor in force, the held bundle's
    /// and the new bundle's own.
    static func effectiveFloor(_ floorInForce: Int64?, _ held: VerifiedPinSet?, _ payload: BundlePayload) -> Int64? {
        [floorInForce, held?.payload.signersNotBefore, payload.signersNotBefore].compactMap { $0 }.max()
    }

    /// Whether the highest of `floors` revokes the signer of `held`: then the bundle that brought such a floor
    /// replaces `held` whatever the versions (fast-forward recovery, step 8), on download, seed and state-file
    /// reload alike.
    static func revokesSigner(of held: VerifiedPinSet?, floors: Int64?...) -> Bool {
        guard let held else { return false }
        return revocationProblem(signer: held.signer, floor: (floors + [held.payload.signersNotBefore]).compactMap { $0 }.max()) != nil
    }

    /// Why a bundle that says it was signed at `timestamp` cannot have been signed by `signer`, or `nil`.
    static func signingTimeProblem(signer: Certificate, timestamp: Int64) -> PinUpdateError? {
        let signedAt = Date(timeIntervalSince1970: TimeInterval(timestamp))
        guard signedAt < signer.notValidBefore || signedAt > signer.notValidAfter else { return nil }
        return PinUpdateError(
            .signature(.untrustedSigner),
            "the bundle says it was signed at \(timestamp), outside the validity of its signer certificate '\(PinMaterial.describe(signer.subject))' (\(signer.notBeforeUnixSeconds) to \(Int64(signer.notValidAfter.timeIntervalSince1970))): a bundle is signed while its certificate is valid"
        )
    }

    /// Why a bundle signed by `signer` must be refused under the revocation floor `floor`, or `nil`.
    static func revocationProblem(signer: Certificate, floor: Int64?) -> PinUpdateError? {
        guard let floor, signer.isRevoked(bySignersNotBefore: floor) else { return nil }
        return PinUpdateError(.revokedSigner, "the signer certificate '\(PinMaterial.describe(signer.subject))' is valid from \(signer.notBeforeUnixSeconds), earlier than the revocation floor signers-not-before \(floor): its key was revoked")
    }

    /// Re-verifies a stored bundle: signature, customer and the version bound only (see `StoredPinState` for
    /// why). The chain is
    /// checked at the bundle's own signing time, so pins stay usable offline after the signer certificate
    /// has expired.
    static func verifyStored(
        _ signedBundle: [UInt8],
        signedAt timestamp: Int64,
        configuration: PinsetClientConfiguration
    ) async -> Result<VerifiedPinSet, PinUpdateError> {
        let time = Date(timeIntervalSince1970: TimeInterval(timestamp))
        let content: SignatureVerifiedContent
        switch await verifySignature(signedBundle, trustAnchors: configuration.trustAnchors, at: time) {
        case .failure(let error): return .failure(error)
        case .success(let verified): content = verified
        }
        let payload: BundlePayload
        do {
            payload = try BundlePayload.decode(content.content)
        } catch {
            return .failure(PinUpdateError(.malformedPayload, "the stored content is not a valid bundle payload: \(error)"))
        }
        guard payload.customer == configuration.customer else {
            return .failure(PinUpdateError(.wrongCustomer, "the stored bundle is for customer '\(payload.customer)', not '\(configuration.customer)'"))
        }
        // A client library from before the bounds may have stored a fast-forwarded bundle; kept, its version
        // would refuse every genuine bundle as a rollback. The lifetime bound is not applied here: a server
        // configured for long-lived bundles before the bound existed signed genuine ones.
        if let problem = BundleBounds.versionProblem(version: payload.version, signedAt: payload.timestamp) {
            return .failure(PinUpdateError(.versionAheadOfSigningTime, "the stored bundle: \(problem)"))
        }
        if let problem = BundleBounds.reportOnlyProblem(hosts: payload.hosts, signedAt: payload.timestamp) {
            return .failure(PinUpdateError(.reportOnlyTooLong, "the stored bundle: \(problem)"))
        }
        return .success(VerifiedPinSet(payload: payload, signedBundle: signedBundle, origin: .stored, signer: content.signer))
    }
}
