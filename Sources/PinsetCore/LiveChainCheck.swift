import Foundation

/// How a host's pin set relates to the chain the host serves now: would apps connect, and would they still
/// connect after the next key change?
///
/// Pure: the caller fetches the chain and supplies the time. A pin matches a live certificate when its SPKI
/// hash is that certificate's key hash, or its certificate hash is that certificate's hash. Clients accept a
/// connection when any pin matches any certificate of the validated chain, so:
///
/// - ``State-swift.enum/matchesNothing``: no pin matches; apps fail now.
/// - ``State-swift.enum/matchesOnlyBackup``: the only matching pins are spare keys (pins known by key alone,
///   added by hash or public key), while every pin made from a certificate matches nothing. The host has moved
///   to its backup key: apps connect, but the set has no backup left until a new spare is pinned.
/// - ``State-swift.enum/matches``: otherwise, when something matches.
///
/// Two warnings look at the next change rather than today:
/// - RFC 7469 section 4.3: a set needs a pin that is *not* in the served chain, or it is no backup at all.
///   ``allPinsInLiveChain`` flags a set whose pins all match the live chain; ``pinsSurvivingLeafKeyChange``
///   says which of them would still match after the leaf's key changes (pins of intermediates or roots), or is
///   empty when a new leaf key alone locks apps out.
/// - ``soleKeyExpiresSoon``: the leaf expires within the warning window and nothing but the leaf matches and
///   no pin lies outside the chain, so a renewal with a new key would lock apps out.
public struct LiveChainCheck: Sendable {
    public enum State: String, Sendable, CaseIterable {
        case matches
        case matchesOnlyBackup = "matches-only-backup"
        case matchesNothing = "matches-nothing"
    }

    /// One pin and the live certificates it matches (empty: it matches none of them).
    public struct PinMatch: Sendable {
        public var pin: Pin
        public var certificates: [LiveCertificate]
    }

    public let chain: [LiveCertificate]
    public let matches: [PinMatch]
    public let state: State
    public let allPinsInLiveChain: Bool
    public let pinsSurvivingLeafKeyChange: [Pin]
    public let soleKeyExpiresSoon: Bool
    /// Whole days from the check's time to the leaf's expiry (negative once expired).
    public let leafDaysLeft: Int?

    /// - Parameters:
    ///   - pins: the host's pin set as it is or would be after an edit.
    ///   - chain: the chain the host serves, leaf first (``LiveCertificate/chain(fromDER:)``).
    ///   - now: the time of the check.
    ///   - expiryWarningDays: how close to its expiry a sole-key leaf is flagged.
    public init(pins: [Pin], chain: [LiveCertificate], now: Date, expiryWarningDays: Int = 30) {
        self.chain = chain
        let matches = pins.map { pin in PinMatch(pin: pin, certificates: chain.filter { $0.isMatched(by: pin) }) }
        self.matches = matches
        let matching = matches.filter { !$0.certificates.isEmpty }
        let outside = matches.filter { $0.certificates.isEmpty }
        if matching.isEmpty {
            state = .matchesNothing
        } else if matching.allSatisfy({ $0.pin.isSpareKey }),
                  outside.contains(where: { !$0.pin.isSpareKey }) {
            state = .matchesOnlyBackup
        } else {
            state = .matches
        }
        allPinsInLiveChain = !pins.isEmpty && outside.isEmpty
        pinsSurvivingLeafKeyChange = matching.filter { $0.certificates.contains { $0.position > 0 } }.map(\.pin)
        if let leaf = chain.first {
            let days = Int((leaf.notAfter.timeIntervalSince(now) / 86_400).rounded(.down))
            leafDaysLeft = days
            let onlyLeafMatches = !matching.isEmpty && matching.allSatisfy { $0.certificates.allSatisfy { $0.position == 0 } }
            soleKeyExpiresSoon = days < expiryWarningDays && onlyLeafMatches && outside.isEmpty
        } else {
            leafDaysLeft = nil
            soleKeyExpiresSoon = false
        }
    }

    /// Apps would fail to connect now.
    public var fails: Bool { state == .matchesNothing }

    /// The pins that match no certificate of the live chain.
    public var unmatchedPins: [Pin] { matches.filter { $0.certificates.isEmpty }.map(\.pin) }

    /// Sentences for the operator about the next key change: empty when the set has a backup outside the chain
    /// and the leaf is not about to expire with its key as the only match.
    public var warnings: [String] {
        var warnings: [String] = []
        if state == .matchesOnlyBackup {
            warnings.append("The host serves a key pinned as a spare; the pins made from certificates match nothing. Pin a new spare key and then remove the stale pins.")
        }
        if allPinsInLiveChain {
            let surviving = pinsSurvivingLeafKeyChange.map(\.displayName)
            warnings.append(surviving.isEmpty
                ? "Every pin is in the chain served today, so none is a backup (RFC 7469): a new leaf key would lock apps out. Pin a spare key kept offline (its SPKI hash) as the backup."
                : "Every pin is in the chain served today, so none is a backup (RFC 7469). After a leaf key change only \(surviving.joined(separator: ", ")) (intermediate or root) would still match; pin a spare leaf key kept offline as the backup.")
        }
        if soleKeyExpiresSoon, let leafDaysLeft {
            warnings.append("The live leaf expires in \(leafDaysLeft) day(s) and its certificate is the only one pinned: renewing it with a new key would lock apps out. Pin the next key now.")
        }
        return warnings
    }
}

extension Pin {
    /// A pin known by its key alone, the way a spare key that was never served is pinned.
    var isSpareKey: Bool { certificateSHA256 == nil && spkiSHA256 != nil && source.kind != .liveHost }
}
