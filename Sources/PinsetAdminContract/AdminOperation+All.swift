extension AdminOperation {
    public static let describeAPI = AdminOperation("describeAPI", "GET", "/openapi.json", access: .anyone)
    public static let me = AdminOperation("me", "GET", "/me", access: .anyAdmin)

    public static let listCustomers = AdminOperation("listCustomers", "GET", "/customers", access: .anyAdmin)
    public static let addCustomer = AdminOperation(
        "addCustomer", "POST", "/customers", access: .role(.operator),
        body: [.string("name", required: true, hint: "the new customer's name"), .boolean("servesLegacyClients"), .boolean("requiresReview")], successes: [201])
    public static let getCustomer = AdminOperation("getCustomer", "GET", "/customers/{customer}", access: .role(.viewer))
    public static let updateCustomer = AdminOperation(
        "updateCustomer", "PATCH", "/customers/{customer}", access: .role(.operator),
        body: [.boolean("servesLegacyClients"), .boolean("requiresReview")])
    public static let removeCustomer = AdminOperation("removeCustomer", "DELETE", "/customers/{customer}", access: .role(.operator))

    public static let addHost = AdminOperation(
        "addHost", "POST", "/customers/{customer}/hosts", access: .role(.editor),
        body: [.string("hostname", required: true, hint: "the host's name, e.g. api.example.com"), .integer("port", AdminLimits.ports), .boolean("includeSubdomains")], successes: [201])
    public static let updateHost = AdminOperation(
        "updateHost", "PATCH", "/customers/{customer}/hosts/{hostname}", access: .role(.editor),
        body: [.integer("port", AdminLimits.ports), .boolean("includeSubdomains"), .text("unmonitored"), .boolean("monitored")])
    public static let removeHost = AdminOperation(
        "removeHost", "DELETE", "/customers/{customer}/hosts/{hostname}", access: .role(.editor), query: [.boolean("allowLastHost")])
    /// A host's report-only window (docs/report-only.md): set by an operator, or requested by an editor of a
    /// customer that requires review and set when a reviewer approves (202), with a reason, ending at `until`
    /// (Unix seconds) no later than the server's maximum from now; ended early by an editor.
    public static let setReportOnly = AdminOperation(
        "setReportOnly", "PUT", "/customers/{customer}/hosts/{hostname}/report-only", access: .role(.editor),
        body: [
            AdminField("until", .integer(AdminLimits.reportOnlyEnd), required: true, hint: "when the window ends, in seconds since 1970"),
            .text("reason", required: true, hint: "why pinning may not be enforced for the host, e.g. 'renewal served an unpinned key, INC-4711'"),
        ],
        successes: [200, 202])
    public static let endReportOnly = AdminOperation(
        "endReportOnly", "DELETE", "/customers/{customer}/hosts/{hostname}/report-only", access: .role(.editor), query: [.string("reason")])
    public static let editPins = AdminOperation(
        "editPins", "POST", "/customers/{customer}/hosts/{hostname}/pins", access: .role(.editor),
        body: [
            .strings("hashes"), .strings("certificates"), .strings("publicKeys"), .string("remove"), .boolean("allowLastPin"),
            .string("window"), .integer("notBefore", AdminLimits.publishWindowTimes), .integer("notAfter", AdminLimits.publishWindowTimes), .text("reason"), .integer("expiresInHours", AdminLimits.changeRequestLifetimeHours), .boolean("dryRun"),
        ],
        successes: [200, 202])
    public static let addNextKeys = AdminOperation(
        "addNextKeys", "POST", "/customers/{customer}/hosts/{hostname}/next-keys", access: .role(.editor),
        body: [.strings("hashes"), .strings("certificates"), .strings("publicKeys"), .text("reason", required: true), .string("label")])
    public static let completeRotation = AdminOperation(
        "completeRotation", "POST", "/customers/{customer}/hosts/{hostname}/complete-rotation", access: .role(.editor),
        body: [.strings("keep"), .text("reason", required: true)])

    public static let raiseCustomerRevocationFloor = AdminOperation(
        "raiseCustomerRevocationFloor", "POST", "/customers/{customer}/revocation-floor", access: .role(.operator),
        body: [.integer("notBefore", AdminLimits.revocationFloor)])
    public static let raiseRevocationFloor = AdminOperation(
        "raiseRevocationFloor", "POST", "/revocation-floor", access: .role(.operator), body: [.integer("notBefore", AdminLimits.revocationFloor)])

    public static let auditLog = AdminOperation(
        "auditLog", "GET", "/customers/{customer}/audit", access: .role(.viewer), query: [.integer("limit", AdminLimits.auditEntries)])
    public static let rotationReadiness = AdminOperation(
        "rotationReadiness", "GET", "/customers/{customer}/rotation", access: .role(.viewer),
        query: [AdminField("minimumShare", .number(AdminLimits.minimumShare)), .string("hostname"), .string("key")])
    public static let pinFailures = AdminOperation(
        "pinFailures", "GET", "/customers/{customer}/reports", access: .role(.viewer), query: [.string("since")])
    public static let customerHealth = AdminOperation("customerHealth", "GET", "/customers/{customer}/health", access: .role(.viewer))
    public static let getIdentity = AdminOperation("getIdentity", "GET", "/customers/{customer}/identity", access: .role(.viewer))
    public static let rotateIdentity = AdminOperation(
        "rotateIdentity", "POST", "/customers/{customer}/identity", access: .role(.operator),
        body: [
            .string("keyType", required: true, hint: "the new key's type, one of p256, p384, rsa2048, rsa3072 or rsa4096"), .string("commonName"), .integer("validityDays", AdminLimits.identityValidityDays),
            .boolean("replaceTrustAnchor"),
        ])

    public static let listChangeRequests = AdminOperation(
        "listChangeRequests", "GET", "/change-requests", access: .anyAdmin, query: [.string("customer"), .boolean("all")])
    public static let getChangeRequest = AdminOperation("getChangeRequest", "GET", "/change-requests/{id}", access: .role(.viewer))
    public static let approveChangeRequest = AdminOperation(
        "approveChangeRequest", "POST", "/change-requests/{id}/approve", access: .role(.reviewer), body: [.boolean("skipLiveCheck"), .text("reason")])
    /// A reviewer, or the request's own author withdrawing it.
    public static let rejectChangeRequest = AdminOperation(
        "rejectChangeRequest", "POST", "/change-requests/{id}/reject", access: .role(.reviewer), body: [.text("note")])
    public static let breakGlass = AdminOperation(
        "breakGlass", "POST", "/change-requests/{id}/break-glass", access: .role(.operator), body: [.text("reason", required: true)])
    public static let listBreakGlass = AdminOperation(
        "listBreakGlass", "GET", "/break-glass", access: .anyAdmin, query: [.string("customer"), .boolean("all")])
    /// A reviewer of the customer who neither applied the edit nor wrote its request.
    public static let acknowledgeBreakGlass = AdminOperation(
        "acknowledgeBreakGlass", "POST", "/break-glass/{id}/acknowledge", access: .role(.reviewer), body: [.text("note")])

    /// Every operation of the API.
    public static let all: [AdminOperation] = [
        describeAPI, me,
        listCustomers, addCustomer, getCustomer, updateCustomer, removeCustomer,
        addHost, updateHost, removeHost, setReportOnly, endReportOnly, editPins, addNextKeys, completeRotation,
        raiseCustomerRevocationFloor, raiseRevocationFloor,
        auditLog, rotationReadiness, pinFailures, customerHealth, getIdentity, rotateIdentity,
        listChangeRequests, getChangeRequest, approveChangeRequest, rejectChangeRequest, breakGlass,
        listBreakGlass, acknowledgeBreakGlass,
    ]
}
