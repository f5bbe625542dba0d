import Crypto

/// The seals of a tenant's audit chain: seal n = HMAC-SHA256(key, seal n−1 ‖ n ‖ entry n), the first over 32 zero
/// bytes. Without the key (which the database never holds) a changed, inserted or removed entry cannot be given a
/// seal that fits.
public enum AuditChain {
    /// What precedes the first seal.
    public static let genesis = [UInt8](repeating: 0, count: 32)

    /// The seal of `entry` at `position`, after `previous`.
    public static func seal(_ entry: AuditEntry, position: Int64, previous: [UInt8], key: [UInt8]) -> [UInt8] {
        var message = previous
        withUnsafeBytes(of: position.bigEndian) { message += $0 }
        message += entry.canonicalBytes
        return HMACSHA256.authenticationCode(for: message, key: key)
    }
}

/// Checks a tenant's chain link by link, in position order, remembering only the last seal: a chain of any length
/// is checked in constant memory. Pure: the command that reads the links is `switchboard audit verify`.
public struct AuditChainVerifier {
    /// A break in the chain.
    public enum Finding: Equatable, Sendable, CustomStringConvertible {
        /// The seal at `position` does not fit entry `eventID` (changed, or sealed without the key).
        case sealMismatch(position: Int64, eventID: Int64)
        /// The seal at `position` names entry `eventID`, which is gone.
        case entryMissing(position: Int64, eventID: Int64)
        /// Positions after `after` up to `next` are missing (seals removed).
        case gap(after: Int64, next: Int64)

        public var description: String {
            switch self {
            case .sealMismatch(let position, let eventID):
                "position \(position): the seal does not match entry \(eventID) (changed, or not sealed with the key)"
            case .entryMissing(let position, let eventID):
                "position \(position): entry \(eventID) is missing"
            case .gap(let after, let next):
                "positions \(after + 1) to \(next - 1) are missing"
            }
        }
    }

    let key: [UInt8]
    private var previous: [UInt8]?
    private var lastPosition: Int64?
    /// Links checked so far.
    public private(set) var checked = 0

    /// A verifier with the chain's key.
    public init(key: [UInt8]) {
        self.key = key
    }

    /// Checks the next link. The first link checked is the chain's start when its position is 1; after retention it
    /// is taken as it stands (its predecessors are gone) and the chain is checked from there.
    public mutating func check(position: Int64, eventID: Int64, entry: AuditEntry?, seal: [UInt8]) -> [Finding] {
        var findings: [Finding] = []
        defer {
            previous = seal
            lastPosition = position
            checked += 1
        }
        if let lastPosition, position != lastPosition + 1 { findings.append(.gap(after: lastPosition, next: position)) }
        guard let entry else { return findings + [.entryMissing(position: position, eventID: eventID)] }
        let before = previous ?? (position == 1 ? AuditChain.genesis : nil)
        // After retention the first remaining link's predecessor is gone; its own seal cannot be recomputed, but
        // every later one is checked against it.
        guard let before else { return findings }
        if entry.id != eventID || AuditChain.seal(entry, position: position, previous: before, key: key) != seal {
            findings.append(.sealMismatch(position: position, eventID: eventID))
        }
        return findings
    }
}
