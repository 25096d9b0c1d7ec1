import Foundation

/// The day after which a static configuration's pins stop being enforced (Android's `<pin-set expiration>`,
/// TrustKit's `TSKExpirationDate`), in the `yyyy-MM-dd` form both read.
///
/// Pins that expire fail open: after the date the app accepts any certificate the system trusts for those
/// hosts, as if they had never been pinned. That keeps an app that was never updated connecting after its keys
/// changed, at the price of the protection pinning gives, so it is written only when asked for.
public struct PinExpirationDate: Sendable, Equatable {
    public let text: String

    /// - Parameter today: the date must be later than this day (UTC); a date already past would switch pinning
    ///   off in the very release it ships in.
    public init(_ text: String, today: Date = Date()) throws {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        let digits = parts.count == 3 && parts.map(\.count) == [4, 2, 2] && parts.allSatisfy { $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        guard digits, let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
              let date = calendar.date(from: DateComponents(year: year, month: month, day: day)),
              calendar.dateComponents([.year, .month, .day], from: date) == DateComponents(year: year, month: month, day: day)
        else {
            throw ExportRefusal("--expiration '\(text.prefix(40))' is not a date of the form yyyy-MM-dd (e.g. 2027-06-30).")
        }
        guard date > calendar.startOfDay(for: today) else {
            throw ExportRefusal("--expiration \(text) is not in the future: the pins would not be enforced at all. Give a later date, or leave --expiration out.")
        }
        self.text = text
    }

    /// What the date means, for the operator to read before shipping it.
    public func warning(platform: String) -> String {
        "the pins expire on \(text): from then on \(platform) stops enforcing them (fail-open), and the app accepts any certificate the system trusts for these hosts until an update ships new pins. Without --expiration they are enforced until an update replaces them."
    }
}
