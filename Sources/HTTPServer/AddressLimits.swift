import CMicroHTTPD

/// How many connections each client address holds, counted from accept until closed, with the most it may hold:
/// one table shared by a server's front and every daemon the front hands connections to, so that a connection
/// still waiting for its request head counts as much as one being served.
///
/// `@unchecked Sendable`: the C table it owns is guarded by its own mutex, and is freed only in `deinit`, when no
/// daemon or front can use it any more (each holds this object for as long as it runs).
final class AddressLimits: @unchecked Sendable {
    /// The C table.
    let pointer: OpaquePointer?
    /// The most connections one address may hold (0: no limit, nothing counted).
    let limit: Int

    init(limit: Int) {
        self.limit = max(0, limit)
        pointer = sb_addresses_create(UInt32(clamping: self.limit))
    }

    deinit { sb_addresses_free(pointer) }
}
