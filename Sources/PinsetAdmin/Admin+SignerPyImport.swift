import Foundation
import PinsetCore
import PinsetLiveCheck
import PinsetStore

/// How the live chains of a signer.py import were checked.
public struct SignerPyLiveCheck: Sendable {
    /// Each imported host with pins, checked; empty when the check was skipped.
    public var results: [HostCheckResult]
    /// What the audit log records about the check.
    public var auditNote: String
    /// Hosts whose pins match nothing they serve or that could not be checked: the import is refused.
    public var failing: [HostCheckResult] { results.filter(\.state.isFailing) }
}

extension Admin {
    /// Reads a signer.py working directory and checks it against this deployment: every problem (a file, a
    /// customer that exists already, a key directory in the way) is reported with where it was found, and
    /// nothing is imported while there is one.
    public func readSignerPyDirectory(_ directory: String) throws -> SignerPyDirectory {
        let source = try SignerPyDirectory(root: directory)
        var problems = source.problems.map(\.description)
        let existing = Dictionary(try store.customers().map { ($0.name.rawValue.lowercased(), $0.name) }, uniquingKeysWith: { first, _ in first })
        let locations = dataDirectory.signingIdentityLocations
        for customer in source.customers {
            if let taken = existing[customer.name.rawValue.lowercased()] {
                problems.append("\(directory)/data/\(customer.name).domains: customer '\(taken)' already exists in Pinset. Remove it first ('pinset customer remove \(taken)') or import into another database.")
            }
            if FileManager.default.fileExists(atPath: locations.directory(of: customer.name)) {
                problems.append("\(locations.directory(of: customer.name)) already exists; move it away (it may hold a key apps still trust) and run the import again.")
            }
        }
        guard problems.isEmpty else {
            throw AdminError(lines: ["Nothing was imported:"] + problems.map { "  \($0)" })
        }
        return source
    }

    /// Checks every imported host's pins against the chain it serves (`skipReason` skips the check, for the
    /// audit log).
    public static func checkLiveChains(
        of source: SignerPyDirectory, skipReason: String?, caFile: String?, connectTo: ConnectToMap
    ) async throws -> SignerPyLiveCheck {
        if let skipReason {
            return SignerPyLiveCheck(results: [], auditNote: "live-chain check skipped with --skip-live-check: \(skipReason)")
        }
        let jobs = source.customers.flatMap { customer in
            customer.hosts.filter { !$0.pins.isEmpty }.map { HostCheckJob(customer: customer.name, host: $0) }
        }
        let checker = HostChecker(fetcher: LiveChainFetcher(roots: try LiveChainFetcher.roots(caFile: caFile)), connectTo: connectTo)
        let results = await checker.check(jobs, concurrency: 8)
        let note = "live chains checked: \(results.count) host(s), " + Dictionary(grouping: results, by: \.state.rawValue)
            .sorted { $0.key < $1.key }.map { "\($0.value.count) \($0.key)" }.joined(separator: ", ")
        return SignerPyLiveCheck(results: results, auditNote: note)
    }

    /// Imports every customer of `source` with its own key and certificate (copied, mode 0600, into the
    /// customer key directory), hosts and pins, in one transaction; refused when the live check found a
    /// failing host. The key files are removed again if the database change fails.
    public func importSignerPy(_ source: SignerPyDirectory, liveCheck: SignerPyLiveCheck) throws {
        let failing = liveCheck.failing
        guard failing.isEmpty else {
            throw AdminError("Nothing was imported: the pins of " + failing.map { "\($0.customer)/\($0.host.hostname):\($0.host.port) (\($0.state.rawValue))" }.joined(separator: ", ")
                + " match nothing the host serves or could not be checked, so apps would fail once Pinset serves them. Fix the pins in signer.py's data, reach the hosts with --connect-to/--ca-file, or pass --skip-live-check --reason TEXT if they are not reachable from here.")
        }
        let imports = source.customers.map { customer in
            CustomerImport(
                name: customer.name, hosts: customer.hosts,
                ownSigningIdentity: OwnSigningIdentityRecord(
                    keyType: customer.identity.keyType.description,
                    details: "\(customer.identity.auditSummary), imported from \(customer.keyPath)"
                ),
                origin: "signer.py \(source.root) (\(liveCheck.auditNote))",
                // Every app of a signer.py deployment is a legacy GCX client.
                servesLegacyClients: true
            )
        }
        let locations = dataDirectory.signingIdentityLocations
        var created: [CustomerIdentityFiles.CreatedFiles] = []
        do {
            for customer in source.customers {
                created.append(try CustomerIdentityFiles(locations: locations, customer: customer.name).create(customer.identity))
            }
            try importCustomers(imports, by: try localOperator)
        } catch {
            for files in created.reversed() { files.remove() }
            throw AdminError("Nothing was imported: \(error)")
        }
    }
}
