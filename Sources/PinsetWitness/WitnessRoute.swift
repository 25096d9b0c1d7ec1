/// The witness's HTTP interface, declared once: each path, the methods it answers, and what answers it. Everything
/// the server does not list is 404, a listed path with another method 405 with `Allow`.
enum WitnessRoute: CaseIterable {
    /// `POST /add-checkpoint` (c2sp.org/tlog-witness; the submission prefix is the server's root).
    case addCheckpoint
    /// `GET /` and `GET /healthz`: 200 while the process serves, for load balancers and service managers.
    case health

    var paths: [String] {
        switch self {
        case .addCheckpoint: ["/add-checkpoint"]
        case .health: ["/", "/healthz"]
        }
    }

    var methods: [String] {
        switch self {
        case .addCheckpoint: ["POST"]
        case .health: ["GET", "HEAD"]
        }
    }

    init?(path: String) {
        guard let route = Self.allCases.first(where: { $0.paths.contains(path) }) else { return nil }
        self = route
    }

    /// The answer to one complete request. `target` is the request target as sent; its query, if any, is ignored.
    static func respond(method: String, target: String, body: [UInt8], witness: Witness) -> WitnessResponse {
        let path = String(target.prefix { $0 != "?" })
        guard let route = WitnessRoute(path: path) else {
            return .text(404, "Not found. This is a transparency-log witness: logs POST to /add-checkpoint.")
        }
        guard route.methods.contains(method) else {
            let allowed = route.methods.joined(separator: ", ")
            return .text(405, "\(path) answers \(allowed) only.", headers: ["Allow": allowed])
        }
        switch route {
        case .addCheckpoint:
            return witness.addCheckpoint(body: body)
        case .health:
            return .text(200, "ok")
        }
    }
}
