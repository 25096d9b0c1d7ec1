import Foundation
import PinsetCore

/// Pin-failure reports shaped as TrustKit sends them (`TSKPinFailureReport`'s JSON, all members), built per test
/// from generated certificates.
public enum TrustKitReportFixture {
    /// The members TrustKit 1.6+ writes, with `overrides` replacing or adding members (`NSNull()` writes null).
    public static func object(
        leafPEM: String, hostname: String = "api.example.com", vendorID: String = "7D9A5E4C-0000-4000-8000-000000000001",
        appVersion: String = "2.4.1", validationResult: Int = 1, overrides: [String: Any] = [:]
    ) -> [String: Any] {
        var object: [String: Any] = [
            "app-bundle-id": "com.example.app",
            "app-version": appVersion,
            "app-platform": "IOS",
            "app-platform-version": "17.4.0",
            "app-vendor-id": vendorID,
            "trustkit-version": "3.0.3",
            "date-time": "2026-11-23T14:05:09Z",
            "hostname": hostname,
            "port": 443,
            "noted-hostname": hostname,
            "include-subdomains": false,
            "enforce-pinning": true,
            "validated-certificate-chain": [leafPEM],
            "known-pins": ["pin-sha256=\"\(String(repeating: "A", count: 43))=\"", "pin-sha256=\"\(String(repeating: "B", count: 42))A=\""],
            "validation-result": validationResult,
            "known-pins-expiration-date": NSNull(),
        ]
        for (key, value) in overrides { object[key] = value }
        return object
    }

    public static func json(_ object: [String: Any]) -> [UInt8] {
        [UInt8]((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data())
    }

    public static func json(leafPEM: String, hostname: String = "api.example.com", vendorID: String = "7D9A5E4C-0000-4000-8000-000000000001",
                            appVersion: String = "2.4.1", overrides: [String: Any] = [:]) -> [UInt8] {
        json(object(leafPEM: leafPEM, hostname: hostname, vendorID: vendorID, appVersion: appVersion, overrides: overrides))
    }
}
