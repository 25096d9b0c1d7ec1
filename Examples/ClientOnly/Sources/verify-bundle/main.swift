import Foundation
import PinsetClient
import PinsetCore

// verify-bundle BUNDLE TRUST-CERT CUSTOMER: verifies a signed bundle as an app does before it uses the pins (the
// signature against the trust certificate, the customer, freshness, bounds), and prints the pinned hosts.
let arguments = CommandLine.arguments
guard arguments.count == 4 else {
    FileHandle.standardError.write(Data("usage: verify-bundle BUNDLE TRUST-CERT CUSTOMER\n".utf8))
    exit(2)
}
let bundle = try [UInt8](Data(contentsOf: URL(fileURLWithPath: arguments[1])))
let trust = try [UInt8](Data(contentsOf: URL(fileURLWithPath: arguments[2])))
let configuration = try PinsetClientConfiguration(
    serverURL: URL(string: "https://pins.example.com")!, customer: try CustomerName(arguments[3]),
    trustCertificates: [trust], stateDirectory: NSTemporaryDirectory()
)
switch await BundleVerifier.verify(bundle, configuration: configuration, lastAccepted: nil, source: .download, at: Date()) {
case .success(let verified):
    for host in verified.hosts { print(host.hostname) }
case .failure(let error):
    FileHandle.standardError.write(Data("refused: \(error)\n".utf8))
    exit(1)
}
