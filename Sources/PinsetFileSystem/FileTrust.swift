#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Ownership and mode checks on the paths Pinset trusts, as ssh and sudo make them: a file or directory that
/// another local user owns or can write could be swapped (a database with their pins, signed with the real
/// key), so it is refused with the command that fixes it. Only the running user and root may own them.
public enum FileTrust {
    /// Why a path is not trusted, and how to fix it (a sentence naming the command).
    public struct Refusal: Error, Hashable, Sendable, CustomStringConvertible {
        public let path: String
        public let problem: String
        public let fix: String

        public init(path: String, problem: String, fix: String) {
            self.path = path
            self.problem = problem
            self.fix = fix
        }

        public var description: String {
            "Refusing to use '\(path)': \(problem). \(fix)"
        }
    }

    public enum Kind: Sendable {
        /// A directory whose content Pinset trusts.
        case directory
        /// A directory that only holds a trusted file: the sticky bit (as on /tmp) keeps other users from
        /// replacing the entries they do not own.
        case containingDirectory
        case file
    }

    /// Throws unless `path` (symlinks followed) exists, is a directory or regular file as `kind` says, is owned
    /// by the running user or root, and is not writable by group or others.
    public static func check(_ path: String, as kind: Kind) throws {
        var info = stat()
        guard stat(path, &info) == 0 else { throw FileSystemError(path: path, operation: "read the owner and permissions of", errno: errno) }
        try check(info, path: path, as: kind)
    }

    /// `check(_:as:)` for a path that may not exist yet: a missing path passes.
    public static func checkIfPresent(_ path: String, as kind: Kind) throws {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT { return }
            throw FileSystemError(path: path, operation: "read the owner and permissions of", errno: errno)
        }
        try check(info, path: path, as: kind)
    }

    /// The checks on status already obtained (from `fstat` of an open descriptor, so nothing can swap the file
    /// between the check and the read).
    public static func check(_ info: stat, path: String, as kind: Kind) throws(Refusal) {
        let type = info.st_mode & S_IFMT
        switch kind {
        case .directory, .containingDirectory:
            guard type == S_IFDIR else { throw Refusal(path: path, problem: "it is not a directory", fix: "Give the path of a directory.") }
        case .file:
            guard type == S_IFREG else { throw Refusal(path: path, problem: "it is not a regular file", fix: "Give the path of a regular file.") }
        }
        if !isTrustedOwner(info.st_uid) {
            throw Refusal(
                path: path,
                problem: "it is owned by \(userDescription(info.st_uid)), not by \(geteuid() == 0 ? "root" : userDescription(geteuid()) + " or root"), the user this process runs as",
                fix: "Run 'chown \(userName(geteuid()) ?? String(geteuid())) \(shellQuoted(path))' (as root), or run the program as its owner."
            )
        }
        let writableByOthers = info.st_mode & 0o022 != 0
        let sticky = info.st_mode & S_ISVTX != 0
        if writableByOthers && !(kind == .containingDirectory && sticky) {
            let octal = String(info.st_mode & 0o7777, radix: 8)
            let fix = switch kind {
            case .file: "Run 'chmod go-w \(shellQuoted(path))'."
            case .directory where sticky: "Keep it in a directory of its own that only you can write: 'mkdir -m 700 DIR'."
            case .directory, .containingDirectory: "Run 'chmod 700 \(shellQuoted(path))'."
            }
            throw Refusal(path: path, problem: "group or others can write it (mode \(octal))", fix: fix)
        }
    }

    static func isTrustedOwner(_ uid: uid_t) -> Bool {
        uid == geteuid() || uid == 0
    }

    /// "owned by USER, mode 0600", or what stopped `stat` from telling: for messages about a file that could not
    /// be read, so that whoever reads them sees at once whose it is.
    public static func describeOwnerAndMode(of path: String) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else { return "its owner and mode cannot be read either" }
        return "owned by \(userDescription(info.st_uid)), mode \(String(info.st_mode & 0o7777, radix: 8))"
    }

    static func userName(_ uid: uid_t) -> String? {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return nil }
        return String(cString: name)
    }

    static func userDescription(_ uid: uid_t) -> String {
        userName(uid).map { "'\($0)' (uid \(uid))" } ?? "uid \(uid)"
    }

    /// A path as a shell word, so the printed fix can be pasted even when the path has spaces or quotes.
    public static func shellQuoted(_ path: String) -> String {
        let safe = path.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || $0.properties.numericType != nil || "/._-+,:@%=".unicodeScalars.contains($0)) }
        if safe && !path.isEmpty { return path }
        return "'" + path.replacing("'", with: #"'\''"#) + "'"
    }
}
