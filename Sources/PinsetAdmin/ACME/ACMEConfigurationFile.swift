#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import PinsetCore
import PinsetFileSystem

extension ACMEConfiguration {
    /// The configuration of this run: the file given (`--config`), else `$PINSET_ACME_CONFIG`, else, in a hook that
    /// lego runs without either, `/etc/pinset-acme/$LEGO_CERT_DOMAIN.conf`; without any, the environment alone.
    public static func load(path given: String?, environment: [String: String], configurationDirectory: String = "/etc/pinset-acme") throws(ACMEFailure) -> ACMEConfiguration {
        var path = given
        if path == nil, let named = environment["PINSET_ACME_CONFIG"], !named.isEmpty {
            path = named
        }
        if path == nil, environment["PINSET_HOST", default: ""].isEmpty, let domain = environment["LEGO_CERT_DOMAIN"], !domain.isEmpty {
            guard !domain.contains("/"), !domain.hasPrefix(".") else {
                throw ACMEFailure(.error, "lego passed an unexpected domain '\(TerminalText.escape(domain))'; give the hook --config FILE.")
            }
            path = "\(configurationDirectory)/\(domain).conf"
            guard AtomicFile.exists(path!) else {
                throw ACMEFailure(.usage, "no configuration for \(domain): create \(path!) or give the hook --config FILE.")
            }
        }
        guard let path else {
            return try parse(fileText: nil, path: nil, environment: environment)
        }
        return try parse(fileText: try readFile(path), path: path, environment: environment)
    }

    /// The file's text, read through one descriptor whose owner and mode were checked: a file swapped into the path
    /// after the check is never read. Refused: a symbolic link, another user's file, one group or others can write
    /// (it names the reload command that pinset runs).
    static func readFile(_ path: String) throws(ACMEFailure) -> String {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            let error = errno
            if error == ELOOP {
                let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) ?? "?"
                let resolved = target.hasPrefix("/") ? target : URL(fileURLWithPath: path).resolvingSymlinksInPath().path
                throw ACMEFailure(.error, "configuration file '\(path)' is a symbolic link (to '\(target)'). It names the command that reloads the TLS server, so pinset reads only a regular file at the path given: pass the file itself (--config '\(resolved)') or replace the link with that file.")
            }
            if error == ENOENT {
                throw ACMEFailure(.usage, "configuration file '\(path)' does not exist. Create it (deploy/acme/README.md lists the settings) or pass --config FILE.")
            }
            throw ACMEFailure(.error, "cannot read the configuration file '\(path)': \(String(cString: strerror(error))). Give \(userName) read access to it.")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw ACMEFailure(.error, "cannot read the owner and mode of '\(path)': \(String(cString: strerror(errno))).")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw ACMEFailure(.usage, "configuration file '\(path)' is not a regular file. Pass the file of NAME=value lines (deploy/acme/README.md).")
        }
        if info.st_uid != geteuid() && info.st_uid != 0 {
            throw ACMEFailure(.error, "configuration file '\(path)' belongs to another user (uid \(info.st_uid)). It names the command that reloads the TLS server: chown it to \(userName) or root.")
        }
        if info.st_mode & 0o022 != 0 {
            let mode = String(info.st_mode & 0o777, radix: 8)
            throw ACMEFailure(.error, "configuration file '\(path)' is writable by group or others (mode \(mode)). It names the command that reloads the TLS server: chmod go-w '\(path)'.")
        }
        let bytes: [UInt8]
        do { bytes = try AtomicFile.readAll(from: fd, path: path, limit: 64 * 1024) } catch {
            throw ACMEFailure(.error, "cannot read the configuration file '\(path)': \(error.description) (at most 64 KiB).")
        }
        guard let text = String(validatingUTF8Bytes: bytes) else {
            throw ACMEFailure(.usage, "configuration file '\(path)' is not UTF-8 text. Write it as NAME=value lines (deploy/acme/README.md).")
        }
        return text
    }

    static var userName: String {
        guard let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name else { return "uid \(geteuid())" }
        return String(cString: name)
    }
}
