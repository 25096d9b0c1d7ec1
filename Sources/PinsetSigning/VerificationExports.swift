// Signing and verifying belong together for the server and the CLI, which import this module alone; the
// verification half is a module of its own so that the client links it without the signing half.
@_exported import PinsetVerification
