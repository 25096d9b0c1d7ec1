/// Apple's identity pinning for App Transport Security: `NSAppTransportSecurity` → `NSPinnedDomains` (iOS 14,
/// macOS 11), written as a whole property list whose `NSAppTransportSecurity` dictionary is merged into the app's
/// Info.plist.
///
/// ATS matches `NSPinnedLeafIdentities` against the server's leaf certificate only and `NSPinnedCAIdentities`
/// against the CA certificates of the chain only, and when a domain has both lists it requires a match in each.
/// A Pinset pin matches any certificate of the chain, and the pin set does not record which keys are CA keys, so
/// every key goes into the leaf list unless the caller names it a CA key (`caKeys`). Each list that is written
/// must itself hold at least two keys, or one key change locks the app out.
public struct NSPinnedDomainsExport: Sendable {
    public let pinSet: StaticPinSet
    public let caKeys: Set<String>

    /// - Parameter caKeys: base64 SPKI SHA-256 values of CA keys; each must be a key of one of the hosts.
    public init(_ pinSet: StaticPinSet, caKeys: Set<String>) throws {
        let known = Set(pinSet.hosts.flatMap { $0.pins.map(\.spkiSHA256) })
        let unknown = caKeys.subtracting(known).sorted()
        if !unknown.isEmpty {
            throw ExportRefusal("--ca-key \(unknown.joined(separator: ", ")): not a key pinned for any host of '\(pinSet.customer)'. Give the base64 SPKI SHA-256 of a pinned CA key, as 'pinset pin list \(pinSet.customer)' shows it.")
        }
        var problems: [String] = []
        for host in pinSet.hosts {
            let (leaf, ca) = Self.split(host.pins, caKeys: caKeys)
            for (list, pins) in [("NSPinnedLeafIdentities", leaf), ("NSPinnedCAIdentities", ca)] where !pins.isEmpty && pins.count < StaticPinSet.minimumKeysPerHost {
                problems.append(StaticPinSet.backupKeyProblem(
                    customer: pinSet.customer, hostname: host.hostname, keys: pins.count,
                    list: "\(list) (ATS requires a match in each list a domain has)"))
            }
        }
        if !problems.isEmpty {
            throw ExportRefusal("Nothing exported for '\(pinSet.customer)'; static pins that would lock the app out are refused:\n" + problems.map { "  - \($0)" }.joined(separator: "\n"))
        }
        self.pinSet = pinSet
        self.caKeys = caKeys
    }

    static func split(_ pins: [StaticPinSet.Pin], caKeys: Set<String>) -> (leaf: [StaticPinSet.Pin], ca: [StaticPinSet.Pin]) {
        (pins.filter { !caKeys.contains($0.spkiSHA256) }, pins.filter { caKeys.contains($0.spkiSHA256) })
    }

    public var text: String {
        var plist = PropertyListWriter()
        plist.comment("\(pinSet.provenance). Merge NSAppTransportSecurity into the app's Info.plist.")
        plist.open(#"plist version="1.0""#)
        plist.open("dict")
        plist.key("NSAppTransportSecurity")
        plist.open("dict")
        plist.key("NSPinnedDomains")
        plist.open("dict")
        for host in pinSet.hosts {
            plist.key(host.hostname)
            plist.open("dict")
            plist.key("NSIncludesSubdomains")
            plist.bool(host.includeSubdomains)
            let (leaf, ca) = Self.split(host.pins, caKeys: caKeys)
            for (list, pins) in [("NSPinnedCAIdentities", ca), ("NSPinnedLeafIdentities", leaf)] where !pins.isEmpty {
                plist.key(list)
                plist.open("array")
                for pin in pins {
                    if let comment = ExportText.comment(for: pin) { plist.comment(comment) }
                    plist.open("dict")
                    plist.key("SPKI-SHA256-BASE64")
                    plist.string(pin.spkiSHA256)
                    plist.close("dict")
                }
                plist.close("array")
            }
            plist.close("dict")
        }
        plist.close("dict")
        plist.close("dict")
        plist.close("dict")
        plist.close("plist")
        return plist.text
    }

    /// What the operator should know before shipping this file.
    public var notes: [String] {
        let leafKeys = pinSet.hosts.reduce(0) { $0 + Self.split($1.pins, caKeys: caKeys).leaf.count }
        guard leafKeys > 0 else { return [] }
        return ["\(leafKeys) key\(leafKeys == 1 ? " is" : "s are") listed in NSPinnedLeafIdentities, which ATS matches against the server's leaf certificate only: name each CA key with --ca-key BASE64 to list it in NSPinnedCAIdentities instead."]
    }
}
