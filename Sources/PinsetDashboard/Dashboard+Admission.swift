import PinsetAdminContract

extension Dashboard {
    /// The admin of the live session whose cookie a request carries, while its token still authenticates: for the admin
    /// listener's admission, which reserves slots for admins. Read only: no session's clock restarts, none ends, and
    /// no failure is counted; the request itself is authenticated again when it is answered.
    public func sessionAdmin(_ request: AdminAPIRequest) -> String? {
        guard let id = Self.cookies(request)[Self.sessionCookie], let digest = sessions.tokenDigest(ofSession: id) else { return nil }
        return (try? admin.authenticate(tokenDigest: digest))?.name
    }
}
