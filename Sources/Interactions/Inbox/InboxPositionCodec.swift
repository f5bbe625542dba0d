import Crypto
import Foundation
import HTTPServer

/// Inbox positions as the SSE `id` a client holds: sealed with AES-256-GCM under a key all replicas share, and bound
/// to the tenant, so a client can neither read them (they hold transaction ids, which would tell of other tenants'
/// activity) nor forge or alter one, nor use one tenant's position on another's stream. Text: base64url, unpadded.
struct InboxPositionCodec: Sendable {
    private let cipher: AES256GCM

    /// A codec under `key` (32 bytes); nil otherwise.
    init?(key: [UInt8]) {
        guard let cipher = AES256GCM(key: key) else { return nil }
        self.cipher = cipher
    }

    /// `position`, sealed for `tenant`.
    func encode(_ position: InboxPosition, tenant: UUID) -> String {
        Base64URL.encode(cipher.seal(Self.bytes(of: position), authenticating: Self.binding(tenant)))
    }

    /// The position `text` holds, when it was sealed by this service for `tenant`; nil otherwise.
    func decode(_ text: String, tenant: UUID) -> InboxPosition? {
        guard text.utf8.count <= 2048, let sealed = Base64URL.decode(text),
              let plain = cipher.open(sealed, authenticating: Self.binding(tenant)) else { return nil }
        return Self.position(from: plain)
    }

    private static func binding(_ tenant: UUID) -> [UInt8] { Array("inbox:\(tenant.lowercased)".utf8) }

    /// Version 1: clause count, then per clause xmin, xmax − xmin, running count, each running id − xmin, and the
    /// bound + 1 (0: none); all as LEB128 varints.
    static func bytes(of position: InboxPosition) -> [UInt8] {
        var bytes: [UInt8] = [1]
        put(UInt64(position.clauses.count), into: &bytes)
        for clause in position.clauses {
            let snapshot = clause.snapshot
            put(snapshot.xmin, into: &bytes)
            put(snapshot.xmax - snapshot.xmin, into: &bytes)
            put(UInt64(snapshot.inProgress.count), into: &bytes)
            for xid in snapshot.inProgress { put(xid - snapshot.xmin, into: &bytes) }
            put(clause.through.map { UInt64($0) + 1 } ?? 0, into: &bytes)
        }
        return bytes
    }

    static func position(from bytes: [UInt8]) -> InboxPosition? {
        var reader = bytes[...]
        guard reader.popFirst() == 1, let count = take(&reader), (1 ... UInt64(InboxPosition.maximumClauses)).contains(count)
        else { return nil }
        var clauses: [InboxPosition.Clause] = []
        for _ in 0 ..< count {
            guard let xmin = take(&reader), let span = take(&reader), let running = take(&reader),
                  running <= span, running <= 100_000 else { return nil }
            var xids: [UInt64] = []
            for _ in 0 ..< running {
                guard let offset = take(&reader), offset < span else { return nil }
                xids.append(xmin + offset)
            }
            guard let bound = take(&reader), bound <= UInt64(Int64.max) else { return nil }
            let (xmax, overflow) = xmin.addingReportingOverflow(span)
            guard !overflow else { return nil }
            clauses.append(.init(snapshot: XidSnapshot(xmin: xmin, xmax: xmax, inProgress: xids),
                                 through: bound == 0 ? nil : Int64(bound - 1)))
        }
        return reader.isEmpty ? InboxPosition(clauses: clauses) : nil
    }

    private static func put(_ value: UInt64, into bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    private static func take(_ bytes: inout ArraySlice<UInt8>) -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while let byte = bytes.popFirst() {
            guard shift < 64 else { return nil }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        return nil
    }
}
