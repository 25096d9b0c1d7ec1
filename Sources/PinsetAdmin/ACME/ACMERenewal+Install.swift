import Foundation
import PinsetFileSystem

extension ACMERenewal {
    /// Writes `keyPEM` (unless nil: the key file stays as it is) and the chain where the TLS server reads them,
    /// each through a temporary file renamed over it (one file, key then chain, when both paths are the same),
    /// then runs PINSET_ACME_RELOAD. The previous files are kept in the state directory (0600) until the caller
    /// is done; if the reload fails they are put back and the run stops (`note` says what else holds then).
    func install(keyPEM: [UInt8]?, chainPEM: String, certificateFile: String, keyFile: String, note: String) throws(ACMEFailure) {
        let combined = keyFile == certificateFile
        state.remove(state.rollbackCertificate, state.rollbackKey)
        let previousCertificate = try copy(certificateFile, to: state.rollbackCertificate)
        var previousKey: [UInt8]?
        if keyPEM != nil && !combined { previousKey = try copy(keyFile, to: state.rollbackKey) }

        // The key first, then the chain; the reload makes the server read both.
        if combined {
            try write((keyPEM ?? []) + Array(chainPEM.utf8), to: certificateFile, mode: 0o600)
        } else {
            if let keyPEM { try write(keyPEM, to: keyFile, mode: 0o600) }
            try write(Array(chainPEM.utf8), to: certificateFile, mode: 0o644)
        }
        guard let reload = configuration.reloadCommand else { return }
        if runReload(reload) { return }
        guard let previousCertificate else {
            throw ACMEFailure(.error, "PINSET_ACME_RELOAD ('\(reload)') failed, and there was no previous certificate to put back: the new files stay in place. Fix the reload command and run it.")
        }
        report.warn("the reload command failed; restoring the previous certificate and key.")
        if combined {
            try write(previousCertificate, to: certificateFile, mode: 0o600)
        } else {
            try write(previousCertificate, to: certificateFile, mode: 0o644)
            if let previousKey { try write(previousKey, to: keyFile, mode: 0o600) }
        }
        if !runReload(reload) { report.warn("the reload with the previous certificate failed too.") }
        state.remove(state.rollbackCertificate, state.rollbackKey)
        throw ACMEFailure(.error, "PINSET_ACME_RELOAD ('\(reload)') failed; the previous certificate and key are back in place. \(note)")
    }

    /// The bytes of `file` kept at `copy` (0600); nil when there is no file.
    func copy(_ file: String, to copy: String) throws(ACMEFailure) -> [UInt8]? {
        guard AtomicFile.exists(file) else { return nil }
        let bytes: [UInt8]
        do { bytes = try AtomicFile.read(file, limit: 4 * 1024 * 1024) } catch {
            throw ACMEFailure(.error, "cannot read \(file) to keep a copy for a rollback: \(error.description) Nothing was deployed.")
        }
        try write(bytes, to: copy, mode: 0o600)
        return bytes
    }

    func write(_ bytes: [UInt8], to path: String, mode: mode_t) throws(ACMEFailure) {
        do { try AtomicFile.write(bytes, to: path, mode: mode) } catch {
            throw ACMEFailure(.error, "could not write \(path) (\(error.description)) The file there is unchanged; check that its directory exists and that \(ACMEConfiguration.userName) may write there.")
        }
    }

    /// Runs the reload command with `sh -c`; whether it succeeded.
    func runReload(_ command: String) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        do {
            try process.run()
        } catch {
            report.warn("could not start /bin/sh for PINSET_ACME_RELOAD: \(error).")
            return false
        }
        process.waitUntilExit()
        return process.terminationReason == .exit && process.terminationStatus == 0
    }
}
