import Foundation
import PinsetCore
import PinsetFileSystem
import PinsetSigning
import PinsetTestSupport
import Testing

struct SigningIdentityFilesTests {
    @Test func writesKeyPrivatelyAndLoadsItBack() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let identity = try TestPKI.signingIdentity(.p256)
        try identity.write(keyPath: directory.file("key.pem"), certificatePEMPath: directory.file("cert.pem"), certificateDERPath: directory.file("cert.der"))
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.file("key.pem"))
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let loaded = try SigningIdentity.load(keyPath: directory.file("key.pem"), certificatePath: directory.file("cert.der"))
        #expect(loaded.certificate == identity.certificate)
        #expect(loaded.keyType == .p256)
    }

    @Test func refusesAGroupReadableKey() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let identity = try TestPKI.signingIdentity()
        try identity.write(keyPath: directory.file("key.pem"), certificatePEMPath: directory.file("cert.pem"), certificateDERPath: directory.file("cert.der"))
        chmod(directory.file("key.pem"), 0o640)
        #expect {
            try SigningIdentity.load(keyPath: directory.file("key.pem"), certificatePath: directory.file("cert.pem"))
        } throws: { error in
            String(describing: error).contains("chmod 600")
        }
    }

    /// A deployment that already has a trust anchor keeps it: keys made by OpenSSL load as they are.
    @Test(arguments: [
        ["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "KEY"],
        ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384", "-out", "KEY"],
        ["genrsa", "-traditional", "-out", "KEY", "2048"],
    ])
    func importsOpenSSLKeys(generate: [String]) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let key = directory.file("key.pem")
        let cert = directory.file("cert.pem")
        #expect(try ProcessRunner.run("openssl", generate.map { $0 == "KEY" ? key : $0 }).status == 0)
        chmod(key, 0o600)
        let made = try ProcessRunner.run("openssl", [
            "req", "-new", "-x509", "-key", key, "-out", cert, "-days", "30", "-subj", "/CN=Legacy Trust Server",
            "-addext", "keyUsage=critical,digitalSignature", "-addext", "extendedKeyUsage=emailProtection",
        ])
        #expect(made.status == 0, "\(made.stderr)")
        let identity = try SigningIdentity.load(keyPath: key, certificatePath: cert)
        let derKey = directory.file("key.der")
        #expect(try ProcessRunner.run("openssl", ["pkey", "-in", key, "-outform", "der", "-out", derKey]).status == 0)
        chmod(derKey, 0o600)
        let derCert = directory.file("cert.der")
        #expect(try ProcessRunner.run("openssl", ["x509", "-in", cert, "-outform", "der", "-out", derCert]).status == 0)
        let fromDER = try SigningIdentity.load(keyPath: derKey, certificatePath: derCert)
        #expect(fromDER.certificate == identity.certificate)
    }

    @Test func pinsMatchOpenSSL() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        for keyType in [SigningKeyType.p256, .rsa(bits: 2048)] {
            let identity = try TestPKI.signingIdentity(keyType)
            let cert = try directory.write("c.pem", identity.certificatePEM)
            let script = "openssl x509 -pubkey -noout -in \(cert) | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64"
            let expected = try ProcessRunner.run("/bin/sh", ["-c", script]).stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
            let pin = try PinMaterial.pin(for: identity.certificate, source: PinSource(kind: .certificate))
            #expect(pin.spkiSHA256?.base64 == expected)
            let fingerprint = try ProcessRunner.run("openssl", ["x509", "-in", cert, "-noout", "-fingerprint", "-sha256"]).stdoutText
            let hex = fingerprint.split(separator: "=").last.map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
            #expect(pin.certificateSHA256 == (try SHA256Fingerprint(hex: hex)))
        }
    }
}

struct AbandonedTemporaryFileTests {
    @Test func onlyTemporaryFilesOfDeadWritersAreRemoved() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // Far above any pid_max: no such process exists.
        let deadPid = Int32.max - 7
        try directory.write(".acme.json.signed.tmp-\(deadPid)-0-123", [1])
        try directory.write(".acme.json.signed.tmp-\(getpid())-0-456", [2])
        try directory.write("acme.json.signed", [3])
        try directory.write(".hidden", [4])
        #expect(AtomicFile.removeAbandonedTemporaryFiles(in: directory.path) == 1)
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: directory.path))
        #expect(left == [".acme.json.signed.tmp-\(getpid())-0-456", "acme.json.signed", ".hidden"])
    }
}
