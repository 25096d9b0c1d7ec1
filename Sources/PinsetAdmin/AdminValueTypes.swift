// The store's value types that the admin library's operations take and return. Re-exported here, and only these,
// so that a front end (the `pinset` executable) depends on the admin library alone and cannot reach the store.
@_exported import struct PinsetStore.AdminAccount
@_exported import struct PinsetStore.AdminGrant
@_exported import struct PinsetStore.PinEdit
