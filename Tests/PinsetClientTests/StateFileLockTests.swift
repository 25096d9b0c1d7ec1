import Foundation
@testable import PinsetClient
import PinsetFileSystem
import PinsetTestSupport
import Testing

/// Two updaters on one state directory (an app and its extension) write the state file one at a time: each reads,
/// judges and writes it under the directory's lock. The other holder here is a Perl process that knows nothing of
/// Pinset, so the lock is the system's and not a convention inside one process.
@Suite("State file lock")
struct StateFileLockTests {
    /// Starts a process that holds the state directory's lock for `seconds`, taken with `flock(2)` by Perl (present on
    /// Linux and macOS alike), and returns once the lock is held. The process started is the one holding it, so
    /// stopping it by its pid releases the lock.
    func holdStateLock(_ f: ClientFixture, seconds: String) throws -> BackgroundProcess {
        try AtomicFile.createDirectory(f.configuration.stateDirectory, mode: 0o700)
        let path = f.configuration.stateLockPath
        let holder = try BackgroundProcess(
            "perl", ["-MFcntl=:flock", "-e", "open(my $f, '>>', $ARGV[0]) or die $!; flock($f, LOCK_EX) or die $!; select(undef, undef, undef, $ARGV[1]);", path, seconds],
            logDirectory: f.directory.path, name: "holder")
        let held = holder.waitFor(timeout: 30) {
            do {
                _ = try FileLock.acquire(path)
                return false
            } catch let failure as FileLock.Failure {
                return failure == .held(path: path)
            } catch {
                return false
            }
        }
        if !held { holder.stop(signal: SIGKILL) }
        try #require(held, "the holder did not take \(path): \(holder.stderr)")
        return holder
    }

    /// A holder that never lets go (a process stuck mid-write) costs a write its patience, not the pins: the bundle is
    /// in force, the file is left as it was and the failure says why; once the holder is gone the next accepted
    /// bundle (the same version again) is written.
    @Test func aWriteGivesUpOnALockHeldTooLongAndKeepsThePinsInForce() async throws {
        let f = try ClientFixture()
        defer { f.directory.remove() }
        let updater = f.makeUpdater()
        try await updater.seed(withBundle: try f.signed(try f.payload(version: 1)))
        let fileBefore = try #require(f.stateFileBytes())

        let holder = try holdStateLock(f, seconds: "600")
        defer { holder.stop(signal: SIGKILL) }
        let second = try f.signed(try f.payload(version: 2))
        #expect(try await updater.seed(withBundle: second).version == 2)
        #expect(await updater.currentPinSet?.version == 2)
        #expect(f.stateFileBytes() == fileBefore)
        let failure = try #require(await updater.stateFileFailure)
        #expect(failure.code == .storage)
        #expect(failure.reason.contains(f.configuration.stateLockPath) && failure.reason.contains("stay in force"), "\(failure.reason)")

        holder.stop(signal: SIGKILL)
        #expect(try await updater.seed(withBundle: second).version == 2)
        #expect(await updater.stateFileFailure == nil)
        guard case .loaded(let stored) = await f.makeUpdater().loadStoredPins() else {
            Issue.record("the state file written after the holder left must load")
            return
        }
        #expect(stored.version == 2)
    }

    /// A holder that lets go within the patience (another updater's write) is waited for: the write happens after
    /// it, and nothing is reported as failed.
    @Test func aWriteWaitsForAShortHolder() async throws {
        let f = try ClientFixture()
        defer { f.directory.remove() }
        let updater = f.makeUpdater()
        let holder = try holdStateLock(f, seconds: "0.5")
        defer { holder.stop(signal: SIGKILL) }
        #expect(try await updater.seed(withBundle: try f.signed(try f.payload(version: 1))).version == 1)
        #expect(await updater.stateFileFailure == nil)
        #expect(f.stateFileBytes() != nil)
        #expect(holder.stop() == 0, "holder: \(holder.stderr)")
    }

    @Test func theLockExcludesASecondHolderInTheSameProcessUntilReleased() throws {
        let directory = try TemporaryDirectory(prefix: "pinset-lock")
        defer { directory.remove() }
        let path = directory.file("state.lock")
        var first: FileLock? = try FileLock.acquire(path)
        #expect(throws: FileLock.Failure.held(path: path)) { try FileLock.acquire(path) }
        #expect(throws: FileLock.Failure.held(path: path)) { try FileLock.acquire(path, waitingUpTo: .milliseconds(30)) }
        withExtendedLifetime(first) {}
        first = nil
        _ = try FileLock.acquire(path)
        var info = stat()
        #expect(lstat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
    }

    /// A lock file replaced by a symbolic link (to a file of someone else's, say) is not followed.
    @Test func aSymbolicLinkInPlaceOfTheLockFileIsRefused() throws {
        let directory = try TemporaryDirectory(prefix: "pinset-lock")
        defer { directory.remove() }
        let target = directory.file("elsewhere")
        try AtomicFile.write(Array("x".utf8), to: target)
        let path = directory.file("state.lock")
        #expect(symlink(target, path) == 0)
        #expect(throws: FileLock.Failure.unavailable(FileSystemError(path: path, operation: "open the lock file", errno: ELOOP))) {
            try FileLock.acquire(path)
        }
    }
}
