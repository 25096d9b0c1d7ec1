import Foundation
import PinsetServer
import Testing

/// The `reports` object of the server configuration: opt-in, every key read, every mistake named.
struct ReportsConfigurationTests {
    func parse(_ json: String) throws(ConfigurationError) -> ServerConfiguration {
        try ServerConfiguration.parse(Data(json.utf8), origin: "test.json")
    }

    @Test func reportsAreOffUnlessConfigured() throws {
        #expect(try parse("{}").reports == nil)
        #expect(try parse(#"{"reports": null}"#).reports == nil)
        let defaults = try #require(try parse(#"{"reports": {"port": 9443}}"#).reports)
        #expect(defaults == ServerConfiguration.Reports(host: "127.0.0.1", port: 9443))
        #expect(defaults.maxBodyBytes == 32_768)
        #expect(defaults.retentionDays == 30)
        #expect(!defaults.proxyProtocol)
        #expect(defaults.maxRowsPerCustomerHour == 1000)
    }

    @Test func readsEveryKey() throws {
        let reports = try #require(try parse("""
            {"reports": {"host": "0.0.0.0", "port": 9444, "maxBodyBytes": 4096, "reportsPerMinutePerAddress": 5,
             "maxTrackedAddresses": 1000, "maxPendingCounts": 200, "maxInstallationsPerHour": 300, "retentionDays": 7,
             "flushIntervalSeconds": 0.2, "maxRowsPerCustomerHour": 50, "proxyProtocol": true}}
            """).reports)
        #expect(reports.host == "0.0.0.0")
        #expect(reports.port == 9444)
        #expect(reports.maxBodyBytes == 4096)
        #expect(reports.reportsPerMinutePerAddress == 5)
        #expect(reports.maxTrackedAddresses == 1000)
        #expect(reports.maxPendingCounts == 200)
        #expect(reports.maxInstallationsPerHour == 300)
        #expect(reports.retentionDays == 7)
        #expect(reports.flushIntervalSeconds == 0.2)
        #expect(reports.maxRowsPerCustomerHour == 50)
        #expect(reports.proxyProtocol)
    }

    @Test(arguments: [
        (#"{"reports": {}}"#, "'port' is missing; give the reports listener its own port such as 9443."),
        (#"{"reports": {"port": 9443, "retention": 3}}"#, "unknown key 'retention'; reports takes host, port, maxBodyBytes"),
        (#"{"reports": {"port": 9443, "maxBodyBytes": 10}}"#, "'maxBodyBytes' is 10; it must be from 1024 to 1048576."),
        (#"{"reports": {"port": 9443, "retentionDays": 0}}"#, "'retentionDays' is 0; it must be from 1 to 3650."),
        (#"{"reports": {"port": 9443, "maxRowsPerCustomerHour": 0}}"#, "'maxRowsPerCustomerHour' is 0; it must be from 1 to 1000000."),
        (#"{"reports": {"port": "9443"}}"#, "'port' must be a whole number, but it is a string"),
        (#"{"reports": {"port": 9443, "host": ""}}"#, "'host' is empty"),
        (#"{"reports": true}"#, "'reports' must be an object such as {\"host\": \"127.0.0.1\", \"port\": 9443}"),
        (#"{"port": 9443, "reports": {"port": 9443}}"#, "'reports.port' (9443) is also 'port'; give the reports listener a port of its own"),
        (#"{"admin": {"port": 9090}, "reports": {"port": 9090}}"#, "'reports.port' (9090) is also 'admin.port'"),
    ])
    func mistakesAreNamed(json: String, message: String) {
        #expect(throws: ConfigurationError.self) { try parse(json) }
        do {
            _ = try parse(json)
        } catch {
            #expect(error.message.contains(message), "\(error.message)")
        }
    }
}
