/// Formats the `Date` field as IMF-fixdate (RFC 9110 §5.6.7), e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
///
/// The conversion is pure integer arithmetic (no locale, no `DateFormatter`), and ``HTTPDateCache`` reuses the
/// bytes while the second does not change, so the cost per response is a comparison and a 29-byte copy.
public enum HTTPDate {
    /// The 29 ASCII bytes of the IMF-fixdate for `unixSeconds` (UTC).
    public static func imfFixdate(unixSeconds: Int64) -> [UInt8] {
        let days = unixSeconds >= 0 ? unixSeconds / 86_400 : (unixSeconds - 86_399) / 86_400
        let secondOfDay = Int(unixSeconds - days * 86_400)
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        let weekday = Int(((days % 7) + 11) % 7) // 1970-01-01 was a Thursday (index 4, Sunday = 0).
        var bytes: [UInt8] = []
        bytes.reserveCapacity(29)
        bytes.append(contentsOf: weekdayNames[weekday].utf8)
        bytes.append(contentsOf: ", ".utf8)
        appendTwoDigits(day, to: &bytes)
        bytes.append(UInt8(ascii: " "))
        bytes.append(contentsOf: monthNames[month - 1].utf8)
        bytes.append(UInt8(ascii: " "))
        let clampedYear = min(max(year, 0), 9999)
        appendTwoDigits(clampedYear / 100, to: &bytes)
        appendTwoDigits(clampedYear % 100, to: &bytes)
        bytes.append(UInt8(ascii: " "))
        appendTwoDigits(secondOfDay / 3600, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendTwoDigits(secondOfDay / 60 % 60, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendTwoDigits(secondOfDay % 60, to: &bytes)
        bytes.append(contentsOf: " GMT".utf8)
        return bytes
    }

    private static let weekdayNames = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    private static func appendTwoDigits(_ value: Int, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "0") + UInt8(value / 10))
        bytes.append(UInt8(ascii: "0") + UInt8(value % 10))
    }

    /// Proleptic Gregorian date for a day count since 1970-01-01 (H. Hinnant's `civil_from_days`).
    private static func civilDate(daysSinceEpoch: Int64) -> (year: Int, month: Int, day: Int) {
        let z = daysSinceEpoch + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
    }
}

/// The IMF-fixdate of the last second asked for, recomputed only when the second changes.
public struct HTTPDateCache: Sendable {
    private var second: Int64 = .min
    private var cached: [UInt8] = []

    public init() {}

    public mutating func bytes(unixSeconds: Int64) -> [UInt8] {
        if unixSeconds != second {
            second = unixSeconds
            cached = HTTPDate.imfFixdate(unixSeconds: unixSeconds)
        }
        return cached
    }
}
