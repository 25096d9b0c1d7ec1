/// OkHttp's `CertificatePinner` (Android and the JVM), as Kotlin: one `.add(pattern, pins…)` call per host.
///
/// A host with include-subdomains becomes the pattern `**.host`, which OkHttp 4 and later match against the host
/// itself and every name under it at any depth (`*.host` would match one label only, and not the host). OkHttp
/// matches a pin against any certificate of the cleaned chain.
public struct OkHttpExport: Sendable {
    public let pinSet: StaticPinSet

    public init(_ pinSet: StaticPinSet) {
        self.pinSet = pinSet
    }

    public var text: String {
        var lines = [
            "// \(pinSet.provenance). OkHttp 4 or later.",
            "val certificatePinner = CertificatePinner.Builder()",
        ]
        for host in pinSet.hosts {
            lines.append("    .add(")
            lines.append("        \"\(host.includeSubdomains ? "**." : "")\(host.hostname)\",")
            for (index, pin) in host.pins.enumerated() {
                let separator = index == host.pins.count - 1 ? "" : ","
                let comment = ExportText.comment(for: pin).map { " // \($0)" } ?? ""
                lines.append("        \"sha256/\(pin.spkiSHA256)\"\(separator)\(comment)")
            }
            lines.append("    )")
        }
        lines.append("    .build()")
        return lines.joined(separator: "\n") + "\n"
    }
}
