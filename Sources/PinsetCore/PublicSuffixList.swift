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
    /// What the list's `// VERSION:` header line says (publicsuffix.org writes the time it was published), if it
    /// has one.
    public private(set) var version: String?
    /// What the list's `// COMMIT:` header line says (the commit of github.com/publicsuffix/list it was built
    /// from), if it has one.
    public private(set) var commit: String?
    /// How many rules the list holds.
    public private(set) var ruleCount = 0

    /// Parses the list's text format: one rule per line, `//` comments, blank lines ignored.
    ///
    /// - Throws: `InputError` when the text holds no rule (an empty or truncated file), or a line that is no rule
    ///   (another file, such as an HTML error page saved in its place), naming the line.
    public init(text: String) throws(InputError) {
        var lineNumber = 0
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            lineNumber += 1
            // A rule ends at the first whitespace.
            guard let rule = line.split(whereSeparator: \.isWhitespace).first else { continue }
            if rule.hasPrefix("//") {
                readHeader(line)
                continue
            }
            let lowered = rule.lowercased()
            if lowered.hasPrefix("!") {
                exceptions.insert(try Self.checked(String(lowered.dropFirst()), line: lineNumber))
            } else if lowered.hasPrefix("*.") {
                wildcardParents.insert(try Self.checked(String(lowered.dropFirst(2)), line: lineNumber))
            } else {
                rules.insert(try Self.checked(lowered, line: lineNumber))
            }
            ruleCount += 1
        }
        guard !rules.isEmpty else {
            throw InputError("The public suffix list has no rules; the file is empty or damaged.")
        }
    }

    /// Parses the list from the bytes of its file, which must be UTF-8.
    public init(utf8 bytes: some Collection<UInt8>) throws(InputError) {
        let text = String(decoding: bytes, as: UTF8.self)
        // Decoding replaces every invalid sequence, so the text differs from the bytes exactly when they are not UTF-8.
        guard text.utf8.elementsEqual(bytes) else {
            throw InputError("The public suffix list is not UTF-8 text; the file is damaged or is another file.")
        }
        try self.init(text: text)
    }

    /// Whether `name` is itself a public suffix (not merely under one).
    public func isPublicSuffix(_ name: Hostname) -> Bool {
        let labels = name.rawValue.split(separator: ".")
        if labels.count <= 1 { return true }
        if exceptions.contains(name.rawValue) { return false }
        if rules.contains(name.rawValue) { return true }
        return wildcardParents.contains(labels.dropFirst().joined(separator: "."))
    }

    /// Keeps the first `// VERSION:` and `// COMMIT:` lines, which publicsuffix.org puts at the top of the list.
    private mutating func readHeader(_ line: Substring) {
        for (prefix, keyPath) in [("// VERSION:", \Self.version), ("// COMMIT:", \Self.commit)] where line.hasPrefix(prefix) && self[keyPath: keyPath] == nil {
            let value = line.dropFirst(prefix.count).trimmed(of: " \t\r")
            if !value.isEmpty { self[keyPath: keyPath] = value }
        }
    }

    /// A rule's name: labels of letters, digits, `-` and `_` (or Unicode) separated by single dots.
    private static func checked(_ name: String, line: Int) throws(InputError) -> String {
        let wellFormed = !name.isEmpty && !name.hasPrefix(".") && !name.hasSuffix(".") && !name.contains("..")
            && name.unicodeScalars.allSatisfy { scalar in
                !scalar.isASCII || ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) || "-_.".unicodeScalars.contains(scalar)
            }
        guard wellFormed else {
            throw InputError("Line \(line) of the public suffix list, '\(TerminalText.escape(String(name.prefix(80))))', is not a rule of the list; the file is damaged or is another file.")
        }
        return name
    }
}

extension Substring {
    fileprivate func trimmed(of characters: String) -> String {
        var trimmed = self[...]
        while let first = trimmed.first, characters.contains(first) { trimmed = trimmed.dropFirst() }
        while let last = trimmed.last, characters.contains(last) { trimmed = trimmed.dropLast() }
        return String(trimmed)
    }
}
