import X509

extension LiveChainFetcher {
    /// The roots of a CA file, or the system's.
    public static func roots(caFile: String?) throws(LiveChainError) -> TrustRoots {
        do {
            return try caFile.map { try TrustRoots.file($0) } ?? .system
        } catch {
            throw LiveChainError("\(error)", kind: .invalidInput)
        }
    }

    /// The chain of `endpoint` (`HOST:PORT`) for a one-off check, reached at `connectTo` (`ADDRESS[:PORT]`)
    /// when given.
    ///
    /// - Throws: `LiveChainError` saying what failed and, for a chain that does not validate, how to get past it.
    public static func fetchChain(
        endpoint: String, caFile: String?, verify: Bool, connectTo: String? = nil, addressPolicy: OutboundAddressPolicy? = nil, timeout: Duration = defaultTimeout
    ) async throws(LiveChainError) -> [Certificate] {
        try await fetchValidatedChain(endpoint: endpoint, caFile: caFile, verify: verify, connectTo: connectTo, addressPolicy: addressPolicy, timeout: timeout).presented
    }

    /// The chain of `endpoint` and the validated path to its trust anchor (see
    /// ``LiveChainFetcher/fetchValidatedChain(host:port:connectTo:verify:)``), for a one-off check; `addressPolicy`
    /// judges where the host's name leads (nil: anywhere, for a command run on an admin's own machine).
    public static func fetchValidatedChain(
        endpoint: String, caFile: String?, verify: Bool = true, connectTo: String? = nil, addressPolicy: OutboundAddressPolicy? = nil,
        timeout: Duration = defaultTimeout
    ) async throws(LiveChainError) -> (presented: [Certificate], validatedPath: [Certificate]) {
        let fetcher = LiveChainFetcher(roots: try roots(caFile: caFile), timeout: timeout, addressPolicy: addressPolicy)
        let target: ConnectTarget?
        do {
            target = try connectTo.map { try ConnectTarget.parse($0) }
        } catch {
            throw LiveChainError("--connect-to: \(error)", kind: .invalidInput)
        }
        do {
            let (host, port) = try parseEndpoint(endpoint)
            return try await fetcher.fetchValidatedChain(host: host, port: port, connectTo: target, verify: verify)
        } catch where error.kind == .notValidated {
            throw LiveChainError("\(error) Pass --ca-file with the right CA; to pin a chain you have checked by other means, 'pin add --from-host' takes --no-verify.", kind: .notValidated)
        }
    }
}

extension ConnectToMap {
    /// `--connect-to` values of commands that check many hosts: `ADDRESS[:PORT]` for every host, or
    /// `NAME=ADDRESS[:PORT]` (NAME may be NAME:PORT) for one.
    ///
    /// - Throws: `LiveChainError` naming the value that is wrong.
    public static func parse(commandLine values: [String]) throws(LiveChainError) -> ConnectToMap {
        var map = ConnectToMap()
        for value in values {
            let (name, target) = value.firstIndex(of: "=").map { (String(value[..<$0]), String(value[value.index(after: $0)...])) } ?? ("*", value)
            do {
                try map.add(name, try ConnectTarget.parse(target))
            } catch {
                throw LiveChainError("--connect-to '\(value)': \(error)", kind: .invalidInput)
            }
        }
        return map
    }
}
