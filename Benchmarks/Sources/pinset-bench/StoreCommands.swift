import Foundation
import PinsetAdmin
import PinsetCore
import PinsetStore

/// Fills a database through the admin library, as the local operator, so the benchmarks' data passes the rules
/// every front end applies. By default with the same calls `pinset customer add`, `pinset host add` and `pinset pin
/// add` make: one transaction per customer, one per host, one pin batch per host. With `--batch N`,
/// `Admin.importCustomers` (what `pinset import signer-py` uses) writes N customers with their hosts and pins per
/// transaction: the same rows, without 11 durable commits per customer, which is what makes 100,000 customers
/// take minutes instead of most of an hour.
enum PopulateCommand {
    static func run(_ options: Arguments) throws {
        let customers = try options.int("customers")
        let batch = try options.int("batch", default: 0)
        let dataset = try Dataset(hosts: try options.int("hosts", default: 5), pinsPerHost: try options.int("pins", default: 3))
        let (store, admin) = try StoreOptions.admin(options)
        let local = try admin.localOperator
        let existing = try store.customers().count
        let range = (existing + 1)..<(existing + 1 + customers)
        let seconds: Double
        let transactions: Int
        if batch > 0 {
            transactions = (customers + batch - 1) / batch
            seconds = try Measure.time {
                var start = range.lowerBound
                while start < range.upperBound {
                    let end = min(start + batch, range.upperBound)
                    let imports = try (start..<end).map { customer in
                        CustomerImport(
                            name: try Dataset.customerName(customer),
                            hosts: try (1...dataset.hosts).map { host in
                                HostPins(hostname: try dataset.hostname(customer: customer, host: host), port: 443,
                                         pins: dataset.pins(customer: customer, host: host))
                            },
                            ownSigningIdentity: nil, origin: "pinset-bench populate"
                        )
                    }
                    try admin.importCustomers(imports, by: local)
                    // Progress every 10,000 customers (a batch boundary need not fall on a round number).
                    if (start - 1) / 10_000 != (end - 1) / 10_000 { Report.note("populated \(end - 1) customers") }
                    start = end
                }
            }
        } else {
            transactions = customers * (1 + 2 * dataset.hosts)
            seconds = try Measure.time {
                for customer in range {
                    let name = try Dataset.customerName(customer)
                    try admin.addCustomer(name, servesLegacyClients: false, by: local)
                    for host in 1...dataset.hosts {
                        let hostname = try dataset.hostname(customer: customer, host: host)
                        try admin.addHost(hostname, port: 443, includeSubdomains: false, to: name, by: local)
                        try StoreOptions.addPins(dataset.pins(customer: customer, host: host), to: hostname, of: name, with: admin)
                    }
                    if customer % 1000 == 0 { Report.note("populated \(customer) customers") }
                }
            }
        }
        let total = try store.customers().count
        try Report.emit([
            "customersAdded": customers, "customersTotal": total, "seconds": seconds,
            "transactions": transactions, "mode": batch > 0 ? "importCustomers" : "perRow", "batch": batch,
        ])
    }
}

/// How long the server's first step of every signing pass takes: reading all pin sets in one transaction.
enum LoadCommand {
    static func run(_ options: Arguments) throws {
        let store = try PinStore.open(try StoreOptions.location(options), readOnly: true)
        let repeats = max(1, try options.int("repeat", default: 3))
        var samples: [Double] = []
        var count = 0
        for _ in 0..<repeats {
            samples.append(try Measure.time { count = try store.allPinSets().count })
        }
        try Report.emit(["customers": count, "seconds": Measure.summary(samples)])
    }
}

/// The store a command works on: `--database LOCATION` (a SQLite path or a PostgreSQL URL, as `pinset
/// --database` takes it) or `--db PATH` (SQLite only).
enum StoreOptions {
    /// The store `--database`/`--db` names, and the admin library on it as this host's local operator. Only the
    /// database is used: no signing identity is made or read.
    static func admin(_ options: Arguments) throws -> (PinStore, Admin) {
        let location = try location(options)
        let store = try PinStore.open(location)
        let dataDirectory = DataDirectory(FileManager.default.currentDirectoryPath, database: location.description)
        return (store, try Admin.forLocalOperator("pinset-bench", store: store, dataDirectory: dataDirectory))
    }

    /// Pins added as `pinset pin add --skip-live-check` adds them: the benchmarks' hosts are not served anywhere.
    static func addPins(_ pins: [Pin], to hostname: Hostname, of customer: CustomerName, with admin: Admin) throws {
        _ = try admin.applyPinEdit(PinEdit(hostname: hostname, operation: .addPins(pins)), of: customer, checked: nil,
                                   note: "live check skipped: benchmark hosts are not served", by: try admin.localOperator)
    }

    static func location(_ options: Arguments) throws -> StoreLocation {
        let database = try? options.string("database")
        let path = try? options.string("db")
        switch (database, path) {
        case (let database?, nil): return try StoreLocation(parsing: database)
        case (nil, let path?): return .sqlite(path: path)
        case (.some, .some): throw BenchError("give either --database or --db, not both")
        case (nil, nil): throw BenchError("--database LOCATION (a SQLite path or a postgres:// URL) or --db PATH is required")
        }
    }
}
