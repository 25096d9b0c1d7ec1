import Foundation
import PinsetCore
import PinsetFileSystem
import PinsetSigning
import PinsetTestSupport
import Testing
import X509

struct SigningIdentityDirectoryTests {
    struct Fixture {
        let directory: TemporaryDirectory
        let locations: SigningIdentityLocations
        let defaultIdentity: SigningIdentity
        let acme: CustomerName
        let now = Date()
        var inADay: Date { now.addingTimeInterval(86_400) }

        init() throws {
            directory = try TemporaryDirectory()
            acme = try CustomerName("acme")
            locations = SigningIdentityLocations(
                defaultKeyPath: directory.file("signing-key.pem"), defaultCertificatePath: directory.file("trust-cert.pem"),
                customerKeyDirectory: directory.file("customers")
            )
            defaultIdentity = try TestPKI.signingIdentity(commonName: "Default")
            try defaultIdentity.write(keyPath: locations.defaultKeyPath, certificatePEMPath: locations.defaultCertificatePath, certificateDERPath: directory.file("trust-cert.der"))
        }

        func writeOwn(_ identity: SigningIdentity) throws {
            try AtomicFile.createDirectory(locations.directory(of: acme), mode: 0o700)
            try identity.write(keyPath: locations.keyPath(of: acme), certificatePEMPath: locations.certificatePEMPath(of: acme), certificateDERPath: locations.certificateDERPath(of: acme))
        }
    }

    /// Files edited by hand can pair a key with a chain no app accepts: each identity's chain must lead to the
    /// anchor in its `trust-cert.der`, or it does not sign and the reason names both files.
    @Test func aChainThatDoesNotLeadToTheEmbeddedAnchorDoesNotSign() throws {
        let f = try Fixture()
        defer { f.directory.remove() }
        let now = Date()
        let root = try SigningRoot.generate(keyType: .p256, commonName: "acme root", validityDays: 3650, now: now)
        let rogue = try SigningRoot.generate(keyType: .p256, commonName: "rogue root", validityDays: 3650, now: now)
        func signer(issuedBy issuer: SigningRoot, chain: [Certificate]) throws -> SigningIdentity {
            let request = try SignerRequest.generate(keyType: .p256, commonName: "acme signer")
            let certificate = try issuer.issue(for: request.request, policy: SignerCertificatePolicy(), now: now)
            return try SigningIdentity(privateKey: request.privateKey, certificate: certificate, intermediates: chain)
        }
        let anchorPath = f.locations.certificateDERPath(of: f.acme)
        let genuine = try signer(issuedBy: root, chain: [root.certificate])
        try f.writeOwn(genuine)
        let directory = SigningIdentityDirectory(locations: f.locations)
        let lookup = { directory.identity(for: f.acme, signer: .customerOwn, now: now, bundleExpires: now.addingTimeInterval(3600)) }
        #expect(try lookup().get().certificate == genuine.certificate)

        let anchorBytes = try AtomicFile.read(anchorPath)
        for (swapped, expected) in [
            (try signer(issuedBy: rogue, chain: [rogue.certificate]), "leads to the root 'rogue root'"),
            (try signer(issuedBy: rogue, chain: [root.certificate]), "is not issued by the certificate after it"),
            (try TestPKI.signingIdentity(commonName: "self-signed"), "is self-signed"),
        ] {
            // Key and certificate chain replaced, the anchor the apps embed left as it was.
            try swapped.write(keyPath: f.locations.keyPath(of: f.acme), certificatePEMPath: f.locations.certificatePEMPath(of: f.acme), certificateDERPath: anchorPath)
            try AtomicFile.write(anchorBytes, to: anchorPath, mode: 0o644)
            let failure = try #require(lookup().failureValue, "\(expected)")
            #expect(failure.reason.contains(expected) && failure.reason.contains(anchorPath) && failure.reason.contains("'acme root'"), "\(failure.reason)")
            // Still listed with its certificates for /status, although it does not sign.
            let pass = directory.resolve([PinSetHeader(customer: f.acme, version: 1, signer: .customerOwn)], now: now, bundleExpires: now.addingTimeInterval(3600))
            #expect(pass.identities.first?.failureValue?.reason == failure.reason)
            #expect(pass.identityExpiries.contains { $0.customer == f.acme })
        }

        try f.writeOwn(genuine)
        #expect(try lookup().get().certificate == genuine.certificate)
        unlink(anchorPath)
        let missing = try #require(lookup().failureValue)
        #expect(missing.reason.contains(anchorPath) && missing.reason.contains("cannot be read"), "\(missing.reason)")
    }

    @Test func aMissingOwnKeyIsRefusedNeverReplacedByTheDefault() throws {
        let f = try Fixture()
        defer { f.directory.remove() }
        let directory = SigningIdentityDirectory(locations: f.locations)
        let result = directory.identity(for: f.acme, signer: .customerOwn, now: f.now, bundleExpires: f.inADay)
        let failure = try #require(result.failureValue)
        #expect(failure.reason.contains("does not exist"))
        #expect(failure.reason.contains("not signed with the default key"))
        let byDefault = try directory.identity(for: f.acme, signer: .deploymentDefault, now: f.now, bundleExpires: f.inADay).get()
        #expect(byDefault.certificate == f.defaultIdentity.certificate)
    }

    @Test func aChangedKeyFileIsReadAgainAndATooOpenOneRefused() throws {
        let f = try Fixture()
        defer { f.directory.remove() }
        let directory = SigningIdentityDirectory(locations: f.locations)
        let first = try TestPKI.signingIdentity(commonName: "acme one")
        try f.writeOwn(first)
        #expect(try directory.identity(for: f.acme, signer: .customerOwn, now: f.now, bundleExpires: f.inADay).get().certificate == first.certificate)

        // chmod alone changes the metadata: the cached identity is not used, the file checks run again.
        chmod(f.locations.keyPath(of: f.acme), 0o644)
        let open = try #require(directory.identity(for: f.acme, signer: .customerOwn, now: f.now, bundleExpires: f.inADay).failureValue)
        #expect(open.reason.contains("readable by group or others"))
        chmod(f.locations.keyPath(of: f.acme), 0o600)

        let second = try TestPKI.signingIdentity(.rsa(bits: 2048), commonName: "acme two")
        try f.writeOwn(second)
        #expect(try directory.identity(for: f.acme, signer: .customerOwn, now: f.now, bundleExpires: f.inADay).get().certificate == second.certificate)
    }

    @Test func everyCertificateMustOutliveTheBundle() throws {
        let f = try Fixture()
        defer { f.directory.remove() }
        let short = try SigningIdentity.generate(keyType: .p256, commonName: "short", validityDays: 1, now: f.now)
        try f.writeOwn(short)
        let directory = SigningIdentityDirectory(locations: f.locations)
        let tooLong = try #require(directory.identity(for: f.acme, signer: .customerOwn, now: f.now, bundleExpires: f.now.addingTimeInterval(2 * 86_400)).failureValue)
        #expect(tooLong.reason.contains("before the bundles' expiry"))
        #expect((try? directory.identity(for: f.acme, signer: .customerOwn, now: f.now, bundleExpires: f.now.addingTimeInterval(3600)).get()) != nil)
        let expired = try #require(directory.identity(for: f.acme, signer: .customerOwn, now: f.now.addingTimeInterval(3 * 86_400), bundleExpires: f.now.addingTimeInterval(4 * 86_400)).failureValue)
        #expect(expired.reason.contains("expired"))
        let early = try #require(directory.identity(for: f.acme, signer: .customerOwn, now: f.now.addingTimeInterval(-7200), bundleExpires: f.now).failureValue)
        #expect(early.reason.contains("not valid before"))
    }

    @Test func aPassResolvesTheDefaultOnceAndWarnsAheadOfExpiry() throws {
        let f = try Fixture()
        defer { f.directory.remove() }
        try f.writeOwn(try SigningIdentity.generate(keyType: .p256, commonName: "soon", validityDays: 10, now: f.now))
        let sets = [
            PinSet(customer: f.acme, version: 1, hosts: [], signer: .customerOwn),
            PinSet(customer: try CustomerName("plain"), version: 1, hosts: [], signer: .deploymentDefault),
        ]
        let resolution = SigningIdentityDirectory(locations: f.locations).resolve(sets.map(\.header), now: f.now, bundleExpires: f.inADay)
        #expect(resolution.identities.count == 2)
        #expect(resolution.defaultIdentityProblem == nil)
        #expect(resolution.warnings.count == 1)
        #expect(resolution.warnings.first?.contains("customer 'acme'") == true)

        unlink(f.locations.defaultKeyPath)
        let broken = SigningIdentityDirectory(locations: f.locations).resolve(sets.map(\.header), now: f.now, bundleExpires: f.inADay)
        #expect(broken.defaultIdentityProblem?.contains("does not exist") == true)
        #expect((try? broken.identities[0].get()) != nil, "the customer with its own key is still signed")
        #expect(broken.identities[1].failureValue != nil)
    }
}

extension Result {
    var failureValue: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}
