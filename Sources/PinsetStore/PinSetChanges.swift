import PinsetCore

/// What a store holds now, relative to headers read from it earlier: every customer's header, and the full
/// pin sets of those that are new or changed. A server that keeps only the headers of its last load learns of
/// an edit by reading the edited customer's hosts and pins alone.
public struct PinSetChanges: Sendable, Equatable {
    /// Every customer's header, sorted by customer name.
    public var headers: [PinSetHeader]
    /// The pin sets of at least the customers that are new or whose header differs for signing from the one
    /// given (`PinSetHeader.differsForSigning(from:)`), sorted by customer name; every pin set when many
    /// changed, as one scan then costs less than reading them one by one.
    public var pinSets: [PinSet]

    public init(headers: [PinSetHeader], pinSets: [PinSet]) {
        self.headers = headers
        self.pinSets = pinSets
    }

    /// Every pin set as read in full.
    public init(all pinSets: [PinSet]) {
        self.init(headers: pinSets.map(\.header), pinSets: pinSets)
    }

    /// Every customer's pin set: those read, and for the others the hosts of `previous`, the pin sets these
    /// changes were read against.
    public func applied(to previous: [PinSet]) throws -> [PinSet] {
        let read = Dictionary(pinSets.lazy.map { ($0.customer, $0) }, uniquingKeysWith: { first, _ in first })
        let known = Dictionary(previous.lazy.map { ($0.customer, $0) }, uniquingKeysWith: { first, _ in first })
        return try headers.map { header in
            if let pinSet = read[header.customer] { return pinSet }
            guard let kept = known[header.customer], !kept.header.differsForSigning(from: header) else {
                throw StoreError(.corruptData, "Customer '\(header.customer)' is unchanged, but neither it nor its earlier content can be found.")
            }
            // A setting that is not content (legacy clients) changes without a new version.
            return PinSet(header: header, hosts: kept.hosts)
        }
    }
}

/// One page of `PinStore.pinSetPage(after:limit:)`: pin sets sorted by customer name within the page.
public struct PinSetPage: Sendable, Equatable {
    /// Where the next page starts; opaque to callers.
    public struct Cursor: Sendable, Hashable {
        let afterCustomerID: Int64
    }

    public var pinSets: [PinSet]
    /// `nil` after the last page.
    public var next: Cursor?

    public init(pinSets: [PinSet], next: Cursor?) {
        self.pinSets = pinSets
        self.next = next
    }
}
