import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import PinsetCore

/// Where a server's access-log lines go: standard output (shared with the other log lines, which take the same
/// lock, so that no block of access-log lines splits another line) or a file opened for appending, reopened on
/// request (SIGHUP, after logrotate moved it).
///
/// Lines are not written one by one: every loop thread fills an ``AccessLogBuffer`` of its own and hands whole
/// blocks here, by size and by time, so that logging a request costs a few hundred bytes of copying on its loop
/// thread and one `write` per block, instead of a formatted dictionary and a locked write per request.
public final class AccessLog: Sendable {
    public enum Destination: Sendable, Equatable {
        case standardOutput
        /// Appended to; created with mode 0640 if absent.
        case file(String)
    }

    public let destination: Destination
    public let format: ServerConfiguration.LogFormat
    /// A loop's lines are written once this many bytes wait, or once the oldest has waited `flushInterval`.
    public let blockSize: Int
    public let flushInterval: Duration
    /// The open file's descriptor (standard output: 1); replaced by `reopen`. Written under this lock.
    private let descriptor: LockedValue<Int32>

    /// - Throws: `ConfigurationError` when the file cannot be opened for appending.
    public init(destination: Destination, format: ServerConfiguration.LogFormat, blockSize: Int = 32 * 1024, flushInterval: Duration = .seconds(1)) throws {
        self.destination = destination
        self.format = format
        self.blockSize = blockSize
        self.flushInterval = flushInterval
        switch destination {
        case .standardOutput: descriptor = LockedValue(STDOUT_FILENO)
        case .file(let path): descriptor = LockedValue(try Self.open(path))
        }
    }

    deinit {
        if case .file = destination { close(descriptor.withLock { $0 }) }
    }

    /// Opens the file again under its name, for logrotate's move-then-signal: lines written after this go to the new
    /// file, none is lost or written twice. Standard output is left as it is.
    ///
    /// - Throws: `ConfigurationError` when the file cannot be opened; the old descriptor is kept then.
    public func reopen() throws {
        guard case .file(let path) = destination else { return }
        let new = try Self.open(path)
        let old = descriptor.withLock { current -> Int32 in
            defer { current = new }
            return current
        }
        close(old)
    }

    /// A buffer for one loop thread.
    func makeBuffer() -> AccessLogBuffer {
        AccessLogBuffer(log: self)
    }

    /// Writes a block of whole lines.
    func write(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        if destination == .standardOutput {
            LineLogHandler.writeToStandardOutput(bytes)
            return
        }
        descriptor.withLock { fd in Self.writeAll(bytes, to: fd) }
    }

    /// Writes every byte, across short writes and interrupted calls. A failed write drops the rest of the block:
    /// the server must not stop serving because its log cannot be written.
    static func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32) {
        var offset = 0
        while offset < bytes.count {
            let written = systemWrite(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if written > 0 {
                offset += written
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                return
            }
        }
    }

    private static func open(_ path: String) throws -> Int32 {
        let fd = systemOpen(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o640)
        guard fd >= 0 else {
            throw ConfigurationError(message: "Cannot open the access log '\(path)' for appending: \(String(cString: strerror(errno))). Check that its directory exists and that this user may write there.")
        }
        return fd
    }
}

/// The access-log lines of one loop thread, waiting to be written as one block. Not thread-safe: its loop uses it
/// alone (requests append, the loop's tick flushes by time, the loop's stop flushes the rest).
final class AccessLogBuffer {
    private let log: AccessLog
    private var bytes: [UInt8] = []
    private var oldest: ContinuousClock.Instant?
    private let clock = AccessLogClock()

    init(log: AccessLog) {
        self.log = log
        bytes.reserveCapacity(log.blockSize + 4096)
    }

    /// Appends the entry's line; writes the block once it is full.
    func append(_ entry: AccessLogEntry) {
        if oldest == nil { oldest = .now }
        let time = clock.now()
        switch log.format {
        case .text: AccessLogLine.appendText(entry, time: time, to: &bytes)
        case .json: AccessLogLine.appendJSON(entry, time: time, to: &bytes)
        }
        if bytes.count >= log.blockSize { flush() }
    }

    /// Writes the block when its oldest line has waited the flush interval.
    func flushIfDue(now: ContinuousClock.Instant) {
        if let oldest, now - oldest >= log.flushInterval { flush() }
    }

    /// Writes whatever waits.
    func flush() {
        guard !bytes.isEmpty else { return }
        bytes.withUnsafeBytes { log.write($0) }
        bytes.removeAll(keepingCapacity: true)
        oldest = nil
    }
}

/// The time at the start of each line, as the other log lines write it (`2026-11-27T03:15:17.123Z` in text, the
/// same without the `Z` in JSON): the date and time formatted once a second, the milliseconds per line.
final class AccessLogClock {
    private var second: Int = -1
    private var prefix: [UInt8] = []

    /// `2026-11-27T03:15:17` and the milliseconds since that second.
    func now() -> (prefix: [UInt8], milliseconds: Int) {
        let now = Date().timeIntervalSince1970
        let whole = Int(now.rounded(.down))
        if whole != second {
            second = whole
            let text = Date(timeIntervalSince1970: TimeInterval(whole)).formatted(.iso8601.year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: false))
            prefix = Array(text.utf8.prefix(19))
        }
        return (prefix, min(999, Int(((now - TimeInterval(whole)) * 1000).rounded(.down))))
    }
}

// The C library's `write` and `open`, named apart from `AccessLog`'s methods of the same names.
private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    Glibc.write(fd, buffer, count)
    #else
    Darwin.write(fd, buffer, count)
    #endif
}

private func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
    #if canImport(Glibc)
    Glibc.open(path, flags, mode)
    #else
    Darwin.open(path, flags, mode)
    #endif
}
