import Foundation
import PinsetCore

/// The text form of the timestamps the program writes: UTC `YYYY-MM-DD HH:MM:SS.SSS`.
///
/// It sorts chronologically as text, works with SQLite's date functions, and is what every SQLite database
/// written by earlier releases holds, so both backends store it as it is.
enum StoredDate {
    static func format(_ date: Date) -> String {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded(.down)
        var seconds = time_t((milliseconds / 1000).rounded(.down))
        let fraction = Int(milliseconds - Double(seconds) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d-%02d-%02d %02d:%02d:%02d.%03d",
            Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
            Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), fraction
        )
    }

    /// Reads `YYYY-MM-DD HH:MM[:SS[.fraction]]` (a `T` may separate date and time) as UTC.
    static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? { DecimalField.value(bytes, range) }
        guard bytes.count >= 16, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              bytes[10] == UInt8(ascii: " ") || bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"),
              let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16)
        else { return nil }
        var second = 0
        var fraction = 0.0
        if bytes.count > 16 {
            guard bytes.count >= 19, bytes[16] == UInt8(ascii: ":"), let parsed = number(17..<19) else { return nil }
            second = parsed
            if bytes.count > 19 {
                guard bytes[19] == UInt8(ascii: "."), bytes.count > 20, let digits = number(20..<bytes.count) else { return nil }
                fraction = Double(digits) / pow(10, Double(bytes.count - 20))
            }
        }
        guard (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        return Date(timeIntervalSince1970: TimeInterval(timegm(&parts)) + fraction)
    }
}
