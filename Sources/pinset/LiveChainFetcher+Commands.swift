import ArgumentParser
import PinsetLiveCheck
import X509

extension LiveChainFetcher {
    /// The roots of `--ca-file`, or the system's.
    static func roots(caFile: String?) throws -> TrustRoots {
        do {
            return try caFile.map { try TrustRoots.file($0) } ?? .system
        } catch {
            throw CLIError("\(error)")
        }
    }

    /// The chain of `endpoint` (`HOST:PORT`) for a one-off command, reached at `connectTo` (`ADDRESS[:PORT]`)
    /// when given.
    ///
    /// - Throws: `CLIError` saying what failed and, for a chain that does not validate, how to get past it.
    static func fetchChain(endpoint: String, caFile: String?, verify: Bool, connectTo: String? = nil) async throws -> [Certificate] {
        let fetcher = LiveChainFetcher(roots: try roots(caFile: caFile))
        let target: ConnectTarget?
        do {
            target = try connectTo.map { try ConnectTarget.parse($0) }
        } catch {
            throw CLIError("--connect-to: \(error)")
        }
        do throws(LiveChainError) {
            let (host, port) = try parseEndpoint(endpoint)
            return try await fetcher.fetchChain(host: host, port: port, connectTo: target, verify: verify)
        } catch {
            switch error.kind {
            case .notValidated:
                throw CLIError("\(error) Nothing was changed. Pass --ca-file with the right CA, or --no-verify (pin add --from-host) if you have checked the server by other means.")
            case .unreachable, .invalidInput:
                throw CLIError("\(error)")
            }
        }
    }
}

extension ConnectToMap {
    /// `--connect-to` values of commands that check many hosts: `ADDRESS[:PORT]` for every host, or
    /// `NAME=ADDRESS[:PORT]` (NAME may be NAME:PORT) for one.
    ///
    /// - Throws: `ValidationError` naming the value that is wrong.
    static func parse(commandLine values: [String]) throws -> ConnectToMap {
        var map = ConnectToMap()
        for value in values {
            let (name, target) = value.firstIndex(of: "=").map { (String(value[..<$0]), String(value[value.index(after: $0)...])) } ?? ("*", value)
            do {
                try map.add(name, try ConnectTarget.parse(target))
            } catch {
                throw ArgumentParser.ValidationError("--connect-to '\(value)': \(error)")
            }
        }
        return map
    }
}
