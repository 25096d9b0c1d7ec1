import PinsetAdminContract
import PinsetStatus

// The health view is the server status's own document, so that the dashboard and the API cannot tell it apart.
extension CustomerHealth: AdminResponseBody {
    public static var operations: [AdminOperation] { [.customerHealth] }
}
