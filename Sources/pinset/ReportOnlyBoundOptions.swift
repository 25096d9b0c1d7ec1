import ArgumentParser
import PinsetCore
import PinsetServer

/// The server's bound on report-only windows, for commands that set one on this host's database (through a server,
/// the server applies its own).
struct ReportOnlyBoundOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The server's configuration file, whose reportOnlyMaximumHours bounds a report-only window this sets (default: 72 hours, the bound Pinset clients enforce).", valueName: "file"))
    var config: String?

    /// The bound in seconds: the configuration's, or the clients' own.
    func maximumSeconds() throws -> Int64 {
        let hours = try config.map { try ServerConfiguration.load(path: $0).reportOnlyMaximumHours } ?? Int(BundleBounds.maximumReportOnlySeconds / 3600)
        return Int64(hours) * 3600
    }

    var given: (name: String, given: Bool) { ("--config (the server applies its own)", config != nil) }
}
