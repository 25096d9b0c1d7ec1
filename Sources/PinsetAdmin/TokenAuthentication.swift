import PinsetCore
import PinsetStore

/// What became of an admin token presented from a client address.
public enum TokenAuthentication: Sendable {
    /// The token's SHA-256 is what a dashboard session keeps instead of the token.
    case authenticated(AdminAccount, tokenDigest: SHA256Fingerprint)
    /// Not authenticated; answer 429 with `Retry-After` when `retryAfterSeconds` is set, else 401 with `message`.
    case refused(message: String, retryAfterSeconds: Int?)
}

extension AuthenticationThrottle {
    /// The one rule by which the admin API and the dashboard's login take a token from an address.
    ///
    /// A valid token is accepted from any address, throttled or not, so that guesses from an address an admin
    /// shares (a proxy, a NAT, an office) cannot lock that admin out; tokens are 32 random bytes, so it is not the
    /// throttle that keeps guesses from succeeding. A token that does not authenticate counts as a failure of the
    /// address; once the address is past its limit, such a try learns nothing but 429 and when to try again.
    /// Presenting no token at all is not a guess and is not counted.
    ///
    /// - Throws: the store's errors (an unavailable database), which are no verdict on the token.
    public func authenticate(_ presentedToken: String?, from address: String, with admin: Admin) throws -> TokenAuthentication {
        let retryAfter = retryAfter(for: address)
        func refused(_ message: String) -> TokenAuthentication {
            .refused(
                message: retryAfter.map { "Too many failed authentications from this address; try again in \($0) s." } ?? message,
                retryAfterSeconds: retryAfter
            )
        }
        guard let presentedToken else {
            return refused("Give an admin token: the one 'pinset admin token NAME' printed.")
        }
        do {
            let token = try AdminToken(parsing: presentedToken)
            return .authenticated(try admin.authenticate(token), tokenDigest: token.sha256)
        } catch let error as AdminError {
            recordFailure(from: address)
            return refused(error.description)
        }
    }
}
