import Foundation

/// When a pin is published: the signing pass that runs at or after `notBefore` and before `notAfter` lists it in
/// the bundle, every other pass leaves it out. Either end may be open, never both.
///
/// Not the certificate's validity (`Pin.notAfter`): an operator sets a window to retire an old key, or bring in a new
/// one, on a date known in advance. The server applies it at signing time, so clients see the change at the right
/// time whatever their own clock says, and legacy clients see it too (the pin is simply listed or not).
public struct PinWindow: Hashable, Sendable, CustomStringConvertible {
    /// The first second the pin is published; nil: from now on.
    public let notBefore: Date?
    /// The first second the pin is no longer published; nil: until removed.
    public let notAfter: Date?

    /// Whole seconds only, as stored. Refuses a window with neither end or whose start is not before its end.
    public init(notBefore: Date?, notAfter: Date?) throws(InputError) {
        let start = notBefore.map(Self.wholeSeconds)
        let end = notAfter.map(Self.wholeSeconds)
        if start == nil && end == nil {
            throw InputError("A publish window needs --not-before, --not-after or both. To publish a pin without a window, clear it with 'pinset pin window … --clear'.")
        }
        if let start, let end, start >= end {
            throw InputError("The publish window starts (\(Self.format(start))) at or after it ends (\(Self.format(end))): --not-before must be earlier than --not-after.")
        }
        self.notBefore = start
        self.notAfter = end
    }

    /// Whether a pass at `time` publishes the pin.
    public func contains(_ time: Date) -> Bool {
        if let notBefore, time < notBefore { return false }
        if let notAfter, time >= notAfter { return false }
        return true
    }

    /// The instants at which a pass starts or stops publishing the pin.
    public var boundaries: [Date] { [notBefore, notAfter].compactMap { $0 } }

    public var description: String {
        "\(notBefore.map(Self.format) ?? "now") .. \(notAfter.map(Self.format) ?? "removal")"
    }

    /// Reads an ISO 8601 time the way `--not-before` and `--not-after` take it: `2027-03-01` (midnight UTC),
    /// `2027-03-01T12:00:00Z`, or with an offset such as `+02:00`. `what` names the option in the error.
    public static func parse(_ text: String, what: String) throws(InputError) -> Date {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let date = ISO8601Time.parse(trimmed, dateOnly: true) { return date }
        throw InputError("\(what) '\(TerminalText.escape(String(text.prefix(40))))' is not an ISO 8601 time, or names a day or time that does not exist. Give a date such as 2027-03-01 (midnight UTC) or a time such as 2027-03-01T12:00:00Z.")
    }

    /// The ISO 8601 UTC form used in lists, audit entries and the API.
    public static func format(_ date: Date) -> String { date.formatted(.iso8601) }

    private static func wholeSeconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
    }
}

extension Pin {
    /// Whether a pass at `time` publishes this pin: always, without a window.
    public func isPublished(at time: Date) -> Bool { window?.contains(time) ?? true }
}

/// What a host's pins publish over time: the pins a pass at a given time lists, and the times that set changes.
public struct PinSchedule: Sendable {
    public let pins: [Pin]

    public init(_ pins: [Pin]) { self.pins = pins }

    public func published(at time: Date) -> [Pin] { pins.filter { $0.isPublished(at: time) } }

    /// The window boundaries after `time`, earliest first.
    public func changes(after time: Date) -> [Date] {
        Array(Set(pins.flatMap { $0.window?.boundaries ?? [] }.filter { $0 > time })).sorted()
    }

    /// The next boundary after `time`, if any: when the published set changes next.
    public func nextChange(after time: Date) -> Date? { changes(after: time).first }
}
