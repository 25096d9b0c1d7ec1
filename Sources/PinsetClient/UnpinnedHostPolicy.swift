/// What to do with a TLS peer whose host name no pin entry covers.
///
/// Either way, normal chain and host name validation still applies: pinning only ever adds a requirement.
public enum UnpinnedHostPolicy: Hashable, Sendable {
    /// Hosts without pins are trusted on normal validation alone. The default, as in legacy clients, so an app
    /// keeps working for hosts the trust server does not know.
    case allow
    /// Every host must be covered by a pin entry; connections to any other host are refused. Also refuses
    /// everything while no pin set has been loaded.
    case refuse
}
