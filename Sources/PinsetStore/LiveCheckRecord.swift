import PinsetCore

/// What a pin edit was checked against before it was committed, and what its audit entry says about it.
///
/// The live-chain check runs outside the transaction (it needs the network), on the host as it was read
/// then. The write re-reads the host inside its transaction and refuses the edit when the host's port or pins
/// differ from `checkedHost`, so the pin set that passed the check is the one committed.
public struct LiveCheckRecord: Sendable {
    /// The host, with its pins, as the check computed the result from.
    public var checkedHost: HostPins
    /// Appended to the audit entry: the check's outcome, or the override and its reason.
    public var auditNote: String

    public init(checkedHost: HostPins, auditNote: String) {
        self.checkedHost = checkedHost
        self.auditNote = auditNote
    }
}
