import Foundation
import PinsetCore
import Testing

/// Times admins type for pin windows, report-only ends and revocation floors: a typo must be refused, never
/// rolled over into a date nobody typed.
@Suite struct ISO8601TimeTests {
    @Test func existingTimesAreReadInTheirZone() throws {
        #expect(ISO8601Time.parse("2027-03-01T12:00:00Z", dateOnly: false) == Date(timeIntervalSince1970: 1_803_902_400))
        #expect(ISO8601Time.parse("2027-03-01T14:00:00+02:00", dateOnly: false) == Date(timeIntervalSince1970: 1_803_902_400))
        #expect(ISO8601Time.parse("2027-03-01T07:00:00-0500", dateOnly: false) == Date(timeIntervalSince1970: 1_803_902_400))
        #expect(ISO8601Time.parse("2028-02-29T00:00:00Z", dateOnly: false) != nil, "a leap day exists in 2028")
        #expect(ISO8601Time.parse("2027-03-01", dateOnly: true) == Date(timeIntervalSince1970: 1_803_859_200))
    }

    @Test func impossibleDaysAndTimesAreRefusedNotRolledOver() {
        for text in [
            "2030-02-30", "2027-02-29", "2027-04-31", "2027-13-01", "2027-00-10", "2027-01-00",
            "2027-04-31T25:61:00Z", "2027-03-01T24:00:00Z", "2027-03-01T12:60:00Z", "2027-03-01T12:00:60Z",
            "2027-03-01T12:00:00+24:00", "2027-03-01T12:00:00+02:60",
        ] {
            #expect(ISO8601Time.parse(text, dateOnly: true) == nil, "\(text)")
        }
    }

    @Test func otherFormsAreRefused() {
        #expect(ISO8601Time.parse("2027-03-01", dateOnly: false) == nil, "a date alone where a time with a zone is asked for")
        for text in ["", "2027-03-01T12:00:00", "2027-3-1", "20270301", "2027-03-01 12:00:00Z", "2027-03-01T12:00Z", "tomorrow", "2027-03-01T12:00:00Z "] {
            #expect(ISO8601Time.parse(text, dateOnly: true) == nil, "\(text)")
        }
    }

    @Test func aPinWindowRefusesAnImpossibleDateAndSaysSo() {
        #expect(throws: InputError.self) { try PinWindow.parse("2030-02-30", what: "--not-after") }
        let error = #expect(throws: InputError.self) { try PinWindow.parse("2027-04-31T25:61:00Z", what: "--not-before") }
        #expect(error?.message.contains("--not-before") == true && error?.message.contains("does not exist") == true)
    }
}
