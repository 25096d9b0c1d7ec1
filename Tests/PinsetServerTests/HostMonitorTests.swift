import Dispatch
import Foundation
import Logging
import PinsetLiveCheck
import PinsetServer
import PinsetTestSupport
import Testing

/// A host source whose read does not return until the test releases it: a database that does not answer.
final class UnansweredHostSource: MonitoredHostSource, @unchecked Sendable {
    private let lock = NSLock()
    private let release = DispatchSemaphore(value: 0)
    private var started = 0
    private var released = false

    func monitoringJobs() throws -> [HostCheckJob] {
        lock.withLock { started += 1 }
        release.wait()
        return []
    }

    var readsStarted: Int { lock.withLock { started } }
    var wasReleased: Bool { lock.withLock { released } }

    func answer() {
        lock.withLock { released = true }
        release.signal()
    }
}

struct HostMonitorTests {
    /// Stopping the monitor while its store read waits for an unanswering database returns at once, and the
    /// cancelled read is not reported as a failure.
    @Test func stoppingDuringAnUnansweredStoreReadReturnsAtOnce() async throws {
        var configuration = ServerConfiguration.Monitoring()
        configuration.intervalSeconds = 60
        let source = UnansweredHostSource()
        let monitor = try HostMonitor(configuration: configuration, source: source, metrics: nil, logger: Logger(label: "test"))
        // Bounds the test: if stopping waited for the read, it returns only after this answer, and says so below.
        let safety = DispatchWorkItem { source.answer() }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: safety)
        defer { safety.cancel() }

        monitor.start()
        #expect(try await eventually { source.readsStarted == 1 })
        await monitor.stop()
        #expect(!source.wasReleased, "stop() waited for the store read")
        #expect(monitor.report.lastError == nil)
        #expect(monitor.report.passes == 0)
        source.answer()
    }
}
