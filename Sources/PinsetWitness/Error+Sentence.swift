import PinsetTransparency

extension Error {
    /// The error as one sentence for a message that goes on after it: a ``TransparencyError``'s reason, or the
    /// description, ending in exactly one period.
    var sentence: String {
        let text = (self as? TransparencyError)?.reason ?? String(describing: self)
        return text.hasSuffix(".") ? text : text + "."
    }
}
