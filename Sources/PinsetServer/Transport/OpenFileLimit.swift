#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's limit on open descriptors, raised at start towards what the connection limit needs: every
/// connection is a descriptor, and a soft limit below `maxConnections` turns connections into `EMFILE` refusals
/// long before the configured limit (macOS starts processes with 256; systemd's default soft limit is 1024).
enum OpenFileLimit {
    /// Descriptors beside the connections: listeners, the database (a PostgreSQL pool), the access log, key and
    /// bundle files, live-chain checks and the host monitor's fetches.
    static let reserve = 128

    /// Raises the soft limit to `connections` plus ``reserve`` where the hard limit allows. Returns the limit
    /// now in force when it is still below that, for the caller to warn about; nil when it suffices.
    static func raise(toHold connections: Int) -> Int? {
        let wanted = rlim_t(connections + reserve)
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return nil }
        guard limit.rlim_cur < wanted else { return nil }
        var ceiling = limit.rlim_max
        #if canImport(Darwin)
        // Darwin refuses a soft limit above OPEN_MAX whatever the hard limit says.
        ceiling = min(ceiling, rlim_t(OPEN_MAX))
        #endif
        var raised = limit
        raised.rlim_cur = min(wanted, ceiling)
        if raised.rlim_cur > limit.rlim_cur, setrlimit(resource, &raised) == 0 { limit = raised }
        return limit.rlim_cur < wanted ? Int(limit.rlim_cur) : nil
    }

    #if os(Linux)
    private static let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let resource = RLIMIT_NOFILE
    #endif
}
