import ArgumentParser
import PinsetLiveCheck

extension ConnectToMap {
    /// `--connect-to` values of commands that check many hosts, refused as a usage error naming the wrong one.
    static func parsing(options values: [String]) throws -> ConnectToMap {
        do {
            return try ConnectToMap.parse(commandLine: values)
        } catch {
            throw ValidationError(error.description)
        }
    }
}
