import PinsetCore
import PinsetSigning
import PinsetStore

extension DataDirectory {
    /// Adds a demo customer with one host and two pins made from keys generated here, so a first request gets a
    /// signed bundle without any network access. The keys are thrown away: a demo pin must never match a real
    /// server.
    public func createDevelopmentDemo(customer: CustomerName, hostname: Hostname, actor: String) throws {
        var pins: [Pin] = []
        for number in 1...2 {
            let key = try SigningIdentity.generate(keyType: .p256, commonName: "Pinset demo key \(number)", validityDays: 365)
            pins.append(try PinMaterial.pin(
                for: key.certificate,
                source: PinSource(kind: .certificate, detail: "generated demo key"),
                label: "DEMO key \(number), generated locally; not a real server key"
            ))
        }
        let store = try PinStore.open(path: databasePath)
        try store.addCustomer(customer, actor: actor)
        try store.addHost(hostname, to: customer, actor: actor)
        _ = try store.addPins(pins, to: hostname, of: customer, actor: actor)
    }
}
