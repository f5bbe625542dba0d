/// The notices this process sends, followed until they come back through its own listener.
///
/// A write here runs ``FeedFreshness/changed(_:)`` itself once it commits, so its notice coming back must not retire
/// the feed again (that would only reload pages loaded after the write). And Postgres hands a committed notice to
/// every listener at once, so once it is back here the other replicas have it too: a writer waits for it
/// (``awaitEcho(_:writer:)``, bounded by the caller) before acknowledging the write.
extension FeedFreshness {
    /// Where one of this process's notices is.
    enum Echo {
        /// Sent (its transaction may not have committed yet), not seen back.
        case expected
        /// Seen back before its writer waited for it.
        case arrived
        /// Not seen back, and its writer waits.
        case awaited(Writer)
    }

    /// A write is about to send `notice` (registered before the commit: the echo may come back before the writer
    /// waits).
    mutating func expectEcho(_ notice: String) {
        echoes[notice] = .expected
    }

    /// The listener read `notice`, about `feed`. Another replica's notice (or one of ours nobody follows any more)
    /// retires the feed; our own followed notice does not, and hands back its writer if it waits.
    mutating func noticed(_ notice: String, about feed: FeedAddress) -> Writer? {
        switch echoes[notice] {
        case .expected?:
            echoes[notice] = .arrived
            return nil
        case .awaited(let writer)?:
            echoes[notice] = nil
            return writer
        case .arrived?, nil:
            changed(feed)
            return nil
        }
    }

    /// `writer` waits for `notice` to come back; hands it back at once when it already has (or is not followed).
    mutating func awaitEcho(_ notice: String, writer: Writer) -> Writer? {
        guard case .expected? = echoes[notice] else {
            echoes[notice] = nil
            return writer
        }
        echoes[notice] = .awaited(writer)
        return nil
    }

    /// Stops following `notice` (its write failed or sent nothing, or its writer waited long enough); hands back its
    /// writer if it waits. Should it still come back, it counts as a change.
    mutating func forgetEcho(_ notice: String) -> Writer? {
        guard case .awaited(let writer)? = echoes.removeValue(forKey: notice) else { return nil }
        return writer
    }
}
