#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What `lstat` says about a file, compared to tell cheaply whether a file may have changed since it was read.
///
/// Any write, rename over, `chmod` or `chown` changes at least one field (`ctime` moves on every metadata
/// change), so equal metadata means the parsed contents can be reused. A symbolic link is reported as such and
/// never compared equal, so its target is always re-read through the normal checks.
public struct FileMetadata: Hashable, Sendable {
    public let device: UInt64
    public let inode: UInt64
    public let size: Int64
    public let mode: UInt32
    public let owner: UInt32
    public let modifiedNanoseconds: Int64
    public let changedNanoseconds: Int64
    public let isSymbolicLink: Bool

    /// The metadata of `path` itself (not following a final symbolic link), or `nil` with `errno` set.
    public static func of(_ path: String) -> FileMetadata? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        #if canImport(Darwin)
        let modified = Int64(info.st_mtimespec.tv_sec) * 1_000_000_000 + Int64(info.st_mtimespec.tv_nsec)
        let changed = Int64(info.st_ctimespec.tv_sec) * 1_000_000_000 + Int64(info.st_ctimespec.tv_nsec)
        #else
        let modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        let changed = Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
        #endif
        return FileMetadata(
            device: UInt64(truncatingIfNeeded: info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
            mode: UInt32(info.st_mode), owner: UInt32(info.st_uid),
            modifiedNanoseconds: modified, changedNanoseconds: changed,
            isSymbolicLink: (info.st_mode & S_IFMT) == S_IFLNK
        )
    }

    /// Whether a file read with metadata `self` can be taken to be unchanged now that it has `current`.
    public func isUnchanged(comparedTo current: FileMetadata) -> Bool {
        !isSymbolicLink && self == current
    }
}
