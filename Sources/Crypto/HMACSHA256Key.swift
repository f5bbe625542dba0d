import CCrypto
import Coordination

/// An HMAC-SHA256 key made ready once, for a key that signs many messages (a webhook endpoint's secret, the audit
/// chain's key): its padded blocks are hashed when it is made, so a code then costs the hashing of the message alone,
/// without libcrypto looking up the algorithm, building a context and hashing the key again for every one.
///
/// `@unchecked Sendable`: `key` is only read (copied) after `init`, and only while `idle`'s lock is held; each copy in
/// `idle` is used by one call at a time, taken out of the list for the call and put back after it.
public final class HMACSHA256Key: @unchecked Sendable {
    /// The ready key (libcrypto's `EVP_MAC_CTX`), never used to compute: a call works on a copy of it.
    private let key: UnsafeMutableRawPointer
    /// Guards the copies not in use right now (at most ``idleLimit``), for the next calls to take.
    private let idle = Locked<[Copy]>([])
    /// The most copies kept between calls: as many as calls sign at the same moment, on a machine of a few cores.
    static let idleLimit = 8

    /// Makes `key` ready.
    public init(_ key: [UInt8]) {
        let ready = key.withUnsafeBufferPointer { sb_hmac_sha256_key_new($0.baseAddress, $0.count) }
        // libcrypto fails only when it cannot allocate or its provider is missing: the process cannot sign at all.
        guard let ready else { preconditionFailure("libcrypto could not make an HMAC-SHA256 key ready") }
        self.key = ready
    }

    /// A copy of the ready key, for one call at a time.
    ///
    /// `@unchecked Sendable`: it moves between calls only through `idle`, and a call that takes it out is the only
    /// one to use it until it puts it back.
    private struct Copy: @unchecked Sendable {
        let context: UnsafeMutableRawPointer
    }

    deinit {
        for copy in idle.withLock({ $0 }) { sb_hmac_sha256_key_free(copy.context) }
        sb_hmac_sha256_key_free(key)
    }

    /// The 32-byte authentication code of `message`: the same as ``HMACSHA256/authenticationCode(for:key:)`` with
    /// this key.
    public func authenticationCode(for message: UnsafeRawBufferPointer) -> [UInt8] {
        let copy = idle.withLock { idle in idle.popLast() ?? sb_hmac_sha256_key_copy(key).map(Copy.init) }
        guard let copy else { preconditionFailure("libcrypto could not copy an HMAC-SHA256 key") }
        let context = copy.context
        var mac = [UInt8](repeating: 0, count: 32)
        let succeeded = mac.withUnsafeMutableBufferPointer { output in
            sb_hmac_sha256_keyed(context, message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count,
                                 output.baseAddress)
        }
        precondition(succeeded == 1, "libcrypto could not compute HMAC-SHA256")
        let kept = idle.withLock { idle in
            guard idle.count < Self.idleLimit else { return false }
            idle.append(copy)
            return true
        }
        if !kept { sb_hmac_sha256_key_free(context) }
        return mac
    }

    /// The 32-byte authentication code of `message`.
    public func authenticationCode(for message: [UInt8]) -> [UInt8] {
        message.withUnsafeBytes { authenticationCode(for: $0) }
    }
}
