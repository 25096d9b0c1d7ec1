import ArgumentParser
import Foundation
import PinsetClient
import PinsetCore

extension ClientCommand {
    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the pins a client holds: version, signer, revocation floor, expiry, hosts.",
            discussion: """
                Loads the state directory as an app does at start (the stored bundle's signature is verified \
                again against the trust certificates); nothing is fetched. Exits 33 when no pins are held.
                """
        )

        @OptionGroup var state: ClientStateOptions

        func run() async throws {
            let setup = try ClientSetup.resolve(state)
            let updater = PinsetUpdater(configuration: setup.configuration)
            let pins = try await ClientCommand.heldPins(updater, json: state.json)
            let floor = await updater.signersNotBefore
            if state.json {
                var object = ClientCommand.summary(pins, floor: floor)
                object["latestSignedAt"] = Output.date(await updater.latestSignedAt)
                try Output.json(object)
                return
            }
            Output.line("HELD: customer '\(pins.customer)', version \(pins.version)")
            ClientCommand.printSummary(pins, floor: floor)
        }
    }

    /// The pins the state directory holds, or exit 33 saying why there are none.
    static func heldPins(_ updater: PinsetUpdater, json: Bool) async throws -> VerifiedPinSet {
        let reason: String
        switch await updater.loadStoredPins() {
        case .loaded(let pins): return pins
        case .missing: reason = "no pins are held yet: run 'pinset client update' first"
        case .rejected(let error): reason = "the stored state was refused (\(error.code)): \(error.reason); the next accepted bundle replaces it"
        }
        if json {
            try Output.json(["held": false, "reason": reason])
        } else {
            Output.note("NO PINS: \(reason)")
        }
        throw ExitCode(ClientExitStatus.noPinsHeld)
    }
}
