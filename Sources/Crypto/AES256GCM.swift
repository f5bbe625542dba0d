import CCrypto

/// AES-256-GCM (NIST SP 800-38D) from OpenSSL's libcrypto: authenticated encryption of small values handed to
/// clients (opaque positions), so that they can neither read nor forge them.
public struct AES256GCM: Sendable {
    /// The 32-byte key.
    private let key: [UInt8]

    /// Nonce, then ciphertext, then tag: what ``seal(_:authenticating:)`` adds to the plaintext's length.
    public static let overhead = nonceLength + tagLength
    static let nonceLength = 12
    static let tagLength = 16

    /// A cipher under `key`; nil unless it is exactly 32 bytes.
    public init?(key: [UInt8]) {
        guard key.count == 32 else { return nil }
        self.key = key
    }

    /// `plain` encrypted under a fresh random nonce, with `additional` data authenticated alongside (not included):
    /// nonce ‖ ciphertext ‖ tag.
    public func seal(_ plain: [UInt8], authenticating additional: [UInt8] = []) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        let nonce = (0 ..< Self.nonceLength).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return seal(plain, nonce: nonce, authenticating: additional)
    }

    /// `plain` encrypted under `nonce` (12 bytes; never used twice with one key): nonce ‖ ciphertext ‖ tag.
    func seal(_ plain: [UInt8], nonce: [UInt8], authenticating additional: [UInt8]) -> [UInt8] {
        precondition(nonce.count == Self.nonceLength, "AES-GCM nonces here are 12 bytes")
        var sealed = [UInt8](repeating: 0, count: max(plain.count, 1))
        var tag = [UInt8](repeating: 0, count: Self.tagLength)
        let succeeded = key.withUnsafeBufferPointer { key in
            nonce.withUnsafeBufferPointer { nonce in
                additional.withUnsafeBufferPointer { additional in
                    plain.withUnsafeBufferPointer { plain in
                        sealed.withUnsafeMutableBufferPointer { sealed in
                            tag.withUnsafeMutableBufferPointer { tag in
                                sb_aes256gcm_seal(key.baseAddress, nonce.baseAddress, additional.baseAddress,
                                                  additional.count, plain.baseAddress, plain.count,
                                                  sealed.baseAddress, tag.baseAddress)
                            }
                        }
                    }
                }
            }
        }
        // libcrypto fails here only when it cannot allocate or its provider is missing.
        precondition(succeeded == 1, "libcrypto could not encrypt with AES-256-GCM")
        return nonce + sealed.prefix(plain.count) + tag
    }

    /// The plaintext of `sealed` (as ``seal(_:authenticating:)`` makes it), or nil when it was not sealed under this
    /// key with this `additional` data, or was altered.
    public func open(_ sealed: [UInt8], authenticating additional: [UInt8] = []) -> [UInt8]? {
        guard sealed.count >= Self.overhead else { return nil }
        let nonce = Array(sealed.prefix(Self.nonceLength))
        let body = Array(sealed.dropFirst(Self.nonceLength).dropLast(Self.tagLength))
        let tag = Array(sealed.suffix(Self.tagLength))
        var plain = [UInt8](repeating: 0, count: max(body.count, 1))
        let succeeded = key.withUnsafeBufferPointer { key in
            nonce.withUnsafeBufferPointer { nonce in
                additional.withUnsafeBufferPointer { additional in
                    body.withUnsafeBufferPointer { body in
                        tag.withUnsafeBufferPointer { tag in
                            plain.withUnsafeMutableBufferPointer { plain in
                                sb_aes256gcm_open(key.baseAddress, nonce.baseAddress, additional.baseAddress,
                                                  additional.count, body.baseAddress, body.count, tag.baseAddress,
                                                  plain.baseAddress)
                            }
                        }
                    }
                }
            }
        }
        return succeeded == 1 ? Array(plain.prefix(body.count)) : nil
    }
}
