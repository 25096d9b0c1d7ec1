import Foundation
import PinsetLiveCheck
import PinsetServer
import Testing

/// The `monitoring` object of the server configuration: opt-in, every key read, every mistake named.
struct MonitoringConfigurationTests {
    func parse(_ json: String) throws(ConfigurationError) -> ServerConfiguration {
        try ServerConfiguration.parse(Data(json.utf8), origin: "test.json")
    }

    @Test func monitoringIsOffUnlessConfigured() throws {
        #expect(try parse("{}").monitoring == nil)
        #expect(try parse(#"{"monitoring": null}"#).monitoring == nil)
        #expect(try parse(#"{"monitoring": {}}"#).monitoring == ServerConfiguration.Monitoring())
    }

    @Test func readsEveryKey() throws {
        let monitoring = try #require(try parse("""
            {"monitoring": {"intervalSeconds": 60, "concurrency": 4, "timeoutSeconds": 2.5, "expiryWarningDays": 14,
             "caFile": "/etc/pinset/internal-ca.pem",
             "connectTo": {"api.example.com": "10.0.0.5", "shop.example.com:8443": "[2001:db8::5]:443", "*": "origin.internal:443"}}}
            """).monitoring)
        #expect(monitoring.intervalSeconds == 60)
        #expect(monitoring.concurrency == 4)
        #expect(monitoring.timeoutSeconds == 2.5)
        #expect(monitoring.expiryWarningDays == 14)
        #expect(monitoring.caFile == "/etc/pinset/internal-ca.pem")
        #expect(monitoring.connectTo.target(host: "API.example.com", port: 443) == ConnectTarget(address: "10.0.0.5"))
        #expect(monitoring.connectTo.target(host: "shop.example.com", port: 8443) == ConnectTarget(address: "2001:db8::5", port: 443))
        // Another port of a name given with a port, and any other name: the wildcard.
        #expect(monitoring.connectTo.target(host: "shop.example.com", port: 443) == ConnectTarget(address: "origin.internal", port: 443))
        #expect(monitoring.connectTo.target(host: "other.example.com", port: 443) == ConnectTarget(address: "origin.internal", port: 443))
        #expect(ConnectToMap().target(host: "api.example.com", port: 443) == nil)
        #expect(try ConnectTarget.parse("2001:db8::5") == ConnectTarget(address: "2001:db8::5"))
        #expect(try ConnectTarget.parse("[::1]") == ConnectTarget(address: "::1"))
    }

    /// A key is the host name as pinned hosts are normalised: spelled with capitals or a trailing dot it still
    /// maps its host, rather than leaving that host to be reached through DNS.
    @Test func connectToKeysAreNormalisedLikeHostNames() throws {
        let monitoring = try #require(try parse("""
            {"monitoring": {"connectTo": {"API.Example.com.": "10.0.0.5", "Shop.Example.com.:8443": "10.0.0.6"}}}
            """).monitoring)
        #expect(monitoring.connectTo.target(host: "api.example.com", port: 443) == ConnectTarget(address: "10.0.0.5"))
        #expect(monitoring.connectTo.target(host: "shop.example.com", port: 8443) == ConnectTarget(address: "10.0.0.6"))
        #expect(monitoring.connectTo.target(host: "shop.example.com", port: 443) == nil)
    }

    @Test(arguments: [
        (#"{"monitoring": true}"#, "'monitoring' must be an object"),
        (#"{"monitoring": {"interval": 60}}"#, "unknown key 'interval'"),
        (#"{"monitoring": {"intervalSeconds": 0}}"#, "'intervalSeconds' is 0.0"),
        (#"{"monitoring": {"concurrency": 0}}"#, "'concurrency' is 0"),
        (#"{"monitoring": {"concurrency": 2.5}}"#, "'concurrency' must be a whole number"),
        (#"{"monitoring": {"timeoutSeconds": 500}}"#, "'timeoutSeconds' is 500.0"),
        (#"{"monitoring": {"intervalSeconds": 5, "timeoutSeconds": 10}}"#, "must be shorter than 'intervalSeconds'"),
        (#"{"monitoring": {"caFile": ""}}"#, "'caFile' is empty"),
        (#"{"monitoring": {"connectTo": ["10.0.0.5"]}}"#, "'connectTo' must be an object"),
        (#"{"monitoring": {"connectTo": {"api.example.com": 443}}}"#, "'connectTo' entry 'api.example.com' must be a string"),
        (#"{"monitoring": {"connectTo": {"api.example.com": "10.0.0.5:99999"}}}"#, "port that is not from 1 to 65535"),
        (#"{"monitoring": {"connectTo": {"api example.com": "10.0.0.5"}}}"#, "'api example.com' is not a host name"),
        (#"{"monitoring": {"connectTo": {"api.example.com": "10.0.0.5/24"}}}"#, "is not an address or host name"),
        (#"{"monitoring": {"connectTo": {"*.example.com": "10.0.0.5"}}}"#, "'*.example.com' is a wildcard"),
        (#"{"monitoring": {"connectTo": {"api.example.com": "10.0.0.5:443:8443"}}}"#, "'10.0.0.5:443:8443' is not an IPv6 address"),
        (#"{"monitoring": {"connectTo": {"api.example.com": "[origin.internal]:443"}}}"#, "'[origin.internal]:443' is not an IPv6 address"),
        (#"{"monitoring": {"connectTo": {"api.example.com": "10.0.0.5:+443"}}}"#, "port that is not from 1 to 65535"),
        (#"{"monitoring": {"connectTo": {"api.example.com": "10.0.0.5", "API.example.com.": "10.0.0.6"}}}"#, "names the same host as another key, which maps it to 10.0.0."),
        (#"{"monitoring": {"connectTo": {"api..example.com": "10.0.0.5"}}}"#, "'api..example.com' is not a host name"),
    ])
    func refusesWithAMessageNamingTheKey(json: String, expected: String) {
        let error = #expect(throws: ConfigurationError.self) { try parse(json) }
        #expect(error?.message.contains("test.json") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains(expected) == true, "\(error?.message ?? "")")
    }
}
