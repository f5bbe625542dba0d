import Coordination
import Foundation
import Glibc

/// Resolves host names on a thread of its own.
///
/// Given a host name, libpq calls `getaddrinfo` inside `PQconnectPoll`, blocking the calling thread for as long as
/// DNS takes. Resolving first and passing numeric `hostaddr` values keeps connecting non-blocking.
enum HostResolver {
    /// The numeric addresses of `host`, in resolver order, without duplicates. Cancellation abandons the lookup.
    static func addresses(of host: String) async throws -> [String] {
        let slot = ResultSlot()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard slot.install(continuation) else { return }
                let thread = Thread { slot.resume(with: Result { try lookUp(host) }) }
                thread.name = "postgres-resolve"
                thread.start()
            }
        } onCancel: {
            slot.resume(with: .failure(CancellationError()))
        }
    }

    /// Whether libpq can use `host` without a lookup: a socket directory, an abstract socket, or an IP address.
    static func needsNoLookup(_ host: String) -> Bool {
        if host.hasPrefix("/") || host.hasPrefix("@") { return true }
        var buffer = [UInt8](repeating: 0, count: 16)
        return inet_pton(AF_INET, host, &buffer) == 1 || inet_pton(AF_INET6, host, &buffer) == 1
    }

    private static func lookUp(_ host: String) throws(PostgresError) -> [String] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0, let list else {
            throw PostgresError(.connection, "cannot resolve \"\(host)\": \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var addresses: [String] = []
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let current = entry {
            var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            let named = getnameinfo(
                current.pointee.ai_addr, current.pointee.ai_addrlen, &text, socklen_t(text.count), nil, 0,
                NI_NUMERICHOST)
            if named == 0 {
                let address = text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
                if !addresses.contains(address) { addresses.append(address) }
            }
            entry = current.pointee.ai_next
        }
        return addresses
    }
}

/// A continuation resumed exactly once, by whichever comes first: the lookup thread or a cancellation.
private final class ResultSlot: Sendable {
    private enum State {
        case empty
        case waiting(CheckedContinuation<[String], any Error>)
        case cancelledEarly
        case done
    }

    /// Guards the continuation until it has been resumed.
    private let state = Locked(State.empty)

    /// Stores the continuation; returns false (after resuming it) if cancellation came first.
    func install(_ continuation: CheckedContinuation<[String], any Error>) -> Bool {
        let cancelled = state.withLock { state in
            guard case .empty = state else { return true }
            state = .waiting(continuation)
            return false
        }
        if cancelled { continuation.resume(throwing: CancellationError()) }
        return !cancelled
    }

    func resume(with result: Result<[String], any Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<[String], any Error>? in
            switch state {
            case .empty:
                state = .cancelledEarly
                return nil
            case .waiting(let continuation):
                state = .done
                return continuation
            case .cancelledEarly, .done:
                return nil
            }
        }
        continuation?.resume(with: result)
    }
}

extension ConnectionParameters {
    /// These parameters with a single host name replaced by its addresses (`host` repeated for TLS verification,
    /// `hostaddr` numeric), so libpq tries each address without a lookup of its own. Host lists, socket paths,
    /// IP addresses and an explicit `hostaddr` are left to libpq as they are.
    func resolvingHostName() async throws -> ConnectionParameters {
        let environment = ProcessInfo.processInfo.environment
        guard value(of: "hostaddr") == nil, environment["PGHOSTADDR"] == nil,
              let host = value(of: "host") ?? environment["PGHOST"],
              !host.isEmpty, !host.contains(","), !HostResolver.needsNoLookup(host)
        else { return self }
        let addresses = try await HostResolver.addresses(of: host)
        guard !addresses.isEmpty else { throw PostgresError(.connection, "\"\(host)\" has no addresses") }
        var resolved = self
        resolved.set("host", Array(repeating: host, count: addresses.count).joined(separator: ","))
        resolved.set("hostaddr", addresses.joined(separator: ","))
        return resolved
    }
}
