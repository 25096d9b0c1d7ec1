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
                again against the trust certificates); nothing is fetched. Exits 33 when no pins are held, and 1 when the state directory was never set up by 'pinset client update'.
                """
        )

        @OptionGroup var state: ClientStateOptions

        @OptionGroup var log: ClientTransparencyOptions

        func run() async throws {
            let setup = try ClientSetup.resolve(state, transparency: log)
            let updater = PinsetUpdater(configuration: setup.configuration)
            let pins = try await ClientCommand.heldPins(updater, json: state.json)
            let floor = await updater.signersNotBefore
            if state.json {
                var summary = ClientCommand.summary(pins, floor: floor)
                summary.latestSignedAt = Output.date(await updater.latestSignedAt)
                summary.transparency = await ClientCommand.transparencySummary(updater)
                try Output.json(summary)
                return
            }
            Output.line("HELD: customer '\(pins.customer)', version \(pins.version)")
            ClientCommand.printSummary(pins, floor: floor)
            if setup.configuration.transparency != nil {
                ClientCommand.printTransparency(await ClientCommand.transparencySummary(updater))
            }
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
            try Output.json(NoPinsHeld(reason: reason))
        } else {
            Output.note("NO PINS: \(reason)")
        }
        throw ExitCode(ClientExitStatus.noPinsHeld)
    }
}

/// What `client show --json` prints when no pins are held.
private struct NoPinsHeld: Encodable {
    let held = false
    let reason: String
}
