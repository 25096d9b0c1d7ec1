import PinsetCore
import PinsetStore

/// What an authenticated admin may do: the one place the roles are interpreted, for the CLI, the API and the
/// dashboard alike.
///
/// - viewer: read a customer's pins, requests, reports, uptake and audit log;
/// - editor: that, and propose pin edits;
/// - reviewer: that, and approve or reject other admins' requests;
/// - operator: every role for every customer, admin management, and applying an edit without review.
extension AdminAccount {
    public func mayView(_ customer: CustomerName) -> Bool {
        !isDisabled && grants.contains { $0.covers(customer) }
    }

    public func mayEdit(_ customer: CustomerName) -> Bool {
        !isDisabled && grants.contains { ($0.role == .editor || $0.role == .operator) && $0.covers(customer) }
    }

    public func mayReview(_ customer: CustomerName) -> Bool {
        !isDisabled && grants.contains { ($0.role == .reviewer || $0.role == .operator) && $0.covers(customer) }
    }

    public var isOperator: Bool { !isDisabled && grants.contains { $0.role == .operator } }

    /// A break-glass application is seen by operators and by anyone with a role for its customer, while that
    /// customer exists: one added later under the same name is another customer.
    public func mayView(_ event: BreakGlassEvent) -> Bool {
        isOperator || (!event.customerRemoved && (try? CustomerName(event.customer)).map(mayView) == true)
    }

    /// An operator, or a reviewer of the application's customer while it exists, who neither applied it nor wrote
    /// the request it applied (the store checks that again inside the write).
    public func mayAcknowledge(_ event: BreakGlassEvent) -> Bool {
        !event.involves(name) && (isOperator || (!event.customerRemoved && (try? CustomerName(event.customer)).map(mayReview) == true))
    }

    func require(_ allowed: Bool, _ what: String, _ customer: CustomerName) throws(AdminError) {
        guard allowed else {
            throw AdminError("Admin \(name) may not \(what) for customer '\(customer)': its roles are \(grants.map(\.description).joined(separator: ", ")). An operator can grant the role with 'pinset admin update \(name) --role …'.", kind: .forbidden)
        }
    }
}
