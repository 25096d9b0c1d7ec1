import PinsetCore
import PinsetFileSystem

/// The Public Suffix List a deployment decides include-subdomains with, and where it came from: the copy embedded
/// in the package, or a newer list file an operator named (`publicSuffixList` in the server's configuration,
/// `--public-suffix-list` or `$PINSET_PUBLIC_SUFFIX_LIST` for the CLI), such as the one Debian's `publicsuffix`
/// package keeps up to date at `/usr/share/publicsuffix/public_suffix_list.dat`.
///
/// The one way the server and the CLI get a list: a named file is read and parsed once, when they start, and one
/// that cannot be read or parsed stops them (fail closed: an operator who named a list is never silently served
/// another). The embedded copy is parsed at its first use.
public struct PublicSuffixListSource: Sendable {
    public enum Origin: Sendable, Hashable {
        case embedded
        case file(path: String)
    }

    public let origin: Origin
    /// The list read from a file; `nil` for the embedded copy, parsed once by `PublicSuffixList.bundled`.
    private let fileList: PublicSuffixList?

    /// The list files are read up to this size; the published list is about 250 KB.
    public static let maximumFileSize = 4 * 1024 * 1024
    /// The line the published list ends with: a file without it was cut short (a download or copy that stopped),
    /// and a shorter list would let include-subdomains through on suffixes it lost.
    public static let endMarker = "===END PRIVATE DOMAINS==="


    public static let embedded = PublicSuffixListSource(origin: .embedded, fileList: nil)

    public var list: PublicSuffixList { fileList ?? .bundled }

    /// `embedded`, or the file's path: where `/status` says the list came from.
    public var originDescription: String {
        switch origin {
        case .embedded: "embedded"
        case .file(let path): path
        }
    }

    /// The list in the file at `path`, or the embedded copy when `path` is nil.
    ///
    /// - Throws: `AdminError` naming the file, what is wrong with it and how to fix it, when it cannot be read or
    ///   is not a Public Suffix List.
    public static func load(path: String?) throws(AdminError) -> PublicSuffixListSource {
        guard let path else { return .embedded }
        let remedy = "Point it at a readable copy of https://publicsuffix.org/list/public_suffix_list.dat (Debian's publicsuffix package installs one at /usr/share/publicsuffix/public_suffix_list.dat), or remove the setting to use the list embedded in pinset."
        let bytes: [UInt8]
        do {
            // A regular file that only its owner (or root) may change: what decides a security rule is not left to
            // other users, and a FIFO or device cannot hang the start.
            try FileTrust.check(path, as: .file)
            bytes = try AtomicFile.read(path, limit: maximumFileSize)
        } catch {
            throw AdminError("Cannot read the Public Suffix List file '\(path)': \(error). \(remedy)")
        }
        let list: PublicSuffixList
        do {
            list = try PublicSuffixList(utf8: bytes)
        } catch {
            throw AdminError("The Public Suffix List file '\(path)' cannot be used: \(error.message) \(remedy)")
        }
        guard String(decoding: bytes.suffix(4096), as: UTF8.self).contains(endMarker) else {
            throw AdminError("The Public Suffix List file '\(path)' does not end with the line '// \(endMarker)': it was cut short, and a shorter list would allow include-subdomains on suffixes it lost. \(remedy)")
        }
        return PublicSuffixListSource(origin: .file(path: path), fileList: list)
    }
}
