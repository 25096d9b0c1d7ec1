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

    /// Parses an HTTP-date (RFC 9110 §5.6.7) into Unix seconds: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`)
    /// and the two obsolete forms a recipient must also accept, RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and
    /// asctime (`Sun Nov  6 08:49:37 1994`). Anything else, including trailing bytes or an impossible date, is
    /// nil. Reads the bytes in place and allocates nothing, so a conditional request stays as cheap as a plain one.
    public static func unixSeconds(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        var reader = DateReader(bytes: bytes)
        let date: (year: Int, month: Int, day: Int, second: Int)?
        if bytes.count == 29 {
            date = reader.imfFixdate()
        } else if bytes.count == 24 {
            date = reader.asctime()
        } else {
            date = reader.rfc850()
        }
        guard let date, reader.atEnd, (1...daysInMonth(date.month, year: date.year)).contains(date.day) else { return nil }
        return daysSinceEpoch(year: date.year, month: date.month, day: date.day) * 86_400 + Int64(date.second)
    }

    private struct DateReader {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        var atEnd: Bool { index == bytes.count }

        mutating func literal(_ text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard bytes.count - index >= count else { return false }
            let matches = text.withUTF8Buffer { expected in (0..<count).allSatisfy { bytes[index + $0] == expected[$0] } }
            if matches { index += count }
            return matches
        }

        mutating func digits(_ count: Int) -> Int? {
            guard bytes.count - index >= count else { return nil }
            var value = 0
            for offset in 0..<count {
                guard HTTPSyntax.isDigit(bytes[index + offset]) else { return nil }
                value = value * 10 + Int(bytes[index + offset] - UInt8(ascii: "0"))
            }
            index += count
            return value
        }

        /// One of `names`, case-sensitively (RFC 9110 §5.6.7); its position in the list.
        mutating func name(_ names: [StaticString]) -> Int? {
            for (position, name) in names.enumerated() where literal(name) { return position }
            return nil
        }

        /// `hour ":" minute ":" second`, as seconds of the day. 60 seconds is a leap second.
        mutating func timeOfDay() -> Int? {
            guard let hour = digits(2), literal(":"), let minute = digits(2), literal(":"), let second = digits(2),
                  hour <= 23, minute <= 59, second <= 60
            else { return nil }
            return hour * 3600 + minute * 60 + second
        }

        mutating func imfFixdate() -> (year: Int, month: Int, day: Int, second: Int)? {
            guard name(HTTPDate.shortDays) != nil, literal(", "), let day = digits(2), literal(" "),
                  let month = name(HTTPDate.months), literal(" "), let year = digits(4), literal(" "),
                  let second = timeOfDay(), literal(" GMT")
            else { return nil }
            return (year, month + 1, day, second)
        }

        mutating func rfc850() -> (year: Int, month: Int, day: Int, second: Int)? {
            guard name(HTTPDate.longDays) != nil, literal(", "), let day = digits(2), literal("-"),
                  let month = name(HTTPDate.months), literal("-"), let shortYear = digits(2), literal(" "),
                  let second = timeOfDay(), literal(" GMT")
            else { return nil }
            // RFC 9110 §5.6.7 reads a two-digit year relative to now; this form has not been sent for decades,
            // so a fixed pivot does the same for every date a client could still hold.
            return (shortYear < 70 ? 2000 + shortYear : 1900 + shortYear, month + 1, day, second)
        }

        mutating func asctime() -> (year: Int, month: Int, day: Int, second: Int)? {
            guard name(HTTPDate.shortDays) != nil, literal(" "), let month = name(HTTPDate.months), literal(" ") else { return nil }
            let day: Int
            if literal(" "), let digit = digits(1) { day = digit } else if let twoDigits = digits(2) { day = twoDigits } else { return nil }
            guard literal(" "), let second = timeOfDay(), literal(" "), let year = digits(4) else { return nil }
            return (year, month + 1, day, second)
        }
    }

    private static let shortDays: [StaticString] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let longDays: [StaticString] = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    private static let months: [StaticString] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    private static func daysInMonth(_ month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int64 {
        let shiftedYear = Int64(month <= 2 ? year - 1 : year)
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = Int64((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1)
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
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
