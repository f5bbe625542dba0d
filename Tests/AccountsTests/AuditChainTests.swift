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

    /// Entries 1...count sealed in batches of `size`, as the sealer stores them: one seal per batch, with digests.
    static func batches(_ count: Int, size: Int) -> [AuditSealedBatch] {
        var previous = AuditChain.genesis
        var result: [AuditSealedBatch] = []
        for start in stride(from: 1, through: count, by: size) {
            let entries = (start ... min(start + size - 1, count)).map { entry(Int64($0) * 10) }
            let seal = AuditChain.seal(entries, first: Int64(start), previous: previous, key: key)
            result.append(AuditSealedBatch(position: Int64(start + entries.count - 1), eventIDs: entries.map(\.id),
                                           entries: entries, digests: entries.flatMap(AuditChain.digest), seal: seal))
            previous = seal
        }
        return result
    }

    static func findings(_ batches: [AuditSealedBatch], key: [UInt8] = key) -> [AuditChainVerifier.Finding] {
        var verifier = AuditChainVerifier(key: key)
        return batches.flatMap { verifier.check($0) }
    }

    static func replacing(_ batch: AuditSealedBatch, entries: [AuditEntry?]? = nil, digests: [UInt8]?? = nil,
                          seal: [UInt8]? = nil) -> AuditSealedBatch {
        AuditSealedBatch(position: batch.position, eventIDs: batch.eventIDs, entries: entries ?? batch.entries,
                         digests: digests ?? batch.digests, seal: seal ?? batch.seal)
    }

    @Test func batchesChainLikeSingleSealsAndPassWhole() {
        let batched = Self.batches(23, size: 5)
        #expect(Self.findings(batched).isEmpty)
        // The seal after each batch is the per-entry chain's seal at the same position.
        let single = Self.chain(23)
        for batch in batched { #expect(batch.seal == single[Int(batch.position) - 1].2) }
        var verifier = AuditChainVerifier(key: Self.key)
        for batch in batched { _ = verifier.check(batch) }
        #expect(verifier.checked == 23)
    }

    @Test func aChangedEntryInABatchIsNamedByItsDigest() {
        var batched = Self.batches(20, size: 8)
        var entries = batched[1].entries
        entries[2] = Self.entry(110, action: "session.revoked")
        batched[1] = Self.replacing(batched[1], entries: entries)
        #expect(Self.findings(batched) == [.sealMismatch(position: 11, eventID: 110)])
        // Changed with its digest recomputed (anyone can compute one): the batch's seal no longer fits.
        var digests = batched[1].digests ?? []
        digests.replaceSubrange(2 * AuditChain.digestLength ..< 3 * AuditChain.digestLength,
                                with: AuditChain.digest(Self.entry(110, action: "session.revoked")))
        batched[1] = Self.replacing(batched[1], digests: .some(digests))
        #expect(Self.findings(batched) == [.batchMismatch(first: 9, last: 16)])
    }

    @Test func aMissingEntryARemovedBatchAndTheWrongKeyAreFound() {
        var batched = Self.batches(12, size: 4)
        var entries = batched[0].entries
        entries[1] = nil
        batched[0] = Self.replacing(batched[0], entries: entries)
        #expect(Self.findings(batched) == [.entryMissing(position: 2, eventID: 20)])
        var removed = Self.batches(12, size: 4)
        removed.remove(at: 1)
        #expect(Self.findings(removed) == [.gap(after: 4, next: 9), .batchMismatch(first: 9, last: 12)])
        #expect(Self.findings(Self.batches(12, size: 4), key: Array(repeating: 9, count: 32)).count == 3)
        // After retention took the first batch, checking starts at the second and goes on from it.
        #expect(Self.findings(Array(Self.batches(12, size: 4).dropFirst())).isEmpty)
    }
}
