#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An I/O failure, with the path and the system's reason.
public struct FileSystemError: Error, Hashable, Sendable, CustomStringConvertible {
    public let path: String
    public let operation: String
    public let errno: Int32

    public init(path: String, operation: String, errno: Int32) {
        self.path = path
        self.operation = operation
        self.errno = errno
    }

    public var description: String {
        "Could not \(operation) '\(path)': \(String(cString: strerror(errno)))."
    }
}

/// Whole-file writes that are atomic and durable: readers see the old file or the new one, never a mix, and
/// a crash at any point leaves one of the two on disk.
///
/// The bytes go to a temporary file in the same directory (created exclusively, with the final mode from the
/// start, so a private key is never briefly readable), which is fsynced, renamed over the target, and the
/// directory is fsynced so the rename itself survives a power loss.
public enum AtomicFile {
    public static func write(_ bytes: some Collection<UInt8>, to path: String, mode: mode_t = 0o644) throws(FileSystemError) {
        let data = Array(bytes)
        do {
            try write(to: path, mode: mode) { append in
                try data.withUnsafeBytes { try append($0) }
            }
        } catch let error as FileSystemError {
            throw error
        } catch {
            // `contents` above throws only what `append` throws.
            throw FileSystemError(path: path, operation: "write", errno: EIO)
        }
    }

    /// Writes what `contents` appends, in pieces, with the same guarantees as `write(_:to:mode:)`: for a file
    /// too large to build in memory first. If `contents` throws, nothing replaces the file and its error is
    /// rethrown.
    public static func write(
        to path: String, mode: mode_t = 0o644, contents: (_ append: (UnsafeRawBufferPointer) throws(FileSystemError) -> Void) throws -> Void
    ) throws {
        let directory = parentDirectory(of: path)
        let name = path.split(separator: "/").last.map(String.init) ?? path
        var temporary = ""
        var fd: Int32 = -1
        for attempt in 0..<100 {
            // Hidden, and named after the writer's pid so that leftovers of a killed writer can be recognised.
            temporary = "\(directory)/.\(name)\(temporaryMarker)\(getpid())-\(attempt)-\(UInt32.random(in: 0...UInt32.max))"
            fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
            if fd >= 0 || errno != EEXIST { break }
        }
        guard fd >= 0 else { throw FileSystemError(path: temporary, operation: "create", errno: errno) }
        var committed = false
        defer {
            if !committed { unlink(temporary) }
        }
        do {
            defer { close(fd) }
            // The umask may have narrowed the mode; a shared file should still get exactly what was asked.
            guard fchmod(fd, mode) == 0 else { throw FileSystemError(path: temporary, operation: "set the mode of", errno: errno) }
            let destination = temporary
            try contents { (buffer: UnsafeRawBufferPointer) throws(FileSystemError) in
                var offset = 0
                while offset < buffer.count {
                    let written = posixWrite(fd, buffer.baseAddress! + offset, buffer.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        throw FileSystemError(path: destination, operation: "write", errno: errno)
                    }
                    offset += written
                }
            }
            guard syncToStorage(fd) == 0 else { throw FileSystemError(path: temporary, operation: "fsync", errno: errno) }
        }
        guard rename(temporary, path) == 0 else { throw FileSystemError(path: path, operation: "rename a file onto", errno: errno) }
        committed = true
        syncDirectory(directory)
    }

    static let temporaryMarker = ".tmp-"

    /// Removes temporary files in `directory` left by writers that were killed before renaming them.
    /// A file is removed only if the process that created it is gone, so concurrent writers are safe.
    @discardableResult
    public static func removeAbandonedTemporaryFiles(in directory: String) -> Int {
        guard let handle = opendir(directory) else { return 0 }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            names.append(name)
        }
        closedir(handle)
        var removed = 0
        for name in names where name.hasPrefix(".") {
            guard let marker = name.ranges(of: temporaryMarker).last else { continue }
            let digits = name[marker.upperBound...].prefix { $0.isNumber }
            guard let pid = Int32(digits), pid > 0 else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH, unlink("\(directory)/\(name)") == 0 {
                removed += 1
            }
        }
        return removed
    }

    /// Reads a whole file.
    public static func read(_ path: String, limit: Int = 64 * 1024 * 1024) throws(FileSystemError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw FileSystemError(path: path, operation: "open", errno: errno) }
        defer { close(fd) }
        return try readAll(from: fd, path: path, limit: limit)
    }

    /// Reads an open descriptor to its end; `path` names it in errors.
    public static func readAll(from fd: Int32, path: String, limit: Int) throws(FileSystemError) -> [UInt8] {
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { posixRead(fd, $0.baseAddress!, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw FileSystemError(path: path, operation: "read", errno: errno)
            }
            if n == 0 { break }
            result.append(contentsOf: chunk[0..<n])
            if result.count > limit { throw FileSystemError(path: path, operation: "read (the file is too large)", errno: EFBIG) }
        }
        return result
    }

    public static func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    /// Creates `path` as an empty file with `mode` unless it exists, which is left as it is. For files another
    /// library opens and would create with its own mode (SQLite: 0644 minus the umask): the file is then never
    /// readable by more than `mode` allows, not even for a moment.
    public static func createEmptyIfMissing(_ path: String, mode: mode_t) throws(FileSystemError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        if descriptor >= 0 {
            close(descriptor)
            return
        }
        guard errno == EEXIST else { throw FileSystemError(path: path, operation: "create", errno: errno) }
    }

    /// Creates `path` and its parents with `mode` where missing.
    public static func createDirectory(_ path: String, mode: mode_t = 0o755) throws(FileSystemError) {
        var current = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            current += "/" + component
            if mkdir(current, mode) != 0 && errno != EEXIST {
                throw FileSystemError(path: current, operation: "create the directory", errno: errno)
            }
        }
    }

    /// `fsync`, and on Darwin `F_FULLFSYNC` first: there `fsync` leaves the data in the drive's cache, where a power
    /// loss can still take it (fsync(2) on macOS).
    @discardableResult
    public static func syncToStorage(_ fd: Int32) -> Int32 {
        #if canImport(Darwin)
        if fcntl(fd, F_FULLFSYNC) == 0 { return 0 }
        #endif
        return fsync(fd)
    }

    public static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    public static func syncDirectory(_ directory: String) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        syncToStorage(fd)
        close(fd)
    }
}

// `write` and `read` are shadowed inside `AtomicFile` by its own members; these name the system calls.
private func posixWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    Glibc.write(fd, buffer, count)
    #elseif canImport(Musl)
    Musl.write(fd, buffer, count)
    #else
    Darwin.write(fd, buffer, count)
    #endif
}

private func posixRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    Glibc.read(fd, buffer, count)
    #elseif canImport(Musl)
    Musl.read(fd, buffer, count)
    #else
    Darwin.read(fd, buffer, count)
    #endif
}
