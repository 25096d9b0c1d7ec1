/// Where a request goes, decided from ``AdminOperation/all`` alone: an operation with its path parameters, a path
/// that exists under other methods (405, with the methods it takes), or none.
public enum AdminRoute: Sendable, Equatable {
    case operation(AdminOperation, parameters: [String: String])
    /// The path names operations, none of them with this method.
    case methodNotAllowed(allowed: [AdminOperation])
    case notFound

    /// Routes a method and the path's segments under ``AdminOperation/prefix``, already percent-decoded.
    public init(method: String, segments: [String], among operations: [AdminOperation] = AdminOperation.all) {
        var others: [AdminOperation] = []
        for operation in operations {
            guard let parameters = operation.parameters(matching: segments) else { continue }
            if operation.method == method {
                self = .operation(operation, parameters: parameters)
                return
            }
            others.append(operation)
        }
        self = others.isEmpty ? .notFound : .methodNotAllowed(allowed: others)
    }

    /// The `Allow` field of a 405: the methods in the order GET, POST, PATCH, DELETE.
    public static func allowField(_ operations: [AdminOperation]) -> String {
        let order = ["GET", "POST", "PUT", "PATCH", "DELETE"]
        let methods = Set(operations.map(\.method))
        return (order.filter(methods.contains) + methods.subtracting(order).sorted()).joined(separator: ", ")
    }
}

extension AdminOperation {
    /// The path parameters by name when `segments` spell this operation's path; a parameter matches any segment.
    func parameters(matching segments: [String]) -> [String: String]? {
        let template = self.segments
        guard template.count == segments.count else { return nil }
        var parameters: [String: String] = [:]
        for (part, segment) in zip(template, segments) {
            switch part {
            case .literal(let text):
                guard text == segment else { return nil }
            case .parameter(let name):
                parameters[name] = segment
            }
        }
        return parameters
    }
}
