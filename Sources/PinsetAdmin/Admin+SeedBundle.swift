import Foundation
import PinsetCore
import PinsetPublishing
import PinsetSigning

extension Admin {
    /// One customer's bundle, signed as `pinset sign` and the server sign it, for an app to ship as its seed
    /// (`PinsetUpdater.seed(withBundle:)`), with the pin set it was signed from so that the caller checks what
    /// it ships rather than a later read.
    ///
    /// - Throws: `AdminError` when the customer does not exist or its identity cannot sign now.
    public func seedBundle(of customer: CustomerName, bundleLifetime: Int64, now: Date = Date()) throws -> (bytes: [UInt8], pinSet: PinSet, warnings: [String]) {
        guard let pinSet = try store.pinSet(for: customer) else { throw AdminError.noCustomer(customer) }
        let result = SigningPass(identities: SigningIdentityDirectory(locations: dataDirectory.signingIdentityLocations), bundleLifetime: bundleLifetime)
            .run([pinSet], now: now)
        guard let bundle = result.bundles.first else {
            let reasons = result.failures.map { "  \($0)" }
            throw AdminError(lines: ["The bundle of '\(customer)' could not be signed:"] + (reasons.isEmpty ? ["  (no reason given)"] : reasons))
        }
        return (try bundle.bytes, pinSet, result.warnings)
    }
}
