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

    /// A table admitting at most `limit` connections per address (0: no limit, nothing counted).
    init(limit: Int) {
        pointer = sb_addresses_create(UInt32(clamping: max(0, limit)))
    }

    deinit { sb_addresses_free(pointer) }
}
