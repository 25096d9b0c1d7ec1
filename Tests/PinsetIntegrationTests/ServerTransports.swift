/// The values of `pinset serve`'s `transport` setting this platform has: the suites about serving under load and
/// behind a balancer run once against each.
enum ServerTransports {
    #if os(Linux)
    static let all = ["epoll", "dispatch"]
    #else
    static let all = ["dispatch"]
    #endif
}
