/// The Public Suffix List (https://publicsuffix.org/list/): names under which anyone can register a domain,
/// such as `com`, `co.uk` or `github.io`.
///
/// Pins that apply to a public suffix and all its subdomains would be enforced on every site under it, third
/// parties included, so include-subdomains is refused for them. Both the ICANN and the private sections
/// count. Matching follows the list's algorithm for a whole name: a normal rule matches the name itself, a
/// wildcard rule `*.parent` matches any one label under `parent` unless an exception rule `!name` names it, and
/// the implicit rule `*` makes every single-label name a public suffix. Rules in Unicode (internationalized
/// names) are compared as written; host names are compared in the ASCII form they are stored in, so such a
/// rule matches only when the list also carries its `xn--` form.
public struct PublicSuffixList: Sendable {
    private var rules: Set<String> = []
    private var wildcardParents: Set<String> = []
    private var exceptions: Set<String> = []

    /// Parses the list's text format: one rule per line, `//` comments, blank lines ignored.
    ///
    /// - Throws: `InputError` when the text holds no rule (an empty or truncated file).
    public init(text: String) throws(InputError) {
        for line in text.split(whereSeparator: \.isNewline) {
            // A rule ends at the first whitespace.
            guard let rule = line.split(whereSeparator: \.isWhitespace).first, !rule.hasPrefix("//") else { continue }
            let lowered = rule.lowercased()
            if lowered.hasPrefix("!") {
                exceptions.insert(String(lowered.dropFirst()))
            } else if lowered.hasPrefix("*.") {
                wildcardParents.insert(String(lowered.dropFirst(2)))
            } else {
                rules.insert(lowered)
            }
        }
        guard !rules.isEmpty else {
            throw InputError("The public suffix list has no rules; the file is empty or damaged.")
        }
    }

    /// Whether `name` is itself a public suffix (not merely under one).
    public func isPublicSuffix(_ name: Hostname) -> Bool {
        let labels = name.rawValue.split(separator: ".")
        if labels.count <= 1 { return true }
        if exceptions.contains(name.rawValue) { return false }
        if rules.contains(name.rawValue) { return true }
        return wildcardParents.contains(labels.dropFirst().joined(separator: "."))
    }
}
