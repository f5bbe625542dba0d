import Crypto

/// The seals of a tenant's audit chain: seal n = HMAC-SHA256(key, seal n−1 ‖ n ‖ entry n), the first over 32 zero
/// bytes. Without the key (which the database never holds) a changed, inserted or removed entry cannot be given a
/// seal that fits. The chain runs through every entry, but only the seal of each batch's last entry is stored, with
/// each entry's digest (``digest(_:)``), so a verifier still names the entry that changed.
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

    /// The seal after `entries`, sealed one after another from `first` on, after `previous`.
    public static func seal(_ entries: [AuditEntry], first: Int64, previous: [UInt8], key: [UInt8]) -> [UInt8] {
        var seal = previous
        for (offset, entry) in entries.enumerated() {
            seal = AuditChain.seal(entry, position: first + Int64(offset), previous: seal, key: key)
        }
        return seal
    }

    /// Bytes of an entry's digest in a batch's `digests`.
    public static let digestLength = 16

    /// An entry's digest (unkeyed: it only says which entry changed; the seal is what cannot be forged).
    public static func digest(_ entry: AuditEntry) -> [UInt8] {
        Array(SHA256.hash(entry.canonicalBytes).prefix(digestLength))
    }
}

/// One stored seal: the entries it closes (in chain order, ending at `position`), their digests (nil for a seal of
/// one entry stored before batches), and the seal after the last.
public struct AuditSealedBatch: Sendable, Equatable {
    /// The last entry's position.
    public let position: Int64
    /// The entries' ids, in chain order.
    public let eventIDs: [Int64]
    /// The entries as stored now (nil: gone), in the same order.
    public let entries: [AuditEntry?]
    /// Each entry's ``AuditChain/digest(_:)`` when it was sealed, concatenated; nil for a seal of one entry.
    public let digests: [UInt8]?
    /// The seal after the last entry.
    public let seal: [UInt8]

    /// A stored seal and what it closes.
    public init(position: Int64, eventIDs: [Int64], entries: [AuditEntry?], digests: [UInt8]?, seal: [UInt8]) {
        self.position = position
        self.eventIDs = eventIDs
        self.entries = entries
        self.digests = digests
        self.seal = seal
    }

    /// The first entry's position.
    public var first: Int64 { position - Int64(eventIDs.count) + 1 }
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
        /// The seal closing positions `first` to `last` does not fit them, though each entry matches its digest:
        /// an entry and its digest were both changed, or the seal was not made with the key.
        case batchMismatch(first: Int64, last: Int64)

        public var description: String {
            switch self {
            case .sealMismatch(let position, let eventID):
                "position \(position): the seal does not match entry \(eventID) (changed, or not sealed with the key)"
            case .entryMissing(let position, let eventID):
                "position \(position): entry \(eventID) is missing"
            case .gap(let after, let next):
                "positions \(after + 1) to \(next - 1) are missing"
            case .batchMismatch(let first, let last):
                "positions \(first) to \(last): the seal does not match their entries (changed with their digests, or not sealed with the key)"
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

    /// Checks the next link: one entry and its seal (as stored before batches).
    public mutating func check(position: Int64, eventID: Int64, entry: AuditEntry?, seal: [UInt8]) -> [Finding] {
        check(AuditSealedBatch(position: position, eventIDs: [eventID], entries: [entry], digests: nil, seal: seal))
    }

    /// Checks the next stored seal and the entries it closes. The first checked is the chain's start when it starts
    /// at position 1; after retention it is taken as it stands (its predecessor is gone: its entries are checked
    /// against their digests, and every later seal against it).
    public mutating func check(_ batch: AuditSealedBatch) -> [Finding] {
        var findings: [Finding] = []
        defer {
            previous = batch.seal
            lastPosition = batch.position
            checked += batch.eventIDs.count
        }
        if let lastPosition, batch.first != lastPosition + 1 { findings.append(.gap(after: lastPosition, next: batch.first)) }
        var present: [AuditEntry] = []
        for (offset, id) in batch.eventIDs.enumerated() {
            let position = batch.first + Int64(offset)
            guard let entry = batch.entries[offset] else {
                findings.append(.entryMissing(position: position, eventID: id))
                continue
            }
            if entry.id != id {
                findings.append(.sealMismatch(position: position, eventID: id))
            } else if let digests = batch.digests {
                let start = offset * AuditChain.digestLength
                if digests.count < start + AuditChain.digestLength
                    || AuditChain.digest(entry) != Array(digests[start ..< start + AuditChain.digestLength]) {
                    findings.append(.sealMismatch(position: position, eventID: id))
                }
            }
            present.append(entry)
        }
        // After retention the first remaining seal's predecessor is gone; every later one is checked against it.
        guard let before = previous ?? (batch.first == 1 ? AuditChain.genesis : nil) else { return findings }
        guard present.count == batch.eventIDs.count, findings.allSatisfy({ if case .gap = $0 { true } else { false } }) else {
            return findings
        }
        if AuditChain.seal(present, first: batch.first, previous: before, key: key) != batch.seal {
            findings.append(batch.eventIDs.count == 1 ? .sealMismatch(position: batch.position, eventID: batch.eventIDs[0])
                                                      : .batchMismatch(first: batch.first, last: batch.position))
        }
        return findings
    }
}
