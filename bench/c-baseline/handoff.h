/*
 * A request handed from libmicrohttpd's thread to a pool of worker threads and back, for the C baselines
 * (baseline.c's /async, message.c's POST), which include this file.
 *
 * The handler suspends the connection and queues the request (handoff_suspend); a worker takes it (handoff_take),
 * does its work and hands it back (handoff_return), which resumes the connection; libmicrohttpd calls the handler
 * again, which finds it returned (handoff_returned) and answers. A request embeds a struct handoff as its first
 * member, so the worker gets the request back by a cast.
 *
 * Needs <microhttpd.h>, <pthread.h>, <stdatomic.h>, <stdbool.h> and <time.h> included first.
 */

struct handoff {
    struct MHD_Connection *connection;
    bool suspended;       /* guarded by handoff_flags_lock: set right before MHD_suspend_connection, cleared on resume */
    bool returned;        /* guarded by handoff_flags_lock: the worker is done with it */
    bool counted;         /* counted in handoff_in_flight (libmicrohttpd's thread only) */
    struct handoff *next; /* guarded by handoff_queue_lock */
};

/* One lock guards every request's suspended/returned flags: held only for a few instructions. */
static pthread_mutex_t handoff_flags_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t handoff_queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t handoff_queue_cond = PTHREAD_COND_INITIALIZER;
static struct handoff *handoff_head, *handoff_tail; /* guarded by handoff_queue_lock */
static bool handoff_stopped;                        /* guarded by handoff_queue_lock */
/* Requests suspended and not yet handled again: shutdown waits for none to be left. */
static atomic_long handoff_in_flight;

/* Suspends h's connection and queues h for a worker (libmicrohttpd's thread; the handler then returns MHD_YES). */
static void handoff_suspend(struct handoff *h) {
    h->counted = true;
    atomic_fetch_add_explicit(&handoff_in_flight, 1, memory_order_relaxed);
    pthread_mutex_lock(&handoff_flags_lock);
    h->suspended = true;
    MHD_suspend_connection(h->connection);
    pthread_mutex_unlock(&handoff_flags_lock);
    h->next = NULL;
    pthread_mutex_lock(&handoff_queue_lock);
    if (handoff_tail)
        handoff_tail->next = h;
    else
        handoff_head = h;
    handoff_tail = h;
    pthread_cond_signal(&handoff_queue_cond);
    pthread_mutex_unlock(&handoff_queue_lock);
}

/* Whether a worker has handed h back (libmicrohttpd's thread, when the handler is called again). */
static bool handoff_returned(struct handoff *h) {
    pthread_mutex_lock(&handoff_flags_lock);
    bool returned = h->returned;
    pthread_mutex_unlock(&handoff_flags_lock);
    if (returned && h->counted) {
        h->counted = false;
        atomic_fetch_sub_explicit(&handoff_in_flight, 1, memory_order_relaxed);
    }
    return returned;
}

/* h's request ends (the completion callback): a request still counted (it cannot normally be) is counted out. */
static void handoff_completed(struct handoff *h) {
    if (h->counted)
        atomic_fetch_sub_explicit(&handoff_in_flight, 1, memory_order_relaxed);
}

/* The next queued request, waiting for one (a worker); NULL once handoff_stop was called and the queue is empty. */
static struct handoff *handoff_take(void) {
    pthread_mutex_lock(&handoff_queue_lock);
    while (!handoff_head && !handoff_stopped)
        pthread_cond_wait(&handoff_queue_cond, &handoff_queue_lock);
    struct handoff *h = handoff_head;
    if (h) {
        handoff_head = h->next;
        if (!handoff_head)
            handoff_tail = NULL;
    }
    pthread_mutex_unlock(&handoff_queue_lock);
    return h;
}

/* Hands h back and resumes its connection (a worker). h must not be touched after this: the connection, and with
 * it the request, may be freed as soon as it is resumed. */
static void handoff_return(struct handoff *h) {
    struct MHD_Connection *resume = NULL;
    pthread_mutex_lock(&handoff_flags_lock);
    h->returned = true;
    if (h->suspended) {
        h->suspended = false;
        resume = h->connection;
    }
    pthread_mutex_unlock(&handoff_flags_lock);
    if (resume)
        MHD_resume_connection(resume);
}

/* Waits (about 5 s at most) until no request is suspended; the number still suspended then. */
static long handoff_settle(void) {
    struct timespec nap = {0, 5 * 1000 * 1000};
    for (int i = 0; i < 1000 && atomic_load(&handoff_in_flight) > 0; i++)
        nanosleep(&nap, NULL);
    return atomic_load(&handoff_in_flight);
}

/* Lets the workers end once the queue is empty. */
static void handoff_stop(void) {
    pthread_mutex_lock(&handoff_queue_lock);
    handoff_stopped = true;
    pthread_cond_broadcast(&handoff_queue_cond);
    pthread_mutex_unlock(&handoff_queue_lock);
}
