import Foundation

/// Timing helpers. Every measurement uses the monotonic clock.
enum Measure {
    static func seconds(_ duration: Duration) -> Double {
        let (s, atto) = duration.components
        return Double(s) + Double(atto) / 1e18
    }

    /// Runs `body` once and returns its wall-clock time in seconds.
    static func time(_ body: () throws -> Void) rethrows -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        try body()
        return seconds(clock.now - start)
    }

    static func time(_ body: () async throws -> Void) async rethrows -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        try await body()
        return seconds(clock.now - start)
    }

    /// Summary of samples (seconds): min, median, p99, max, mean.
    static func summary(_ samples: [Double]) -> [String: Double] {
        guard !samples.isEmpty else { return [:] }
        let sorted = samples.sorted()
        func quantile(_ q: Double) -> Double {
            let index = min(sorted.count - 1, max(0, Int((q * Double(sorted.count)).rounded(.up)) - 1))
            return sorted[index]
        }
        let middle = sorted.count / 2
        let median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        return [
            "min": sorted[0],
            "median": median,
            "p99": quantile(0.99),
            "max": sorted[sorted.count - 1],
            "mean": samples.reduce(0, +) / Double(samples.count),
        ]
    }

    /// The process's peak and current resident set size in KiB, from /proc/self/status (0 elsewhere).
    static func memoryKiB() -> (peak: Int, current: Int) {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return (0, 0) }
        var peak = 0, current = 0
        for line in status.split(separator: "\n") {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 2, let value = Int(fields[1]) else { continue }
            if fields[0] == "VmHWM:" { peak = value }
            if fields[0] == "VmRSS:" { current = value }
        }
        return (peak, current)
    }
}

/// Prints one JSON object on standard output: what `Benchmarks/suite.py` reads.
enum Report {
    static func emit(_ object: [String: Any]) throws {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }

    static func note(_ text: String) {
        FileHandle.standardError.write(Data("pinset-bench: \(text)\n".utf8))
    }
}
