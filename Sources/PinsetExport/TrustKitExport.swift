/// TrustKit's configuration (iOS and macOS) as the `TSKConfiguration` dictionary of an Info.plist, which TrustKit
/// reads at launch without code; the same keys form the dictionary passed to
/// `TrustKit.initSharedInstance(withConfiguration:)`.
///
/// `TSKSwizzleNetworkDelegates` is written as false: swizzling is the app's decision (TrustKit's own default);
/// an app that wants TrustKit to hook its `NSURLSession` delegates sets it to true. TrustKit itself refuses a
/// domain with fewer than two hashes, and matches a hash against any certificate of the chain.
public struct TrustKitExport: Sendable {
    public let pinSet: StaticPinSet
    public let expiration: PinExpirationDate?

    public init(_ pinSet: StaticPinSet, expiration: PinExpirationDate?) {
        self.pinSet = pinSet
        self.expiration = expiration
    }

    public var text: String {
        var plist = PropertyListWriter()
        plist.comment("\(pinSet.provenance). Merge TSKConfiguration into the app's Info.plist.")
        plist.open(#"plist version="1.0""#)
        plist.open("dict")
        plist.key("TSKConfiguration")
        plist.open("dict")
        plist.key("TSKSwizzleNetworkDelegates")
        plist.bool(false)
        plist.key("TSKPinnedDomains")
        plist.open("dict")
        for host in pinSet.hosts {
            plist.key(host.hostname)
            plist.open("dict")
            plist.key("TSKEnforcePinning")
            plist.bool(true)
            plist.key("TSKIncludeSubdomains")
            plist.bool(host.includeSubdomains)
            if let expiration {
                plist.key("TSKExpirationDate")
                plist.string(expiration.text)
            }
            plist.key("TSKPublicKeyHashes")
            plist.open("array")
            for pin in host.pins {
                if let comment = ExportText.comment(for: pin) { plist.comment(comment) }
                plist.string(pin.spkiSHA256)
            }
            plist.close("array")
            plist.close("dict")
        }
        plist.close("dict")
        plist.close("dict")
        plist.close("dict")
        plist.close("plist")
        return plist.text
    }
}
