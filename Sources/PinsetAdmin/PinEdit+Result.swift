import Foundation
import PinsetCore
import PinsetStore

extension PinEdit {
    /// The host as the edit leaves it, and the edit as the live-chain check describes it: the rule `pin add`,
    /// `pin remove` and change requests share, matching what the store's writes do.
    public func applied(to current: HostPins) -> (result: HostPins, edit: HostEdit) {
        var result = current
        var edit = HostEdit()
        switch operation {
        case .addPins(let pins):
            for pin in pins where !result.pins.contains(where: { $0.isSameKeyOrCertificate(as: pin) }) {
                result.pins.append(pin)
                edit.added.append(pin)
            }
        case .removePin(let fingerprint, _):
            // The store's rule: the pin with this SPKI hash, or the certificate-only pin with this certificate hash.
            edit.removed = current.pins.filter { $0.spkiSHA256 == fingerprint || ($0.spkiSHA256 == nil && $0.certificateSHA256 == fingerprint) }
            edit.removed += current.scheduledPins.filter { $0.spkiSHA256 == fingerprint || ($0.spkiSHA256 == nil && $0.certificateSHA256 == fingerprint) }
            result.pins.removeAll { edit.removed.contains($0) }
            result.scheduledPins.removeAll { edit.removed.contains($0) }
        case .setWindow(let fingerprint, let window):
            func named(_ pin: Pin) -> Bool { pin.spkiSHA256 == fingerprint || (pin.spkiSHA256 == nil && pin.certificateSHA256 == fingerprint) }
            for index in result.pins.indices where named(result.pins[index]) { result.pins[index].window = window }
            for index in result.scheduledPins.indices where named(result.scheduledPins[index]) { result.scheduledPins[index].window = window }
            if current.pins.contains(where: named) || current.scheduledPins.contains(where: named) {
                edit.other.append("\(fingerprint.base64): publish window \(window?.description ?? "none")")
            }
        case .setReportOnly(let until):
            edit.other.append("report-only until \(PinWindow.format(Date(timeIntervalSince1970: TimeInterval(until))))")
        }
        return (result, edit)
    }

    /// Every edit of `edits` for `hostname`, in order, applied to the host.
    public static func applied(_ edits: [PinEdit], for hostname: Hostname, to current: HostPins) -> (result: HostPins, edit: HostEdit) {
        var host = current
        var combined = HostEdit()
        for edit in edits where edit.hostname == hostname {
            let (result, step) = edit.applied(to: host)
            host = result
            combined.added += step.added
            combined.removed += step.removed
            combined.other += step.other
        }
        return (host, combined)
    }
}
