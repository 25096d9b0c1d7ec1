/// Absolute-form request targets (RFC 9112 §3.2.2): `http://host[:port]/path?query`.
///
/// A server must accept them, although only proxies send them to origin servers. Only the path and query decide
/// what is served; the authority is checked for syntax alone (RFC 3986 §3.2) and then dropped, so a request for
/// `http://elsewhere/acme.json.signed` is answered like one for `/acme.json.signed`, exactly as the `Host` field is
/// not used for routing either. Refused with 400: a scheme other than `http`/`https`, an empty host (RFC 9110
/// §4.2.1), userinfo (RFC 9110 §4.2.4 says to treat it as an error), a malformed port or IP literal, and any byte
/// outside RFC 3986.
extension RequestLine {
    /// The origin-form equivalent of an absolute-form `target` (`/` when the path is empty), `nil` when the target
    /// does not start with a scheme, or the reason it is malformed.
    static func originForm(ofAbsolute target: UnsafeBufferPointer<UInt8>) -> Swift.Result<[UInt8], HTTPRequestError>? {
        guard let schemeLength = Self.httpSchemeLength(target) else {
            return Self.startsWithScheme(target)
                ? .failure(HTTPRequestError(.invalidTarget, "absolute-form target with a scheme other than http or https"))
                : nil
        }
        let authorityStart = schemeLength + 3
        var authorityEnd = authorityStart
        while authorityEnd < target.count && target[authorityEnd] != UInt8(ascii: "/")
            && target[authorityEnd] != UInt8(ascii: "?") {
            authorityEnd += 1
        }
        if let problem = Self.authorityProblem(UnsafeBufferPointer(rebasing: target[authorityStart..<authorityEnd])) {
            return .failure(HTTPRequestError(.invalidTarget, problem))
        }
        var origin = Array(target[authorityEnd...])
        if origin.first != UInt8(ascii: "/") { origin.insert(UInt8(ascii: "/"), at: 0) }
        return .success(origin)
    }

    /// Length of a case-insensitive `http` or `https` scheme followed by `://`.
    private static func httpSchemeLength(_ target: UnsafeBufferPointer<UInt8>) -> Int? {
        for scheme in ["http", "https"] {
            let length = scheme.utf8.count
            guard target.count >= length + 3 else { continue }
            let matches = zip(target[0..<length], scheme.utf8).allSatisfy { $0 | 0x20 == $1 }
            if matches && target[length..<(length + 3)].elementsEqual("://".utf8) { return length }
        }
        return nil
    }

    /// `scheme ":"` with `scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )` (RFC 3986 §3.1).
    private static func startsWithScheme(_ target: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = target.first, HTTPSyntax.isAlpha(first) else { return false }
        for byte in target.dropFirst() {
            if byte == UInt8(ascii: ":") { return true }
            guard HTTPSyntax.isAlpha(byte) || HTTPSyntax.isDigit(byte) || byte == UInt8(ascii: "+")
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
            else { return false }
        }
        return false
    }

    /// Why `authority` (`host [ ":" port ]`, no userinfo) is malformed, or nil.
    private static func authorityProblem(_ authority: UnsafeBufferPointer<UInt8>) -> String? {
        if authority.contains(UInt8(ascii: "@")) { return "userinfo in an absolute-form target" }
        var hostEnd = 0
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")), close > 1 else {
                return "unterminated IP literal in the target's authority"
            }
            for byte in authority[1..<close] where !(HTTPSyntax.isHexDigit(byte) || byte == UInt8(ascii: ":")
                || byte == UInt8(ascii: ".")) {
                return "invalid byte 0x\(String(byte, radix: 16)) in the target's IP literal"
            }
            hostEnd = close + 1
        } else {
            while hostEnd < authority.count && authority[hostEnd] != UInt8(ascii: ":") {
                let byte = authority[hostEnd]
                if byte == UInt8(ascii: "%") {
                    guard hostEnd + 2 < authority.count, HTTPSyntax.isHexDigit(authority[hostEnd + 1]),
                          HTTPSyntax.isHexDigit(authority[hostEnd + 2])
                    else { return "malformed percent-encoding in the target's host" }
                    hostEnd += 3
                    continue
                }
                guard HTTPSyntax.isTargetCharacter(byte), byte != UInt8(ascii: "/"), byte != UInt8(ascii: "?") else {
                    return "invalid byte 0x\(String(byte, radix: 16)) in the target's host"
                }
                hostEnd += 1
            }
            if hostEnd == 0 { return "empty host in an absolute-form target" }
        }
        guard hostEnd < authority.count else { return nil }
        guard authority[hostEnd] == UInt8(ascii: ":") else { return "unexpected byte after the target's host" }
        let port = authority[(hostEnd + 1)...]
        guard port.count <= 5, port.allSatisfy(HTTPSyntax.isDigit) else { return "malformed port in the target" }
        return nil
    }
}
