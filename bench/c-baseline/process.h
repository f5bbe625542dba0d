/*
 * Process set-up shared by the C baselines (baseline.c, message.c, sse.c), which include this file.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>

/* Raises the soft limit on descriptors to the hard one (thousands of connections); says so when it cannot. Returns
 * the soft limit in force afterwards (0 when it cannot be read). */
static unsigned long long process_raise_descriptor_limit(const char *name) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return 0;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0) fprintf(stderr, "%s: cannot raise RLIMIT_NOFILE\n", name);
    }
    return getrlimit(RLIMIT_NOFILE, &rl) == 0 ? (unsigned long long)rl.rlim_cur : 0;
}

/* Blocks SIGTERM and SIGINT in every thread started from now on (main waits for them with sigwait on `stop_set`)
 * and ignores SIGPIPE. */
static void process_block_stop_signals(sigset_t *stop_set) {
    sigemptyset(stop_set);
    sigaddset(stop_set, SIGTERM);
    sigaddset(stop_set, SIGINT);
    pthread_sigmask(SIG_BLOCK, stop_set, NULL);
    signal(SIGPIPE, SIG_IGN);
}
