import Crypto
import PinsetCore
import PinsetHTTP
import X509

/// One customer's signed bundle as served: the exact bytes plus what the HTTP layer needs to describe them.
public struct SignedBundle: Sendable {
    public let customer: CustomerName
    public let bytes: [UInt8]
    public let version: Int64
    /// Signing time, Unix seconds (the payload's `timestamp`).
    public let timestamp: Int64
    public let expires: Int64
    /// A strong validator: the SHA-256 of the bytes, quoted as RFC 9110 §8.8.3 requires.
    public let etag: String
    /// `timestamp` as an HTTP date, formatted once here rather than on every request.
    public let lastModified: String
    /// Whether `lastModified` tells this bundle from every other one served for the customer, so that
    /// If-Modified-Since may be answered 304; false when it replaced a different bundle signed in the same second.
    public internal(set) var lastModifiedIsValidator = true
    /// What the bundle was signed from besides its hosts: a change pass signs the customer again only when one
    /// of these, or its version, differs.
    public let signersNotBefore: Int64?
    /// The signer certificate and the intermediates the bundle carries.
    public let signerChain: [Certificate]

    public init(
        customer: CustomerName, bytes: [UInt8], version: Int64, timestamp: Int64, expires: Int64,
        signersNotBefore: Int64? = nil, signerChain: [Certificate] = []
    ) {
        self.customer = customer
        self.signersNotBefore = signersNotBefore
        self.signerChain = signerChain
        self.bytes = bytes
        self.version = version
        self.timestamp = timestamp
        self.expires = expires
        self.etag = "\"" + Hex.encode(Array(SHA256.hash(data: bytes)).prefix(16)) + "\""
        self.lastModified = String(decoding: HTTPDate.imfFixdate(unixSeconds: timestamp), as: UTF8.self)
    }
}
