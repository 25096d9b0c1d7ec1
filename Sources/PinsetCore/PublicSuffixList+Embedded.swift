import CPinsetPublicSuffixList

extension PublicSuffixList {
    /// The Public Suffix List embedded in the package (`Sources/CPinsetPublicSuffixList/public_suffix_list.dat`,
    /// replaced by `scripts/update-public-suffix-list`), parsed at first use: the default of
    /// ``PinsetClientConfiguration/publicSuffixes``, and of the server and the CLI unless they are given a newer
    /// list file. An app that ships a newer list passes that instead.
    public static let bundled: PublicSuffixList = {
        do {
            return try PublicSuffixList(utf8: embeddedBytes)
        } catch {
            preconditionFailure("the embedded Public Suffix List does not parse: \(error)")
        }
    }()

    /// The embedded file's bytes, as published.
    static var embeddedBytes: UnsafeBufferPointer<UInt8> {
        var length = 0
        let start = pinset_public_suffix_list(&length)
        return UnsafeBufferPointer(start: start, count: length)
    }
}
