import Foundation

/// Why the feeds domain refused an operation. The service throws it; the routes turn it into a problem response
/// (`FeedProblems.swift`).
public enum FeedError: Error, Sendable, Equatable {
    /// The tenant has no feed at this address (another tenant's feed of the same name included).
    case noSuchFeed(FeedAddress)
    /// No item by this id in the feed; nil when the id is not even a UUID.
    case noSuchItem(UUID?)
}
