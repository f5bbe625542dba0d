import CCrypto

/// SHA-256 of bytes that arrive over time (a file as it uploads): `update` with each piece, then `finish` once.
/// Not shared between tasks; a stream dropped unfinished frees its state.
public final class SHA256Stream {
    /// libcrypto's digest context: nil once finished.
    private var context: UnsafeMutableRawPointer?

    /// A fresh digest.
    public init() {
        context = sb_sha256_begin()
        // libcrypto fails only when it cannot allocate or its provider is missing: the process cannot hash at all.
        precondition(context != nil, "libcrypto could not start SHA-256")
    }

    /// Adds `bytes` to the digest; must not be called after `finish`.
    public func update(_ bytes: [UInt8]) {
        guard let context else { preconditionFailure("SHA256Stream updated after finish") }
        let succeeded = bytes.withUnsafeBufferPointer { sb_sha256_update(context, $0.baseAddress, $0.count) }
        precondition(succeeded == 1, "libcrypto could not compute SHA-256")
    }

    /// The 32-byte digest of everything added; call once.
    public func finish() -> [UInt8] {
        guard let context else { preconditionFailure("SHA256Stream finished twice") }
        self.context = nil
        var digest = [UInt8](repeating: 0, count: 32)
        let succeeded = digest.withUnsafeMutableBufferPointer { sb_sha256_finish(context, $0.baseAddress) }
        precondition(succeeded == 1, "libcrypto could not compute SHA-256")
        return digest
    }

    deinit {
        if let context { sb_sha256_free(context) }
    }
}
