import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One resolved address of a webhook target, and whether policy lets deliveries reach it.
///
/// Refused unless private targets are allowed: unspecified (`0.0.0.0/8`, `::`), loopback (`127/8`, `::1`),
/// private (`10/8`, `172.16/12`, `192.168/16`, shared `100.64/10`), link-local (`169.254/16`, `fe80::/10`),
/// unique-local (`fc00::/7`), multicast and reserved ranges, and IPv4 embedded in IPv6 (mapped, NAT64) when the
/// IPv4 address is one of those.
public enum TargetAddress: Sendable, Hashable {
    /// An IPv4 address, in network order.
    case v4([UInt8])
    /// An IPv6 address, in network order.
    case v6([UInt8])

    /// Parses an IPv4 or IPv6 literal (IPv6 with or without brackets); nil for anything else, names included.
    public init?(literal: String) {
        var text = literal
        if text.hasPrefix("["), text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            self = .v4(withUnsafeBytes(of: &v4) { Array($0) })
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            self = .v6(withUnsafeBytes(of: &v6) { Array($0) })
        } else {
            return nil
        }
    }

    /// The address as text (IPv6 without brackets).
    public var text: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        switch self {
        case .v4(let bytes): bytes.withUnsafeBytes { _ = inet_ntop(AF_INET, $0.baseAddress, &buffer, socklen_t(buffer.count)) }
        case .v6(let bytes): bytes.withUnsafeBytes { _ = inet_ntop(AF_INET6, $0.baseAddress, &buffer, socklen_t(buffer.count)) }
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether this is a public unicast address (the only kind deliveries may reach unless private targets are allowed).
    public var isPublic: Bool {
        switch self {
        case .v4(let b): return TargetAddress.isPublicV4(b)
        case .v6(let b):
            if b[0 ..< 10].allSatisfy({ $0 == 0 }) && b[10] == 0xff && b[11] == 0xff { // ::ffff:a.b.c.d
                return TargetAddress.isPublicV4(Array(b[12 ..< 16]))
            }
            if b[0 ..< 12] == [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0] { // 64:ff9b::/96 (NAT64)
                return TargetAddress.isPublicV4(Array(b[12 ..< 16]))
            }
            if b[0 ..< 15].allSatisfy({ $0 == 0 }) { return false } // :: and ::1 (and the old IPv4-compatible form)
            if b[0] == 0xff { return false } // multicast
            if b[0] & 0xfe == 0xfc { return false } // fc00::/7 unique-local
            if b[0] == 0xfe && b[1] & 0xc0 == 0x80 { return false } // fe80::/10 link-local
            if b[0] == 0xfe && b[1] & 0xc0 == 0xc0 { return false } // fec0::/10 site-local (deprecated)
            if b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8 { return false } // 2001:db8::/32 documentation
            return true
        }
    }

    private static func isPublicV4(_ b: [UInt8]) -> Bool {
        switch b[0] {
        case 0, 10, 127: return false
        case 100 where b[1] & 0xc0 == 64: return false // 100.64/10 shared (carrier-grade NAT)
        case 169 where b[1] == 254: return false
        case 172 where b[1] & 0xf0 == 16: return false
        case 192 where b[1] == 168: return false
        case 192 where b[1] == 0 && b[2] == 0: return false // 192.0.0/24 protocol assignments
        case 198 where b[1] & 0xfe == 18: return false // 198.18/15 benchmarking
        case 224 ... 255: return false // multicast, reserved, broadcast
        default: return true
        }
    }

    /// Every address `host` resolves to (a literal resolves to itself), by the system resolver. Blocking: call it
    /// off the cooperative pool (the delivery thread does).
    public static func resolve(_ host: String) throws(WebhookTargetError) -> [TargetAddress] {
        if let literal = TargetAddress(literal: host) { return [literal] }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0, let first = list else {
            throw .unresolvable(host, String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(first) }
        var addresses: [TargetAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            if let sockaddr = entry.pointee.ai_addr {
                if entry.pointee.ai_family == AF_INET {
                    var address = sockaddr.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                    addresses.append(.v4(withUnsafeBytes(of: &address) { Array($0) }))
                } else if entry.pointee.ai_family == AF_INET6 {
                    var address = sockaddr.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                    addresses.append(.v6(withUnsafeBytes(of: &address) { Array($0) }))
                }
            }
            cursor = entry.pointee.ai_next
        }
        var unique: [TargetAddress] = []
        for address in addresses where !unique.contains(address) { unique.append(address) }
        guard !unique.isEmpty else { throw .unresolvable(host, "no addresses") }
        return unique
    }
}

/// Why a webhook target cannot be used.
public enum WebhookTargetError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The URL is not an absolute http(s) URL with a host.
    case invalidURL(String)
    /// The host is, or resolved to, an address deliveries may not reach.
    case forbiddenAddress(host: String, address: String)
    /// The host name did not resolve.
    case unresolvable(String, String)
    /// The host is a name for this machine (`localhost`).
    case localName(String)

    /// Whether the target was refused by policy (an address or name deliveries may not reach), not by the network.
    public var refusesTheTarget: Bool {
        switch self {
        case .forbiddenAddress, .localName: return true
        case .invalidURL, .unresolvable: return false
        }
    }

    public var description: String {
        switch self {
        case .invalidURL(let why): return why
        case .forbiddenAddress(let host, let address):
            return host == address ? "\(address) is a private, loopback, link-local or reserved address"
                : "\(host) resolves to \(address), a private, loopback, link-local or reserved address"
        case .unresolvable(let host, let why): return "\(host) does not resolve (\(why))"
        case .localName(let host): return "\(host) names this machine (a loopback address)"
        }
    }
}
