@testable import Accounts
import Foundation
import Testing
import TestSupport

/// A principal keeps its fields in one shared object, yet is a value: two made apart from the same fields are equal
/// and hash alike, and a difference in any field (tenant, kind of credential, its id, user, role or expiry) makes
/// them differ, as the memberwise struct they replace did.
@Suite(.timeLimit(.minutes(2))) struct PrincipalValueTests {
    @Test(arguments: [UInt64(1), 2, 3])
    func principalsAreEqualExactlyWhenTheirFieldsAre(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let tenants = [UUID(), UUID()], ids = [UUID(), UUID()], users = ["alice", "bob", "alice "]
        let expiries: [Date?] = [nil, Date(timeIntervalSince1970: 1_000), Date(timeIntervalSince1970: 2_000)]
        typealias Fields = (tenant: UUID, credential: Principal.Credential, expires: Date?)
        func fields() -> Fields {
            let credential: Principal.Credential = Bool.random(using: &random)
                ? .apiKey(keyID: ids.randomElement(using: &random)!)
                : .session(sessionID: ids.randomElement(using: &random)!, userID: users.randomElement(using: &random)!,
                           role: Role.allCases.randomElement(using: &random)!)
            return (tenants.randomElement(using: &random)!, credential, expiries.randomElement(using: &random)!)
        }
        var equalPairs = 0
        for _ in 0 ..< 3000 {
            let (a, b) = (fields(), fields())
            let one = Principal(tenantID: a.tenant, credential: a.credential, expiresAt: a.expires)
            let other = Principal(tenantID: b.tenant, credential: b.credential, expiresAt: b.expires)
            let same = a.tenant == b.tenant && a.credential == b.credential && a.expires == b.expires
            #expect((one == other) == same, "seed \(seed): \(a) and \(b)")
            if same {
                #expect(one.hashValue == other.hashValue)
                equalPairs += 1
            }
            let copy = one
            #expect(copy == one && copy.tenantID == a.tenant && copy.credential == a.credential && copy.expiresAt == a.expires)
        }
        #expect(equalPairs > 20)
    }
}
