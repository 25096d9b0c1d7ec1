import Foundation
import PinsetCore
import PinsetStore

/// Where the server reads pin sets from. The SQLite store in production; tests may pass their own.
public protocol PinSetSource: Sendable {
    func allPinSets() throws -> [PinSet]
    /// Every customer's header, and the pin sets of at least the customers that are new or changed since
    /// `previous`, headers read from this source earlier: a source may read the hosts and pins of only those.
    func pinSetChanges(since previous: [PinSetHeader]) throws -> PinSetChanges
    /// Up to `limit` pin sets after `cursor`; a full signing pass reads the deployment page by page.
    func pinSetPage(after cursor: PinSetPage.Cursor?, limit: Int) throws -> PinSetPage
    /// A number that changes whenever any pin set may have changed; polled twice a second.
    func changeCounter() throws -> Int64
    /// Calls `onChange` soon after a change where the source can push one (a PostgreSQL store); `nil` where
    /// only polling works. The poll stays on as well: pushed notifications are lost while disconnected.
    func observeChanges(_ onChange: @escaping @Sendable () -> Void) -> (any ChangeObservation)?
    /// Lists the pins whose publish window has begun at `time` and withholds those whose window has ended, each
    /// changed customer under a new content version (which moves the change counter), except pins held because
    /// withdrawing them would leave their host listing no pin of the chain in `servedChains`; returns both.
    func applyPinWindows(at time: Date, servedChains: ServedChains) throws -> PinWindowPass
    /// Ends the report-only windows whose end is at or before `time`, each as a change (a new version), so that
    /// the next pass no longer announces them; returns how many it ended. A source without windows ends none.
    func endReportOnlyWindows(endingBy time: Date) throws -> Int
}

extension PinSetSource {
    public func pinSetChanges(since previous: [PinSetHeader]) throws -> PinSetChanges {
        PinSetChanges(all: try allPinSets())
    }

    /// Every pin set in one page.
    public func pinSetPage(after cursor: PinSetPage.Cursor?, limit: Int) throws -> PinSetPage {
        PinSetPage(pinSets: try allPinSets(), next: nil)
    }

    public func observeChanges(_ onChange: @escaping @Sendable () -> Void) -> (any ChangeObservation)? { nil }

    /// A source without publish windows changes nothing.
    public func applyPinWindows(at time: Date, servedChains: ServedChains) throws -> PinWindowPass { PinWindowPass() }
    public func endReportOnlyWindows(endingBy time: Date) throws -> Int { 0 }
}
