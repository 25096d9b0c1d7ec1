import Foundation
import PinsetCore
import PinsetSigning
import PinsetTestSupport
import Testing
import X509

/// The anchor apps embed is the self-signed root that ends the signer's chain; the chain must lead there.
struct SigningIdentityTrustAnchorTests {
    static let day: TimeInterval = 86_400

    static func identity(signer: TestPKI.Issued, chain: [TestPKI.Issued]) throws -> SigningIdentity {
        try SigningIdentity(privateKey: signer.privateKey, certificate: signer.certificate, intermediates: chain.map(\.certificate))
    }

    static func intermediate(issuer: TestPKI.Issued, notAfter: Date = Date().addingTimeInterval(30 * day)) throws -> TestPKI.Issued {
        try TestPKI.leaf(commonName: "Intermediate", issuer: issuer, notAfter: notAfter, extensions: try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
            Critical(KeyUsage(keyCertSign: true))
        })
    }

    @Test func theAnchorIsTheRootNotTheSigner() throws {
        let root = try TestPKI.certificateAuthority(notAfter: Date().addingTimeInterval(3650 * Self.day))
        let intermediate = try Self.intermediate(issuer: root, notAfter: Date().addingTimeInterval(3000 * Self.day))
        let signer = try TestPKI.leaf(commonName: "Signer", issuer: intermediate, notAfter: Date().addingTimeInterval(400 * Self.day))
        let identity = try Self.identity(signer: signer, chain: [intermediate, root])
        #expect(identity.trustAnchor == root.certificate)
        #expect(try identity.trustAnchorDER == root.certificateDER)
        #expect(try identity.checkChain(at: Date()).isEmpty)

        let selfSigned = try TestPKI.signingIdentity()
        #expect(selfSigned.trustAnchor == selfSigned.certificate)
    }

    @Test func aChainOutOfOrderOrWithoutItsRootIsRefused() throws {
        let root = try TestPKI.certificateAuthority()
        let intermediate = try Self.intermediate(issuer: root)
        let signer = try TestPKI.leaf(commonName: "Signer", issuer: intermediate)
        #expect { try Self.identity(signer: signer, chain: [root, intermediate]).checkChain(at: Date()) } throws: { error in
            String(describing: error).contains("is not issued by the certificate after it")
        }
        #expect { try Self.identity(signer: signer, chain: [intermediate]).checkChain(at: Date()) } throws: { error in
            String(describing: error).contains("append the root certificate")
        }
        // An issuer that is not a CA breaks OpenSSL's path building.
        let notCA = try TestPKI.leaf(commonName: "Not A CA", issuer: root)
        let underNotCA = try TestPKI.leaf(commonName: "Signer", issuer: notCA)
        #expect { try Self.identity(signer: underNotCA, chain: [notCA, root]).checkChain(at: Date()) } throws: { error in
            String(describing: error).contains("not a CA")
        }
    }

    /// OpenSSL's S/MIME purpose, applied to every certificate of the chain as legacy clients do.
    @Test func issuersMustMeetOpenSSLsSMIMEPurpose() throws {
        func refusal(root rootExtensions: Certificate.Extensions? = nil, intermediate issuerExtensions: Certificate.Extensions) throws -> String? {
            let root = try TestPKI.certificateAuthority(commonName: "Root", extensions: rootExtensions)
            let issuer = try TestPKI.leaf(commonName: "Intermediate", issuer: root, extensions: issuerExtensions)
            let signer = try TestPKI.leaf(commonName: "Signer", issuer: issuer)
            do {
                _ = try Self.identity(signer: signer, chain: [issuer, root]).checkChain(at: Date())
                return nil
            } catch {
                return String(describing: error)
            }
        }
        let ca = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
            Critical(KeyUsage(keyCertSign: true))
        }
        #expect(try refusal(intermediate: ca) == nil)
        #expect(try refusal(intermediate: try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
            Critical(KeyUsage(keyCertSign: true))
            try ExtendedKeyUsage([.serverAuth, .emailProtection])
        }) == nil)
        // keyUsage alone makes a v3 issuer a CA for OpenSSL.
        #expect(try refusal(intermediate: try Certificate.Extensions { Critical(KeyUsage(keyCertSign: true)) }) == nil)

        let serverAuthOnly = try refusal(intermediate: try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
            Critical(KeyUsage(keyCertSign: true))
            try ExtendedKeyUsage([.serverAuth])
        })
        #expect(serverAuthOnly?.contains("'Intermediate' has an extendedKeyUsage without emailProtection") == true, "\(serverAuthOnly ?? "accepted")")
        let anyUsage = try refusal(intermediate: try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
            Critical(KeyUsage(keyCertSign: true))
            try ExtendedKeyUsage([.any])
        })
        #expect(anyUsage?.contains("without emailProtection") == true, "\(anyUsage ?? "accepted")")
        let rootServerAuth = try refusal(root: try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
            Critical(KeyUsage(keyCertSign: true))
            try ExtendedKeyUsage([.serverAuth])
        }, intermediate: ca)
        #expect(rootServerAuth?.contains("'Root' has an extendedKeyUsage without emailProtection") == true, "\(rootServerAuth ?? "accepted")")

        let noCertSign = try refusal(intermediate: try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
            Critical(KeyUsage(digitalSignature: true))
        })
        #expect(noCertSign?.contains("'Intermediate' issues 'Signer' but its keyUsage lacks keyCertSign") == true, "\(noCertSign ?? "accepted")")
        let rootNoCertSign = try refusal(root: try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
            Critical(KeyUsage(digitalSignature: true))
        }, intermediate: ca)
        #expect(rootNoCertSign?.contains("'Root' issues 'Intermediate' but its keyUsage lacks keyCertSign") == true, "\(rootNoCertSign ?? "accepted")")
        let neither = try refusal(intermediate: try Certificate.Extensions { try ExtendedKeyUsage([.emailProtection]) })
        #expect(neither?.contains("neither basicConstraints CA:TRUE nor a keyUsage") == true, "\(neither ?? "accepted")")
    }

    @Test func datesOfEveryCertificateAreChecked() throws {
        let root = try TestPKI.certificateAuthority(notAfter: Date().addingTimeInterval(20 * Self.day))
        let signer = try TestPKI.leaf(commonName: "Signer", issuer: root, notAfter: Date().addingTimeInterval(10 * Self.day))
        let identity = try Self.identity(signer: signer, chain: [root])
        let warnings = try identity.checkChain(at: Date())
        #expect(warnings.count == 2)
        #expect(warnings.contains { $0.contains("in 20 days") && $0.contains("every app that embeds it") })
        #expect { try identity.checkChain(at: Date().addingTimeInterval(15 * Self.day)) } throws: { error in
            String(describing: error).contains("'Signer' expired")
        }
        #expect { try identity.checkChain(at: Date().addingTimeInterval(-2 * Self.day)) } throws: { error in
            String(describing: error).contains("is not valid before")
        }
        #expect(identity.expiryWarnings(at: Date().addingTimeInterval(30 * Self.day)).allSatisfy { $0.contains("expired on") })
    }
}
