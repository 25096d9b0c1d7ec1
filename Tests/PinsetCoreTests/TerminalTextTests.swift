import PinsetCore
import Testing

struct TerminalTextTests {
    @Test(arguments: [
        ("plain label", "plain label"),
        ("Let's Encrypt R3 – ü", "Let's Encrypt R3 – ü"),
        ("a\nb", #"a\nb"#),
        ("a\r\tb", #"a\r\tb"#),
        ("\u{1B}[31mred", #"\x1b[31mred"#),
        ("bell\u{07}del\u{7F}", #"bell\x07del\x7f"#),
        ("c1\u{9B}2J", #"c1\x9b2J"#),
        ("abc\u{202E}fed", #"abc\u{202e}fed"#),
        ("line\u{2028}sep", #"line\u{2028}sep"#),
        (#"back\slash"#, #"back\\slash"#),
    ])
    func escapes(input: String, expected: String) {
        #expect(TerminalText.escape(input) == expected)
    }

    /// Escaped output never contains a character that acts on a terminal.
    @Test func nothingActiveSurvives() {
        let every = String(String.UnicodeScalarView((0...0x3000).compactMap(Unicode.Scalar.init)))
        #expect(!TerminalText.escape(every).unicodeScalars.contains(where: TerminalText.needsEscaping))
    }
}
