import Foundation

/// Decides where `PinStore.backup` may write, before anything is written.
///
/// The destination is resolved the way the kernel will resolve it: the parent directory with `realpath(3)`
/// (symbolic links and `..`), and the final name too when it is a symbolic link, because the backup is
/// renamed onto the resolved file. Comparing resolved paths is what stops `ln -s data/signing-key.pem b.sqlite`
/// or `elsewhere/../data/pinset.sqlite-wal` from reaching the data directory.
enum BackupDestination {
    static func resolve(_ destination: String, database: String?, protectedDirectories: [String], replacingExisting: Bool) throws -> URL {
        let given = URL(fileURLWithPath: destination)
        let name = given.lastPathComponent
        guard !destination.hasSuffix("/"), !name.isEmpty, name != ".", name != ".." else {
            throw StoreError(.invalidInput, "The backup destination \(destination) names a directory. Give a file path, e.g. /var/backups/pinset/pinset-backup.sqlite.")
        }
        let parent = given.deletingLastPathComponent().path
        guard let resolvedParent = realPath(parent) else {
            throw StoreError(.invalidInput, "The directory \(parent) of the backup destination does not exist. Create it first, or choose another path.")
        }
        var target = (resolvedParent == "/" ? "" : resolvedParent) + "/" + name
        var info = stat()
        let exists = lstat(target, &info) == 0
        if exists && info.st_mode & S_IFMT == S_IFLNK {
            guard let linked = realPath(target) else {
                throw StoreError(.invalidInput, "The backup destination \(destination) is a symbolic link to a missing file. Give the real path of the backup file.")
            }
            target = linked
        }

        let databaseDirectory = database.map { URL(fileURLWithPath: $0).deletingLastPathComponent().path }
        for directory in (databaseDirectory.map { [$0] } ?? []) + protectedDirectories {
            let resolved = realPath(directory) ?? URL(fileURLWithPath: directory).standardizedFileURL.path
            let targetDirectory = URL(fileURLWithPath: target).deletingLastPathComponent().path
            guard resolved == "/" || target == resolved || target.hasPrefix(resolved + "/") || isSameOrInside(targetDirectory, resolved) else { continue }
            throw StoreError(.invalidInput, "The backup destination \(destination) resolves to \(target), inside \(directory), which holds this deployment's database or keys: a backup there could replace the database, its -wal file or a signing key. Nothing was written. Write backups outside the data directory and the key directories, e.g. /var/backups/pinset/pinset-backup.sqlite.")
        }

        if exists {
            guard replacingExisting else {
                throw StoreError(.invalidInput, "The backup destination \(destination) already exists. Nothing was written. Give a new file name (for example with the date), or pass --overwrite to replace it.")
            }
            var targetInfo = stat()
            guard stat(target, &targetInfo) == 0, targetInfo.st_mode & S_IFMT == S_IFREG else {
                throw StoreError(.invalidInput, "The backup destination \(destination) exists and is not a regular file. Give the path of a file.")
            }
            if let kind = BackupReplacement.describeUnlessBackup(target) {
                let named = target == given.standardizedFileURL.path ? destination : "\(destination) (\(target))"
                throw StoreError(.invalidInput, "The backup destination \(named) is \(kind), not a Pinset backup. Nothing was written. --overwrite replaces only an older backup written by 'pinset store backup'; give a new file name for this backup.")
            }
        }
        return URL(fileURLWithPath: target)
    }

    /// Whether the directory `path` is `ancestor` or lies inside it, told by device and inode rather than by spelling:
    /// on a case-insensitive file system (a Mac's, by default) `…/Data` and `…/data` are one directory.
    static func isSameOrInside(_ path: String, _ ancestor: String) -> Bool {
        var ancestorInfo = stat()
        guard stat(ancestor, &ancestorInfo) == 0 else { return false }
        var current = path
        // Bounded by the depth of the path: each step removes one component.
        for _ in 0...path.count {
            var info = stat()
            if stat(current, &info) == 0 && info.st_dev == ancestorInfo.st_dev && info.st_ino == ancestorInfo.st_ino { return true }
            let parent = URL(fileURLWithPath: current).deletingLastPathComponent().path
            if parent == current || current == "/" { return false }
            current = parent
        }
        return false
    }

    /// The canonical absolute path of an existing file or directory, or `nil` when it does not exist.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
