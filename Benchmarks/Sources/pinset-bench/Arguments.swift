import Foundation

/// `--name value` options of one subcommand; every option is required unless a default is given.
struct Arguments {
    private var values: [String: String] = [:]

    init(_ arguments: ArraySlice<String>) throws {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            guard argument.hasPrefix("--") else { throw BenchError("unexpected argument '\(argument)'") }
            guard let value = iterator.next() else { throw BenchError("\(argument) needs a value") }
            values[String(argument.dropFirst(2))] = value
        }
    }

    func string(_ name: String, default fallback: String? = nil) throws -> String {
        if let value = values[name] ?? fallback { return value }
        throw BenchError("--\(name) is required")
    }

    func int(_ name: String, default fallback: Int? = nil) throws -> Int {
        guard let text = values[name] else {
            if let fallback { return fallback }
            throw BenchError("--\(name) is required")
        }
        guard let value = Int(text), value >= 0 else { throw BenchError("--\(name) must be a whole number ≥ 0, not '\(text)'") }
        return value
    }

    /// A comma-separated list of whole numbers, e.g. `1000,10000`.
    func ints(_ name: String) throws -> [Int] {
        try string(name).split(separator: ",").map {
            guard let value = Int($0), value > 0 else { throw BenchError("--\(name): '\($0)' is not a positive whole number") }
            return value
        }
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }
}
