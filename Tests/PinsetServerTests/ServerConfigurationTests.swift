import Foundation
import PinsetServer
import PinsetTestSupport
import Testing

struct ServerConfigurationTests {
    func parse(_ json: String) throws(ConfigurationError) -> ServerConfiguration {
        try ServerConfiguration.parse(Data(json.utf8), origin: "test.json")
    }

    @Test func theExampleFileIsValidAndMatchesTheDefaults() throws {
        let example = try ServerConfiguration.load(path: SourceTree.path("config.example.json"))
        #expect(example == ServerConfiguration())
    }

    @Test func readsEveryKey() throws {
        let config = try parse(#"{"host":"0.0.0.0","port":9000,"resignIntervalSeconds":120,"logFormat":"json","accessLog":false,"maxConnections":10}"#)
        #expect(config.host == "0.0.0.0")
        #expect(config.port == 9000)
        #expect(config.resignIntervalSeconds == 120)
        #expect(config.logFormat == .json)
        #expect(!config.accessLog)
        #expect(config.maxConnections == 10)
    }

    @Test func readsTheConnectionLimitsAndTheAdminListener() throws {
        let config = try parse(#"{"maxConnectionsPerAddress": 4, "admin": {"port": 9090}}"#)
        #expect(config.maxConnectionsPerAddress == 4)
        #expect(config.admin == .init(host: "127.0.0.1", port: 9090))
        #expect(try parse(#"{"admin": {"host": "10.0.0.5", "port": 0}}"#).admin == .init(host: "10.0.0.5", port: 0))
        #expect(try parse(#"{"admin": null}"#).admin == nil)
        #expect(ServerConfiguration().maxConnectionsPerAddress == 32)
    }

    @Test func readsTheTrustedProxies() throws {
        let config = try parse(#"{"proxyProtocol": true, "trustedProxies": ["10.0.0.0/24", "fd00::5"]}"#)
        #expect(config.trustedProxies.map(\.description) == ["10.0.0.0/24", "fd00::5/128"])
        #expect(ServerConfiguration().trustedProxies.isEmpty)
        #expect(try parse(#"{"reports": {"port": 0, "proxyProtocol": true}, "trustedProxies": ["10.0.0.7"]}"#).trustedProxies.count == 1)
        // The file alone may leave the protocol to the command line's --proxy-protocol.
        var fromFile = try parse(#"{"trustedProxies": ["10.0.0.0/24"]}"#)
        fromFile.proxyProtocol = true
        try fromFile.validate(origin: "the command line")
        for (json, says) in [
            (#"{"trustedProxies": ["10.0.0.0/24"]}"#, "no listener expects the protocol"),
            (#"{"proxyProtocol": true, "trustedProxies": ["10.0.0.1/24"]}"#, "address bits set beyond"),
            (#"{"proxyProtocol": true, "trustedProxies": "10.0.0.0/24"}"#, "must be a list"),
        ] {
            do {
                // As `pinset serve` checks it, after the command line (which may turn the protocol on).
                try parse(json).validate(origin: "test.json")
                Issue.record("accepted: \(json)")
            } catch {
                #expect(error.message.contains("trustedProxies") && error.message.contains(says), "\(error.message)")
            }
        }
    }

    @Test func readsTheTransport() throws {
        #expect(ServerConfiguration().transport == .platformDefault)
        #expect(try parse(#"{"transport": null}"#).transport == .platformDefault)
        for transport in SocketTransport.available {
            #expect(try parse(#"{"transport": "\#(transport.rawValue)"}"#).transport == transport)
        }
    }

    @Test(arguments: [
        (#"{"prot": 1}"#, "unknown key 'prot'"),
        (#"{"Port": 1}"#, "Did you mean 'port'"),
        (#"{"port": "8080"}"#, "'port' must be a whole number"),
        (#"{"port": 70000}"#, "'port' is 70000"),
        (#"{"port": 80.5}"#, "'port' must be a whole number"),
        (#"{"accessLog": 1}"#, "'accessLog' must be true or false"),
        (#"{"logLevel": "loud"}"#, "'logLevel' is 'loud'"),
        (#"{"transport": "kqueue"}"#, "'transport' is 'kqueue'"),
        (#"{"resignIntervalSeconds": 900}"#, "must be shorter than 'freshnessWindowSeconds'"),
        (#"{"maxConnectionsPerAddress": 0}"#, "'maxConnectionsPerAddress' is 0"),
        (#"{"bundleLifetimeSeconds": 2678401}"#, "must be from 600 to 2678400"),
        (#"{"bundleLifetimeSeconds": 599}"#, "must be from 600 to 2678400"),
        (#"{"transparencyLog": {"origin": "pins.\u212Aelvin.test/log"}}"#, "'origin' is missing or not a single word of printable ASCII"),
        (#"{"transparencyLog": {"origin": "pins example/log"}}"#, "'origin' is missing or not a single word of printable ASCII"),
        (#"{"admin": 9090}"#, "'admin' must be an object"),
        (#"{"admin": {"host": "127.0.0.1"}}"#, "'port' is missing"),
        (#"{"admin": {"port": 9090, "prot": 1}}"#, "unknown key 'prot'"),
        (#"{"admin": {"port": 99999}}"#, "'port' is 99999"),
        (#"[1]"#, "must be a JSON object"),
        (#"{"#, "not valid JSON"),
    ])
    func namesTheBadKey(json: String, message: String) {
        #expect {
            _ = try parse(json)
        } throws: { error in
            (error as? ConfigurationError)?.message.contains(message) == true
        }
    }

    /// A trailing comma or a key given twice is refused, and the message says where: a file with either does not mean
    /// one thing for sure.
    @Test func malformedJSONIsRefusedWithItsLineAndColumn() throws {
        let trailing = #expect(throws: ConfigurationError.self) { try parse("{\n  \"port\": 8080,\n}\n") }
        #expect(trailing?.message.contains("test.json is not valid JSON at line 3, column 1") == true, "\(String(describing: trailing))")
        let twice = #expect(throws: ConfigurationError.self) { try parse(#"{"port": 8080, "port": 9090}"#) }
        #expect(twice?.message.contains("line 1") == true && twice?.message.contains("port") == true, "\(String(describing: twice))")
        #expect(twice?.message.contains("DecodingError") == false)
    }

    /// A key pasted where its path belongs is refused without a character of it in the message.
    @Test func aPastedPrivateKeyIsRefusedUnquoted() throws {
        let body = "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgm7fy9AOapX3QiLiaK1cHO4Ne0W7"
        let refused = #expect(throws: ConfigurationError.self) {
            try parse(#"{"signingKeyPath": "-----BEGIN PRIVATE KEY-----\n\#(body)\n-----END PRIVATE KEY-----\n"}"#)
        }
        #expect(refused?.message.contains("contains a private key") == true && refused?.message.contains(String(body.prefix(12))) == false, "\(String(describing: refused))")
    }

    @Test func commentKeysAreIgnored() throws {
        #expect(try parse(#"{"_note": "anything", "port": 1}"#).port == 1)
    }
}
