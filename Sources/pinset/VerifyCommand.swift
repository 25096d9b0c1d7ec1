import ArgumentParser
import Foundation
import PinsetClient
import PinsetCore
import PinsetFileSystem
import PinsetSigning
import X509

struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify a signed bundle as the Pinset client does, and print its content.",
        discussion: """
            Runs the client library's own verifier: signature against --trust only, payload types, customer, \
            the revocation floor the bundle carries (its signer must not be older), freshness (unless \
            --ignore-freshness), expiry. Exits non-zero naming the first check that failed.
            """
    )

    @Argument(help: "The signed bundle file (<customer>.json.signed).") var file: String

    @Option(name: .customLong("trust"), help: ArgumentHelp("Trust-server certificate (PEM or DER); repeat for several.", valueName: "file"))
    var trustFiles: [String]

    @Option(help: "The customer the bundle must be for (default: whatever customer it names).")
    var customer: String?

    @Option(help: "Seconds after signing that the bundle counts as fresh.")
    var freshness: Int = 600

    @Flag(help: "Skip the freshness check, e.g. for a bundle shipped with an app.")
    var ignoreFreshness = false

    @Flag(help: "Print JSON.") var json = false

    // The helpers below are synchronous on purpose: typed throws caught or rethrown inside `run`'s async body
    // crash the release optimizer (coroutine splitting) of the Swift 6.3 toolchain.

    static func unwrap<Value>(_ result: Result<Value, CLIError>) throws -> Value {
        try result.get()
    }

    private func inputs() throws -> (bundle: [UInt8], anchors: [Certificate]) {
        let bundle = try read(file)
        let anchors = try trustFiles.flatMap { path in try PinMaterial.certificates(fromFileContents: try read(path), origin: path) }
        return (bundle, anchors)
    }

    static func customerName(in content: [UInt8]) throws -> CustomerName {
        do {
            return try BundlePayload.decode(content).customer
        } catch {
            throw CLIError("verification failed: malformedPayload: \(error)\(Self.payloadNote)")
        }
    }

    func run() async throws {
        let (bundle, anchors) = try inputs()
        let now = Date()
        let expected: CustomerName
        if let customer {
            expected = try CustomerName(customer)
        } else {
            // Learn the name from the signed content itself; the full verification below then checks it.
            let signed = await SignatureVerifier.verify(bundle, trustAnchors: anchors, at: now)
            expected = try Self.customerName(in: Self.unwrap(signed.mapError { CLIError("verification failed: signature: \($0)") }).content)
        }
        var configuration = try PinsetClientConfiguration(
            serverURL: URL(fileURLWithPath: "/"),
            customer: expected,
            trustAnchors: anchors,
            stateDirectory: FileManager.default.temporaryDirectory.path
        )
        configuration.freshnessWindow = .seconds(freshness)
        let result = await BundleVerifier.verify(
            bundle, configuration: configuration, lastAccepted: nil, source: ignoreFreshness ? .seed : .download, at: now
        )
        let verified = try Self.unwrap(result.mapError { CLIError("verification failed: \($0)\($0.code == .malformedPayload ? Self.payloadNote : "")") })
        let payload = verified.payload
        if json {
            print(String(decoding: payload.encoded(), as: UTF8.self))
            return
        }
        print("OK: customer '\(payload.customer)', version \(payload.version)")
        print("signed \(Output.date(verified.signedAt)), expires \(Output.date(Date(timeIntervalSince1970: TimeInterval(payload.expires))))")
        if let floor = payload.signersNotBefore {
            // The verifier refused a signer older than the bundle's own floor, so reaching here means it holds.
            print("signers not before \(Output.date(verified.signersNotBefore)) (\(floor)): revocation floor; this bundle's signer satisfies it")
        }
        for host in payload.hosts {
            print("\nhost \(host.hostname.spelling):\(host.port)\(host.includeSubdomains ? "  (include subdomains)" : "")")
            for pin in host.spkiSHA256 { print("  pin-sha256 \(pin.base64)") }
            for fp in host.certificateSHA256 { print("  fp         \(fp.hex)") }
            for key in host.subjectPublicKeyInfos { print("  pk         \(Base64.encode(key))") }
            if !host.hasPins {
                print("  no pins: Pinset clients skip this entry for a covering include-subdomains parent with pins, or refuse the host")
            }
        }
    }

    /// The signature is checked before the payload, so a payload failure means the signer is trusted: say so,
    /// since checking signer.py's bundles (whose payloads lack Pinset's keys) is how a migration starts.
    static let payloadNote = """
         (the signature is valid and the signer trusted; the payload is not a Pinset format-1 payload, which \
        Pinset clients require — signer.py's payloads lack format, version and expires)
        """

    private func read(_ path: String) throws -> [UInt8] {
        do { return try AtomicFile.read(path, limit: 8 * 1024 * 1024) } catch { throw CLIError("\(error)") }
    }
}
