/// Writes an XML property list (Apple's PLIST 1.0 DTD) line by line, indented with tabs as Xcode writes
/// Info.plist files, so that the output can be pasted into one.
struct PropertyListWriter {
    private(set) var lines: [String] = [
        #"<?xml version="1.0" encoding="UTF-8"?>"#,
        #"<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">"#,
    ]
    private var depth = 0

    mutating func comment(_ text: String) { line(ExportText.xmlComment(text)) }

    mutating func open(_ element: String) {
        line("<\(element)>")
        depth += 1
    }

    mutating func close(_ element: String) {
        depth -= 1
        line("</\(element)>")
    }

    mutating func key(_ name: String) { line("<key>\(ExportText.xmlEscaped(name))</key>") }
    mutating func string(_ value: String) { line("<string>\(ExportText.xmlEscaped(value))</string>") }
    mutating func bool(_ value: Bool) { line(value ? "<true/>" : "<false/>") }

    var text: String { lines.joined(separator: "\n") + "\n" }

    private mutating func line(_ text: String) {
        // The plist root is not indented in Xcode's files; everything inside it is.
        lines.append(String(repeating: "\t", count: max(0, depth - 1)) + text)
    }
}
