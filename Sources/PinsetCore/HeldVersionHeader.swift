/// The request header in which a Pinset client tells the server which content version it holds, so the server
/// can count how far a pin change has spread (uptake). Client and server share this one definition.
public enum HeldVersionHeader {
    public static let name = "Pinset-Version"
}
