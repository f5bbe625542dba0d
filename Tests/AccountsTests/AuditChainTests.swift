import Accounts
import Foundation
import Testing

/// The chain's seals and its verifier, without a database: a whole chain passes; a changed entry, a seal made
/// without the key, a removed link and the wrong key are each found where they are.
@Suite(.timeLimit(.minutes(1)))
struct AuditChainTests {
    static let key: [UInt8] = Array(repeating: 7, count: 32)
    static let tenant = UUID()

    static func entry(_ id: Int64, action: String = "session.created") -> AuditEntry {
        AuditEntry(id: id, tenantID: tenant, actorKind: "api_key", actorID: "k1", action: action, targetKind: "user",
                   targetID: "usr_\(id)", requestID: "r\(id)", address: "192.0.2.1", createdMicros: 1_700_000_000_000_000 + id)
    }

    /// Entries 1...count sealed in order: (position, entry, seal).
    static func chain(_ count: Int, key: [UInt8] = key) -> [(Int64, AuditEntry, [UInt8])] {
        var previous = AuditChain.genesis
        return (1 ... Int64(count)).map { position in
            let entry = entry(position * 10)
            let seal = AuditChain.seal(entry, position: position, previous: previous, key: key)
            previous = seal
            return (position, entry, seal)
        }
    }

    static func findings(_ links: [(Int64, AuditEntry?, [UInt8])], key: [UInt8] = key,
                         ids: [Int64]? = nil) -> [AuditChainVerifier.Finding] {
        var verifier = AuditChainVerifier(key: key)
        return links.enumerated().flatMap { index, link in
            verifier.check(position: link.0, eventID: ids?[index] ?? link.1?.id ?? -1, entry: link.1, seal: link.2)
        }
    }

    @Test func aWholeChainPasses() {
        #expect(Self.findings(Self.chain(50).map { ($0.0, $0.1, $0.2) }).isEmpty)
    }

    @Test func aChangedEntryIsFoundAtItsPositionOnly() {
        var links = Self.chain(20).map { ($0.0, Optional($0.1), $0.2) }
        links[6].1 = Self.entry(70, action: "session.revoked")
        #expect(Self.findings(links) == [.sealMismatch(position: 7, eventID: 70)])
    }

    @Test func eachFieldIsCovered() {
        let original = Self.entry(5)
        let variants = [
            AuditEntry(id: 6, tenantID: original.tenantID, actorKind: original.actorKind, actorID: original.actorID, action: original.action,
                       targetKind: original.targetKind, targetID: original.targetID, requestID: original.requestID, address: original.address,
                       createdMicros: original.createdMicros),
            AuditEntry(id: 5, tenantID: original.tenantID, actorKind: original.actorKind, actorID: original.actorID, action: original.action,
                       targetKind: original.targetKind, targetID: original.targetID, requestID: original.requestID, address: "192.0.2.2",
                       createdMicros: original.createdMicros),
            AuditEntry(id: 5, tenantID: original.tenantID, actorKind: original.actorKind, actorID: original.actorID, action: original.action,
                       targetKind: original.targetKind, targetID: original.targetID, requestID: original.requestID, address: original.address,
                       createdMicros: original.createdMicros + 1),
            // Moving a byte from one field to its neighbour changes the length prefixes.
            AuditEntry(id: 5, tenantID: original.tenantID, actorKind: original.actorKind, actorID: original.actorID + "s",
                       action: String(original.action.dropFirst()), targetKind: original.targetKind, targetID: original.targetID,
                       requestID: original.requestID, address: original.address, createdMicros: original.createdMicros),
        ]
        let seal = AuditChain.seal(original, position: 1, previous: AuditChain.genesis, key: Self.key)
        for variant in variants {
            #expect(AuditChain.seal(variant, position: 1, previous: AuditChain.genesis, key: Self.key) != seal)
        }
        #expect(AuditChain.seal(original, position: 2, previous: AuditChain.genesis, key: Self.key) != seal)
    }

    @Test func aRemovedLinkIsAGapAndAMissingEntryIsNamed() {
        var links = Self.chain(10).map { ($0.0, Optional($0.1), $0.2) }
        links.remove(at: 4)
        // The link after the gap was sealed over the removed one's seal, so it no longer fits either.
        #expect(Self.findings(links) == [.gap(after: 4, next: 6), .sealMismatch(position: 6, eventID: 60)])
        var missing = Self.chain(10).map { ($0.0, Optional($0.1), $0.2) }
        missing[2].1 = nil
        #expect(Self.findings(missing, ids: missing.map { $0.0 * 10 }) == [.entryMissing(position: 3, eventID: 30)])
    }

    @Test func theWrongKeyBreaksEveryLinkAndRetentionKeepsTheRestChecked() {
        let links = Self.chain(5).map { ($0.0, Optional($0.1), $0.2) }
        #expect(Self.findings(links, key: Array(repeating: 8, count: 32)).count == 5)
        // Retention removed positions 1–3: checking starts at 4, and 5 is still checked against it.
        #expect(Self.findings(Array(links.dropFirst(3))).isEmpty)
        var tampered = Array(links.dropFirst(3))
        tampered[1].1 = Self.entry(51)
        #expect(Self.findings(tampered, ids: [40, 50]) == [.sealMismatch(position: 5, eventID: 50)])
    }
}
