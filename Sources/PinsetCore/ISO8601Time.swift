import Foundation

/// ISO 8601 times as admins type them, read strictly. Foundation's parsers roll impossible fields over
/// (`2030-02-30` becomes 2 March, `25:61` the next day's 02:01), so a typo would silently store a date nobody
/// typed; here a field out of range is refused.
public enum ISO8601Time {
    /// `2027-03-01T12:00:00Z` or with an offset such as `+02:00`; with `dateOnly`, also `2027-03-01` (midnight
    /// UTC). `nil` for anything else, impossible dates and times included.
    public static func parse(_ text: String, dateOnly: Bool) -> Date? {
        let fields = Array(text.utf8)
        if fields.count == 10 {
            guard dateOnly else { return nil }
            return parse(text + "T00:00:00Z", dateOnly: false)
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        guard let date = formatter.date(from: text), let written = Fields(fields) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        guard let zone = TimeZone(secondsFromGMT: written.offsetSeconds) else { return nil }
        calendar.timeZone = zone
        let read = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        guard read.year == written.year, read.month == written.month, read.day == written.day,
              read.hour == written.hour, read.minute == written.minute, read.second == written.second
        else { return nil }
        return date
    }

    /// The numbers as written in `yyyy-MM-ddTHH:mm:ss` followed by `Z`, `±HH:mm` or `±HHmm`.
    private struct Fields {
        let year, month, day, hour, minute, second, offsetSeconds: Int

        init?(_ text: [UInt8]) {
            func number(_ range: Range<Int>) -> Int? { DecimalField.value(text, range) }
            guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
                  let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19), text.count > 19
            else { return nil }
            switch text[19] {
            case UInt8(ascii: "Z"), UInt8(ascii: "z"):
                guard text.count == 20 else { return nil }
                offsetSeconds = 0
            case UInt8(ascii: "+"), UInt8(ascii: "-"):
                let minutesStart = text.count == 25 ? 23 : 22
                guard text.count == 24 || text.count == 25, let hours = number(20..<22), let minutes = number(minutesStart..<minutesStart + 2) else { return nil }
                offsetSeconds = (text[19] == UInt8(ascii: "-") ? -1 : 1) * (hours * 3600 + minutes * 60)
            default:
                return nil
            }
            (self.year, self.month, self.day, self.hour, self.minute, self.second) = (year, month, day, hour, minute, second)
        }
    }
}

/// Fixed-width decimal fields of timestamps, read without Foundation's lenient parsers.
public enum DecimalField {
    /// The decimal number in `bytes[range]`, or nil when the range is out of bounds or holds a non-digit.
    public static func value(_ bytes: [UInt8], _ range: Range<Int>) -> Int? {
        guard range.lowerBound >= 0, range.upperBound <= bytes.count else { return nil }
        var value = 0
        for byte in bytes[range] {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }
}
