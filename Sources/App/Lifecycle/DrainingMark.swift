import Coordination

/// The first thing shutdown does: readiness turns 503, so load balancers stop sending traffic while the rest
/// winds down. (Started last, so a service group, stopping in reverse order, tells it first.)
struct DrainingMark: Service {
    let readiness: Readiness

    func run() async {
        try? await gracefulShutdown()
        readiness.markDraining()
    }
}
