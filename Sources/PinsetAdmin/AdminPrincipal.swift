import PinsetCore
import PinsetStore

/// Who an admin operation is applied for: which rules hold it, and the name its audit entries record.
public enum AdminPrincipal: Sendable, Hashable {
    /// The user of a host with the deployment's database and data directory: the CLI without `--server` and
    /// without a token. Whoever can write those files can do anything the operations do, review included, so this
    /// principal holds every role for every customer and sees every customer; it is audited under `actor`
    /// (`--actor`, else the OS user).
    case localOperator(actor: String)
    /// A named admin, authenticated by its token: limited to its roles, audited under its name.
    case admin(AdminAccount)

    /// The name the audit log records.
    public var actor: String {
        switch self {
        case .localOperator(let actor): actor
        case .admin(let account): account.name
        }
    }

    /// The named admin, or nil for the local operator.
    public var account: AdminAccount? {
        if case .admin(let account) = self { return account }
        return nil
    }

    /// Whether it has the operator role: the local operator always has.
    public var isOperator: Bool { account?.isOperator ?? true }

    /// Whether it sees `customer`: the local operator sees every customer.
    public func mayView(_ customer: CustomerName) -> Bool { account?.mayView(customer) ?? true }
}

extension Admin {
    /// This library's own actor as the local operator: what the CLI on this host's database acts as. Only an
    /// `Admin` made by ``forLocalOperator(_:store:dataDirectory:publicSuffixes:now:)`` has one; any other (the server's) refuses,
    /// so that no front end for named admins can act with every role by mistake.
    public var localOperator: AdminPrincipal {
        get throws(AdminError) {
            guard actsForLocalOperator else {
                throw AdminError("These admin operations act for named admins only, not as the local operator.", kind: .forbidden)
            }
            return .localOperator(actor: actor)
        }
    }

    /// A named admin sees the customer and may edit it; for the local operator nothing is checked here (the
    /// store's write says when the customer does not exist).
    func requireEditor(_ principal: AdminPrincipal, of customer: CustomerName, _ what: String) throws {
        guard let account = principal.account else { return }
        _ = try pinSet(of: customer, visibleTo: account)
        try account.require(account.mayEdit(customer), what, customer)
    }

    /// A named admin sees the customer and is an operator; `what` completes "Admin NAME may not …".
    func requireOperator(_ principal: AdminPrincipal, of customer: CustomerName, _ what: String) throws {
        guard let account = principal.account else { return }
        _ = try pinSet(of: customer, visibleTo: account)
        try requireOperator(principal, what)
    }

    /// A named admin is an operator, for an operation of the whole deployment.
    func requireOperator(_ principal: AdminPrincipal, _ what: String) throws {
        guard let account = principal.account, !account.isOperator else { return }
        throw AdminError("Admin \(account.name) may not \(what): only an operator may. Ask an operator.", kind: .forbidden)
    }

    /// On a customer that requires review, changes a request cannot carry past a reviewer are an operator's.
    func requireOperatorWhereReviewed(_ customer: CustomerName, _ principal: AdminPrincipal, _ what: String, because why: String) throws {
        guard let account = principal.account, !account.isOperator, try store.requiresReview(customer) else { return }
        throw AdminError("Admin \(account.name) may not \(what) of '\(customer)', which requires review: \(why). Ask an operator.", kind: .forbidden)
    }
}
