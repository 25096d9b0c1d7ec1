import Foundation
import PinsetTestSupport
import X509

/// Root → intermediate → leaf, as a public CA would issue a server certificate.
struct TestChain {
    let root: TestPKI.Issued
    let intermediate: TestPKI.Issued
    let leaf: TestPKI.Issued

    init(host: String = "api.example.com", rootName: String = "Test Root CA") throws {
        root = try TestPKI.certificateAuthority(commonName: rootName)
        let caExtensions = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
            Critical(KeyUsage(digitalSignature: true, keyCertSign: true))
        }
        intermediate = try TestPKI.leaf(commonName: "\(rootName) Intermediate", issuer: root, extensions: caExtensions)
        leaf = try TestPKI.leaf(commonName: host, dnsNames: [host], issuer: intermediate)
    }

    /// DER, leaf first, as a server sends it (without the root).
    var presented: [[UInt8]] { [leaf.certificateDER, intermediate.certificateDER] }

    /// DER, leaf to root, as path building returns it.
    var validated: [[UInt8]] { [leaf.certificateDER, intermediate.certificateDER, root.certificateDER] }
}
