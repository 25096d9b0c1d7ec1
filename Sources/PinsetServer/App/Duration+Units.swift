extension Duration {
    /// Whole nanoseconds, for metrics and Dispatch intervals.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// Whole microseconds, for access logs.
    var microseconds: Int64 { nanoseconds / 1000 }

    /// Whole milliseconds, for logs and `/status`.
    var milliseconds: Int64 { nanoseconds / 1_000_000 }
}
