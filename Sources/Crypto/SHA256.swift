import CCrypto

/// SHA-256 (FIPS 180-4) from OpenSSL's libcrypto.
public enum SHA256 {
    /// The 32-byte digest of `bytes`.
    public static func hash(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        let message = Array(bytes)
        var digest = [UInt8](repeating: 0, count: 32)
        let succeeded = message.withUnsafeBufferPointer { input in
            digest.withUnsafeMutableBufferPointer { output in
                sb_sha256(input.baseAddress, input.count, output.baseAddress)
            }
        }
        // libcrypto fails only when it cannot allocate or its provider is missing: the process cannot sign at all.
        precondition(succeeded == 1, "libcrypto could not compute SHA-256")
        return digest
    }
}

/// HMAC-SHA256 (RFC 2104) from OpenSSL's libcrypto.
public enum HMACSHA256 {
    /// The 32-byte authentication code of `message` under `key`.
    public static func authenticationCode(for message: some Sequence<UInt8>, key: [UInt8]) -> [UInt8] {
        let data = Array(message)
        var mac = [UInt8](repeating: 0, count: 32)
        let succeeded = key.withUnsafeBufferPointer { key in
            data.withUnsafeBufferPointer { input in
                mac.withUnsafeMutableBufferPointer { output in
                    sb_hmac_sha256(key.baseAddress, key.count, input.baseAddress, input.count, output.baseAddress)
                }
            }
        }
        precondition(succeeded == 1, "libcrypto could not compute HMAC-SHA256")
        return mac
    }
}
