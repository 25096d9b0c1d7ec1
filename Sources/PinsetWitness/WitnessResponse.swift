/// An HTTP answer of the witness, before any transport: status, media type and body bytes.
public struct WitnessResponse: Hashable, Sendable {
    public let status: Int
    public let contentType: String
    public let body: [UInt8]
    /// Extra header fields (`Allow` on a 405).
    public let headers: [String: String]

    public init(status: Int, contentType: String, body: [UInt8], headers: [String: String] = [:]) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.headers = headers
    }

    public static let plainText = "text/plain; charset=utf-8"
    /// The 409 media type of c2sp.org/tlog-witness: a tree size in decimal and a newline.
    public static let treeSize = "text/x.tlog.size"

    /// A plain-text answer: the message and a newline.
    public static func text(_ status: Int, _ message: String, headers: [String: String] = [:]) -> WitnessResponse {
        WitnessResponse(status: status, contentType: plainText, body: Array((message + "\n").utf8), headers: headers)
    }
}
