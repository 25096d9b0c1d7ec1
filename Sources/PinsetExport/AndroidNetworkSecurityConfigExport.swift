/// Android's Network Security Configuration (API 24+): one `<domain-config>` per host with its `<pin-set>`,
/// written as the whole `res/xml/network_security_config.xml` that the manifest's
/// `android:networkSecurityConfig` names.
///
/// The element rules this follows: `<network-security-config>` holds `<domain-config>` elements; each holds at
/// least one `<domain>` (text: the name; `includeSubdomains` "true" or "false") and at most one `<pin-set>`, whose
/// optional `expiration` is a `yyyy-MM-dd` date and whose `<pin>` elements carry `digest="SHA-256"` (the only
/// digest Android accepts) and a base64 SPKI SHA-256. Android matches a pin against any certificate of the chain.
public struct AndroidNetworkSecurityConfigExport: Sendable {
    public let pinSet: StaticPinSet
    public let expiration: PinExpirationDate?

    public init(_ pinSet: StaticPinSet, expiration: PinExpirationDate?) {
        self.pinSet = pinSet
        self.expiration = expiration
    }

    public var text: String {
        var lines = [
            #"<?xml version="1.0" encoding="utf-8"?>"#,
            ExportText.xmlComment("\(pinSet.provenance). Save as res/xml/network_security_config.xml."),
            "<network-security-config>",
        ]
        for host in pinSet.hosts {
            lines.append("    <domain-config>")
            lines.append(#"        <domain includeSubdomains="\#(host.includeSubdomains)">\#(ExportText.xmlEscaped(host.hostname))</domain>"#)
            lines.append(expiration.map { #"        <pin-set expiration="\#($0.text)">"# } ?? "        <pin-set>")
            for pin in host.pins {
                if let comment = ExportText.comment(for: pin) { lines.append("            <!-- \(comment) -->") }
                lines.append(#"            <pin digest="SHA-256">\#(pin.spkiSHA256)</pin>"#)
            }
            lines.append("        </pin-set>")
            lines.append("    </domain-config>")
        }
        lines.append("</network-security-config>")
        return lines.joined(separator: "\n") + "\n"
    }
}
