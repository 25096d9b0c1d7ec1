// libFuzzer entry point for `BundlePayload.decode`: the JSON a verified bundle carries, parsed by every app.
//
// Any input may be refused, but never with a trap, a hang or unbounded memory. An accepted payload must satisfy
// the rules the decoder promises (a valid customer name, `expires` after `timestamp`, non-negative version and
// timestamp, unique host names, ports 1...65535, every `pk` key present in `pin-sha256`), decoding must be
// deterministic, and what the server would sign for it (`encoded()`) must decode to the same payload, less the
// entries without pins (`encoded()` never publishes those).
import Foundation
import FuzzerDriver
import PinsetCore

/// The process entry point: SwiftPM links an executable target's `main` as `PayloadDecoderFuzzer_main`.
@_cdecl("PayloadDecoderFuzzer_main")
public func payloadDecoderFuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, payloadDecoderFuzzerTestOneInput)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func payloadDecoderFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let first: BundlePayload
    do {
        first = try BundlePayload.decode(input)
    } catch {
        if error.description.isEmpty { fatalError("a refusal without a reason") }
        return 0
    }
    guard first.expires > first.timestamp, first.timestamp >= 0, first.version >= 0 else {
        fatalError("accepted a payload with timestamp \(first.timestamp), expires \(first.expires), version \(first.version)")
    }
    var hostnames = Set<String>()
    for host in first.hosts {
        guard hostnames.insert("\(host.hostname)").inserted else { fatalError("accepted a duplicate host \(host.hostname)") }
        guard host.port > 0 else { fatalError("accepted port 0 for \(host.hostname)") }
        let pinned = Set(host.spkiSHA256)
        for key in host.subjectPublicKeyInfos where !pinned.contains(SHA256Fingerprint(of: key)) {
            fatalError("accepted a pk of \(host.hostname) that is not in pin-sha256")
        }
    }
    guard let second = try? BundlePayload.decode(input[...]), second == first else {
        fatalError("decoding the same bytes twice gave different results")
    }
    let reencoded = first.encoded()
    let roundTripped: BundlePayload
    do {
        roundTripped = try BundlePayload.decode(reencoded)
    } catch {
        fatalError("an accepted payload is refused once encoded(): \(error)\n\(String(decoding: reencoded, as: UTF8.self))")
    }
    var published = first
    published.hosts = first.publishedHosts
    guard roundTripped == published else {
        fatalError("an accepted payload changes through encoded() and decode():\n\(first)\n\(roundTripped)")
    }
    return 0
}
