import Foundation

/// An endpoint URL taken apart for delivery: scheme, host, port, and the text curl is given.
public struct WebhookTarget: Sendable, Equatable {
    /// `http` or `https`.
    public let scheme: String
    /// The host as written (a name, or an IP literal without brackets).
    public let host: String
    /// The port (the scheme's default when the URL names none).
    public let port: Int
    /// The URL as registered.
    public let url: String

    /// Parses and checks an endpoint URL: absolute http(s), a host, no user info, at most 2048 bytes. With
    /// `allowPrivate` false, an IP literal must be a public address (names are checked when delivering, on what
    /// they resolve to then).
    public init(_ url: String, allowPrivate: Bool) throws(WebhookTargetError) {
        guard url.utf8.count <= 2048 else { throw .invalidURL("url must be at most 2048 bytes.") }
        guard !url.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7f || $0.value > 0x7e }),
              let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
              scheme == "http" || scheme == "https" else {
            throw .invalidURL("url must be an absolute http or https URL.")
        }
        guard let rawHost = components.host, !rawHost.isEmpty else { throw .invalidURL("url must name a host.") }
        guard components.user == nil, components.password == nil else {
            throw .invalidURL("url must not carry credentials; authenticate the webhook by its signature.")
        }
        if let port = components.port, !(1 ... 65535).contains(port) { throw .invalidURL("url's port must be 1 to 65535.") }
        var host = rawHost
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if let literal = TargetAddress(literal: host), !allowPrivate, !literal.isPublic {
            throw .forbiddenAddress(host: host, address: literal.text)
        }
        if !allowPrivate, WebhookTarget.namesThisMachine(host) { throw .localName(host.lowercased()) }
        self.scheme = scheme
        self.host = host.lowercased()
        self.port = components.port ?? (scheme == "https" ? 443 : 80)
        self.url = url
    }

    /// Whether `host` is a name that always means this machine (RFC 6761: `localhost` and names under it), so it is
    /// refused when registered rather than only when delivered to.
    static func namesThisMachine(_ host: String) -> Bool {
        var name = host.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        return name == "localhost" || name.hasSuffix(".localhost") || name == "localhost.localdomain"
    }

    /// The host's addresses now, all of which must be allowed: one forbidden address refuses the delivery (a name
    /// that resolves to both a public and a private address is treated as hostile). Blocking.
    public func allowedAddresses(allowPrivate: Bool) throws(WebhookTargetError) -> [TargetAddress] {
        let addresses = try TargetAddress.resolve(host)
        if !allowPrivate, let forbidden = addresses.first(where: { !$0.isPublic }) {
            throw .forbiddenAddress(host: host, address: forbidden.text)
        }
        return addresses
    }
}
