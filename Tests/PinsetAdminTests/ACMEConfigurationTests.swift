import Foundation
import PinsetAdmin
import PinsetCore
import Testing

/// The configuration of `pinset acme`: data read once by pinset, strictly. Every refusal is a configuration error
/// (exit 2) that names the line and says what to write instead.
struct ACMEConfigurationTests {
    static let base = "PINSET_CUSTOMER=acme\nPINSET_HOST=api.example.com\n"

    func parse(_ text: String, environment: [String: String] = [:]) throws(ACMEFailure) -> ACMEConfiguration {
        try ACMEConfiguration.parse(fileText: text, path: "/etc/pinset-acme/api.conf", environment: environment)
    }

    @Test func aMinimalFileGetsTheDocumentedDefaults() throws {
        let configuration = try parse("# one certificate\n\n" + Self.base)
        #expect(configuration.customer.rawValue == "acme" && configuration.host.rawValue == "api.example.com")
        #expect(configuration.stateDirectory == "/var/lib/pinset-acme/api.example.com")
        #expect(configuration.domains == ["api.example.com"])
        #expect(configuration.keyType == .p256)
        #expect(configuration.waitSeconds == 60 && configuration.reuseDays == 7 && configuration.renewDays == nil)
        #expect(configuration.actor == "pinset-acme" && configuration.minimumShare == RotationGate.defaultMinimumShare)
        #expect(configuration.deployCompletes && !configuration.force && configuration.connect == nil)
        #expect(configuration.connectDescription == "api.example.com:443")
        #expect(throws: ACMEFailure.self) { try configuration.deployTargets() }
    }

    @Test func valuesAreTakenLiterallyWhetherBareOrQuoted() throws {
        let configuration = try parse(Self.base + """
            PINSET_ACME_RELOAD="systemctl reload nginx"
            PINSET_DATABASE='postgres://pinset@db:5432/pinset?sslmode=verify-full&x=$HOME'
            PINSET_ACME_DOMAINS="api.example.com *.api.example.com"
            PINSET_ACME_CONNECT=[::1]:8443
            PINSET_ACME_KEY_TYPE=rsa3072
            PINSET_ACME_WAIT_SECONDS=08
            PINSET_ACME_KEEP="r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E="
            PINSET_ACME_COMPLETE=no
            PINSET_ACME_CERT_FILE=/etc/ssl/api.pem
            PINSET_ACME_KEY_FILE=/etc/ssl/api.pem
            """)
        #expect(configuration.reloadCommand == "systemctl reload nginx")
        #expect(configuration.database == "postgres://pinset@db:5432/pinset?sslmode=verify-full&x=$HOME")
        #expect(configuration.domains == ["api.example.com", "*.api.example.com"])
        #expect(configuration.connectDescription == "[::1]:8443")
        #expect(configuration.keyType == .rsa(bits: 3072) && configuration.waitSeconds == 8 && !configuration.deployCompletes)
        #expect(configuration.keep.map(\.base64) == ["r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E="])
        #expect(try configuration.deployTargets() == ("/etc/ssl/api.pem", "/etc/ssl/api.pem"))
    }

    @Test func theFileOverridesTheEnvironmentAndAnEmptyValueUnsetsIt() throws {
        let environment = ["PINSET_ACME_REUSE_DAYS": "30", "PINSET_ACME_EMAIL": "env@example.com", "PINSET_HOST": "env.example.com", "PINSET_BIN": "/opt/pinset"]
        let configuration = try parse(Self.base + "PINSET_ACME_EMAIL=\n", environment: environment)
        #expect(configuration.reuseDays == 30, "taken from the environment")
        #expect(configuration.host.rawValue == "api.example.com", "the file wins")
        #expect(configuration.email == nil, "unset by the file")
        let fromEnvironment = try ACMEConfiguration.parse(fileText: nil, path: nil, environment: ["PINSET_CUSTOMER": "acme", "PINSET_HOST": "a.example.com"])
        #expect(fromEnvironment.host.rawValue == "a.example.com")
    }

    @Test(arguments: [
        ("PINSET_BIN=/usr/local/bin/pinset", ["line 3", "PINSET_BIN is not a setting", "environment of the certbot or lego shim"]),
        ("PINSET_ACME_RELAOD=true", ["line 3", "PINSET_ACME_RELAOD is not a setting", "PINSET_ACME_RELOAD"]),
        ("PINSET_ACME_KEYTYPE=ec256", ["Did you mean PINSET_ACME_KEY_TYPE?"]),
        ("export PINSET_ACME_FORCE=1", ["line 3", "no 'export'"]),
        ("PINSET_ACME_RELOAD", ["line 3", "is not a setting: write NAME=value"]),
        ("PINSET_ACME_RELOAD=systemctl reload nginx", ["line 3 (PINSET_ACME_RELOAD)", "' ' in an unquoted value", "single quotes"]),
        ("PINSET_ACME_RELOAD=\"kill -HUP $(cat /run/nginx.pid)\"", ["'$' inside double quotes", "expands nothing"]),
        ("PINSET_ACME_RELOAD=\"systemctl reload nginx", ["opens \" without closing it"]),
        ("PINSET_HOST=other.example.com", ["line 3: PINSET_HOST is set again (first on line 2)"]),
        ("PINSET_ACME_KEY_TYPE=ec521", ["PINSET_ACME_KEY_TYPE on line 3", "'ec521'", "use ec256, ec384, rsa2048, rsa3072 or rsa4096"]),
        ("PINSET_ACME_WAIT_SECONDS=1m", ["PINSET_ACME_WAIT_SECONDS on line 3", "whole number"]),
        ("PINSET_ACME_REUSE_DAYS=1234567890", ["at most 9 digits"]),
        ("PINSET_MINIMUM_SHARE=1.5", ["from 0 to 1"]),
        ("PINSET_ACME_CONNECT=10.0.0.1:99999", ["PINSET_ACME_CONNECT on line 3", "port"]),
        ("PINSET_ACME_KEEP=not-a-hash", ["'not-a-hash' is not a base64 SPKI SHA-256"]),
        ("PINSET_ACME_COMPLETE=false", ["give yes or no"]),
        ("PINSET_ACME_DOMAINS='api.example.com bad_name!'", ["'bad_name!' is not a DNS name"]),
        ("PINSET_ACME_SERVER=acme.example.com", ["ACME directory URL"]),
    ])
    func badLinesAreRefusedWithWhereAndHow(line: String, expected: [String]) {
        do {
            _ = try parse(Self.base + line + "\n")
            Issue.record("accepted: \(line)")
        } catch {
            #expect(error.status == .usage)
            for part in expected { #expect(error.message.contains(part), "\(error.message)") }
        }
    }

    @Test func missingAndInvalidRequiredSettingsSayWhatToSet() {
        #expect(throws: ACMEFailure.self) { try parse("PINSET_CUSTOMER=acme\n") }
        do { _ = try parse("PINSET_CUSTOMER=acme\n") } catch {
            #expect(error.status == .usage && error.message.contains("PINSET_HOST is not set") && error.message.contains("in /etc/pinset-acme/api.conf"))
        }
        do { _ = try parse("PINSET_CUSTOMER='Not A Customer'\nPINSET_HOST=api.example.com\n") } catch {
            #expect(error.status == .usage && error.message.contains("PINSET_CUSTOMER on line 1 of /etc/pinset-acme/api.conf"), "\(error.message)")
        }
    }
}
