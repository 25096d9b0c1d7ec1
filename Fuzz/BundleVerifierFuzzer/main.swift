// libFuzzer entry point for bundle verification: the code every app runs on bytes fetched from the network.
//
// Each input goes through `SignatureVerifier.verify` (strict DER envelope, digest and signer checks, then the CMS
// signature against the trust anchor) and, when the signature holds, through `BundleVerifier.verify` for both
// sources. Neither may trap, hang or grow memory; a verified signature must return content that was inside the
// input; and `BundleVerifier` must never accept what `SignatureVerifier` refused.
//
// The trust anchor is the certificate `Fuzz/run` creates with `pinset init`: `$PINSET_FUZZ_TRUST_CERT`, or
// `.build-fuzz/seed/data/trust-cert.pem` at the package root. Its signed bundle seeds the corpus, so mutations
// reach the signature and certificate checks rather than stopping at the DER parser.
import Dispatch
import Foundation
import FuzzerDriver
import PinsetClient
import PinsetCore
import PinsetSigning
import X509

/// The process entry point: SwiftPM links an executable target's `main` as `BundleVerifierFuzzer_main`.
@_cdecl("BundleVerifierFuzzer_main")
public func bundleVerifierFuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, bundleVerifierFuzzerTestOneInput)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func bundleVerifierFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let context = FuzzContext.shared
    let signature = runBlocking {
        await SignatureVerifier.verify(input, trustAnchors: context.anchors, at: context.now)
    }
    for source in [BundleVerifier.Source.download, .seed] {
        let bundle = runBlocking {
            await BundleVerifier.verify(input, configuration: context.configuration, lastAccepted: nil, source: source, at: context.now)
        }
        if case .success = bundle, case .failure(let error) = signature {
            fatalError("BundleVerifier accepted a bundle whose signature SignatureVerifier refused: \(error)")
        }
    }
    if case .success(let verified) = signature {
        guard verified.content.isEmpty || input.firstRange(of: verified.content) != nil else { fatalError("verified content of \(verified.content.count) bytes is not inside the signed bytes") }
        _ = try? BundlePayload.decode(verified.content)
    }
    return 0
}

/// The trust anchor and the client configuration, loaded once per process.
struct FuzzContext: Sendable {
    let anchors: [Certificate]
    let configuration: PinsetClientConfiguration
    let now: Date

    static let shared: FuzzContext = {
        let environment = ProcessInfo.processInfo.environment["PINSET_FUZZ_TRUST_CERT"]
        let fallback = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build-fuzz/seed/data/trust-cert.pem").path
        let path = environment ?? fallback
        guard let pem = FileManager.default.contents(atPath: path) else {
            fatalError("no trust certificate at \(path): run Fuzz/run, or set PINSET_FUZZ_TRUST_CERT")
        }
        do {
            let anchors = try PinMaterial.certificates(fromFileContents: [UInt8](pem), origin: path)
            let configuration = try PinsetClientConfiguration(
                serverURL: URL(string: "http://127.0.0.1:9/")!,
                customer: CustomerName("acme"),
                trustAnchors: anchors,
                stateDirectory: FileManager.default.temporaryDirectory.path
            )
            return FuzzContext(anchors: anchors, configuration: configuration, now: Date())
        } catch {
            fatalError("cannot load the trust certificate \(path): \(error)")
        }
    }()
}

/// Runs an async verifier to completion from libFuzzer's synchronous callback.
func runBlocking<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        box.value = await body()
        done.signal()
    }
    done.wait()
    guard let value = box.value else { fatalError("the verifier finished without a result") }
    return value
}

/// Written by the task before it signals, read after the wait: the semaphore orders the two accesses.
final class ResultBox<T: Sendable>: @unchecked Sendable {
    var value: T?
}
