/*
 * chainfloor: the least a replicated, durable write can cost on this machine, measured with the same
 * process and message layout as fastblock's write path but none of its code.
 *
 * Every process is one thread with one epoll loop, written in C, doing only what the layout forces:
 *   node   receives writes from upstream; with --file it pwrites each into a file at its offset
 *          (in place, never forced); with --log it appends each to a log file; with --next it forwards
 *          the write downstream and passes acknowledgements back up; without --next it is the tail and
 *          answers itself: with --fsync only after an fdatasync of the log that covers the write. The
 *          fdatasync runs on a commit thread of its own, over every write appended since the last one
 *          (group commit), while the loop goes on receiving; it hands the answers back through an
 *          eventfd, as fastblock's GroupCommitter does. With --inline-commit the loop forces the log
 *          itself after each pass and receives nothing meanwhile (bigger batches, no thread hand-off).
 *          With --ack-to PORT the tail answers there (the gateway's --ack-listen PORT) instead of
 *          upstream: the acknowledgement skips the middle and the head.
 *   client keeps --qd writes (with --read, reads) of --bs bytes in flight against the first node for
 *          --seconds and prints what it got: I/Os, IOPS, MB/s, its own CPU per I/O, p50 and p99 latency.
 *          A read is served by the first node that has a --file (the head in the chain) from that file.
 *
 *   chain of three behind a gateway (fastblock's layout):
 *     client -> node(gateway) -> node(head, --file) -> node(middle, --file) -> node(tail, --file --log --fsync)
 *   one target writing to the page cache (tgtd's layout with its file LUN):
 *     client -> node(--file)
 *
 * Messages are a 24-byte header (id, offset, length) and the data; an acknowledgement is the header
 * with length 0. Sockets are non-blocking with output queues, so 1 MiB writes at depth 32 cannot
 * deadlock two nodes writing to each other.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

struct hdr { uint64_t id, offset, len; };

/* In a request's len: a read of (len & ~READ) bytes, which carries no data; its answer carries them. */
#define READ (1ULL << 63)

static size_t body(const struct hdr *h) { return (h->len & READ) ? 0 : h->len; }

struct buf { char *p; size_t len, cap, off; };

static void die(const char *what) { perror(what); exit(1); }

static void buf_put(struct buf *b, const void *src, size_t n) {
    if (b->off > 0 && b->off == b->len) { b->off = b->len = 0; }
    if (b->len + n > b->cap) {
        if (b->off > 0) { memmove(b->p, b->p + b->off, b->len - b->off); b->len -= b->off; b->off = 0; }
        if (b->len + n > b->cap) {
            b->cap = (b->len + n) * 2;
            if (!(b->p = realloc(b->p, b->cap))) die("realloc");
        }
    }
    if (src) memcpy(b->p + b->len, src, n); /* NULL: only make room, the caller fills it */
    b->len += n;
}

/* Writes what it can; returns 1 when the queue is empty. */
static int buf_flush(int fd, struct buf *b) {
    while (b->off < b->len) {
        ssize_t w = write(fd, b->p + b->off, b->len - b->off);
        if (w < 0) {
            if (errno == EAGAIN) return 0;
            die("write");
        }
        b->off += (size_t) w;
    }
    b->off = b->len = 0;
    return 1;
}

/* Reads what is there into b; returns 0 at EOF. */
static int buf_fill(int fd, struct buf *b) {
    for (;;) {
        /* Compact only when the space behind runs short: a 1 MiB message arrives in many reads. */
        if (b->off > 0 && (b->off == b->len || b->cap - b->len < 65536)) {
            memmove(b->p, b->p + b->off, b->len - b->off); b->len -= b->off; b->off = 0;
        }
        if (b->cap - b->len < 65536) {
            b->cap = b->cap * 2 + 65536;
            if (!(b->p = realloc(b->p, b->cap))) die("realloc");
        }
        ssize_t r = read(fd, b->p + b->len, b->cap - b->len);
        if (r < 0) {
            if (errno == EAGAIN) return 1;
            if (errno == ECONNRESET) return 0; /* a peer that left with answers unread */
            die("read");
        }
        if (r == 0) return 0;
        b->len += (size_t) r;
        if (b->len < b->cap) return 1; /* a short read: the socket is empty */
    }
}

/* The next whole message in b, or NULL; advances past it. */
static struct hdr *next_msg(struct buf *b, char **data) {
    if (b->len - b->off < sizeof(struct hdr)) return NULL;
    struct hdr *h = (struct hdr *) (b->p + b->off);
    if (b->len - b->off < sizeof(struct hdr) + body(h)) return NULL;
    *data = b->p + b->off + sizeof(struct hdr);
    b->off += sizeof(struct hdr) + body(h);
    return h;
}

static void nonblock(int fd) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static int connect_to(int port) {
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    for (int i = 0; i < 200; i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(fd, (struct sockaddr *) &a, sizeof a) == 0) { nonblock(fd); return fd; }
        close(fd);
        usleep(50000);
    }
    die("connect");
    return -1;
}

/* A listening socket on 127.0.0.1:port (0: any free port); says which port on stdout. */
static int listen_on(int port) {
    int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (bind(ls, (struct sockaddr *) &a, sizeof a) || listen(ls, 1)) die("listen");
    socklen_t len = sizeof a;
    if (getsockname(ls, (struct sockaddr *) &a, &len)) die("getsockname");
    printf("listening %d\n", ntohs(a.sin_port)); /* --listen 0 picks a free port: this says which */
    fflush(stdout);
    return ls;
}

static int accept_on(int ls) {
    int fd = accept(ls, NULL, NULL);
    if (fd < 0) die("accept");
    close(ls);
    nonblock(fd);
    return fd;
}

static void full_pwrite(int fd, const char *p, size_t n, off_t at) {
    while (n > 0) {
        ssize_t w = pwrite(fd, p, n, at);
        if (w < 0) die("pwrite");
        p += w; n -= (size_t) w; at += w;
    }
}

static const char *opt(int argc, char **argv, const char *name, const char *dflt) {
    for (int i = 2; i < argc - 1; i++) if (!strcmp(argv[i], name)) return argv[i + 1];
    for (int i = 2; i < argc; i++) if (!strcmp(argv[i], name)) return "1";
    return dflt;
}

static void watch(int ep, int fd, int events) {
    struct epoll_event e = {.events = events, .data.fd = fd};
    if (epoll_ctl(ep, EPOLL_CTL_MOD, fd, &e) && (errno != ENOENT || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e))) die("epoll_ctl");
}

/* Passes every whole answer read from fd on to out; returns 0 at EOF. */
static int relay_answers(int fd, struct buf *in, struct buf *out) {
    if (!buf_fill(fd, in)) return 0;
    struct hdr *h; char *data;
    while ((h = next_msg(in, &data))) buf_put(out, h, sizeof *h + body(h));
    return 1;
}

/* The tail's group commit: answers of writes appended to the log wait in pending until a forced batch covers them. */
static pthread_mutex_t commit_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t commit_cv = PTHREAD_COND_INITIALIZER;
static struct buf pending, forced;
static int commit_log_fd, commit_event_fd;

static void *committer(void *unused) {
    struct buf batch = {0};
    (void) unused;
    for (;;) {
        pthread_mutex_lock(&commit_mu);
        while (pending.len == pending.off) pthread_cond_wait(&commit_cv, &commit_mu);
        buf_put(&batch, pending.p + pending.off, pending.len - pending.off);
        pending.off = pending.len = 0;
        pthread_mutex_unlock(&commit_mu);
        if (fdatasync(commit_log_fd)) die("fdatasync");
        pthread_mutex_lock(&commit_mu);
        buf_put(&forced, batch.p + batch.off, batch.len - batch.off);
        pthread_mutex_unlock(&commit_mu);
        batch.off = batch.len = 0;
        uint64_t one = 1;
        if (write(commit_event_fd, &one, sizeof one) != sizeof one) die("eventfd");
    }
    return NULL;
}

static int node(int argc, char **argv) {
    int port = atoi(opt(argc, argv, "--listen", "0"));
    int next = atoi(opt(argc, argv, "--next", "0"));
    const char *file = opt(argc, argv, "--file", NULL), *log = opt(argc, argv, "--log", NULL);
    int fsync_log = opt(argc, argv, "--fsync", NULL) != NULL;
    int ffd = file ? open(file, O_RDWR | O_CREAT | O_TRUNC, 0644) : -1;
    int lfd = log ? open(log, O_RDWR | O_CREAT | O_TRUNC, 0644) : -1;
    if ((file && ffd < 0) || (log && lfd < 0)) die("open");
    off_t log_end = 0;
    uint64_t prefill = strtoull(opt(argc, argv, "--prefill", "0"), NULL, 10);
    if (prefill && ffd >= 0) { /* data for reads to find, in the page cache as a warm target's would be */
        char *chunk = malloc(1 << 20);
        memset(chunk, 0xa5, 1 << 20);
        for (uint64_t at = 0; at < prefill; at += 1 << 20) full_pwrite(ffd, chunk, 1 << 20, (off_t) at);
        free(chunk);
    }
    /* --ack-listen (gateway) and --ack-to (tail): the tail answers the gateway directly, past the middle and head */
    const char *ack_listen = opt(argc, argv, "--ack-listen", NULL);
    int ack_to = atoi(opt(argc, argv, "--ack-to", "0"));
    int ls = listen_on(port);
    int acks_ls = ack_listen ? listen_on(atoi(ack_listen)) : -1;
    int up = accept_on(ls);
    int down = next ? connect_to(next) : -1;
    int acks_in = acks_ls >= 0 ? accept_on(acks_ls) : -1;
    int out = ack_to ? connect_to(ack_to) : up; /* where this node's answers go */
    int ep = epoll_create1(0);
    struct buf upin = {0}, upout = {0}, downin = {0}, downout = {0}, acks = {0}, acksin = {0};
    watch(ep, up, EPOLLIN);
    if (down >= 0) watch(ep, down, EPOLLIN);
    if (acks_in >= 0) watch(ep, acks_in, EPOLLIN);
    int inline_commit = opt(argc, argv, "--inline-commit", NULL) != NULL;
    if (fsync_log && lfd >= 0 && !inline_commit) {
        pthread_t t;
        commit_log_fd = lfd;
        commit_event_fd = eventfd(0, EFD_NONBLOCK);
        watch(ep, commit_event_fd, EPOLLIN);
        if (pthread_create(&t, NULL, committer, NULL)) die("pthread_create");
    }
    for (;;) {
        struct epoll_event ev[4];
        int n = epoll_wait(ep, ev, 4, -1);
        if (n < 0 && errno == EINTR) continue;
        for (int i = 0; i < n; i++) {
            int fd = ev[i].data.fd;
            if (fd == up && (ev[i].events & (EPOLLIN | EPOLLHUP))) {
                if (!buf_fill(up, &upin)) { pause(); return 0; } /* stay for the CPU count until killed */
                struct hdr *h; char *data;
                while ((h = next_msg(&upin, &data))) {
                    if ((h->len & READ) && ffd >= 0) { /* a read this node serves from its file */
                        size_t n = h->len & ~READ;
                        struct hdr r = {h->id, h->offset, n};
                        buf_put(&upout, &r, sizeof r);
                        buf_put(&upout, NULL, n);
                        if (pread(ffd, upout.p + upout.len - n, n, (off_t) h->offset) < 0) die("pread");
                        continue;
                    }
                    if (h->len & READ) { /* the gateway: pass it on */
                        buf_put(&downout, h, sizeof *h);
                        continue;
                    }
                    if (ffd >= 0) full_pwrite(ffd, data, h->len, (off_t) h->offset);
                    if (lfd >= 0) { full_pwrite(lfd, data, h->len, log_end); log_end += (off_t) h->len; }
                    if (down >= 0) {
                        buf_put(&downout, h, sizeof *h + h->len);
                    } else {
                        struct hdr a = {h->id, h->offset, 0};
                        buf_put(&acks, &a, sizeof a);
                    }
                }
            }
            if (fsync_log && !inline_commit && fd == commit_event_fd) { /* forced batches: their answers can go */
                uint64_t count;
                if (read(commit_event_fd, &count, sizeof count) < 0 && errno != EAGAIN) die("eventfd");
                pthread_mutex_lock(&commit_mu);
                buf_put(&upout, forced.p + forced.off, forced.len - forced.off);
                forced.off = forced.len = 0;
                pthread_mutex_unlock(&commit_mu);
            }
            if (ev[i].events & (EPOLLIN | EPOLLHUP)) { /* answers from downstream, or the tail's directly */
                if (fd == acks_in && !relay_answers(acks_in, &acksin, &upout)) { pause(); return 0; }
                if (fd == down && !relay_answers(down, &downin, &upout)) { pause(); return 0; }
            }
        }
        if (acks.len > acks.off) { /* the tail: answers wait for the commit thread, or go now without --fsync */
            if (fsync_log && lfd >= 0 && inline_commit) {
                /* --inline-commit: the loop itself forces what this pass appended, then answers */
                if (fdatasync(lfd)) die("fdatasync");
                buf_put(&upout, acks.p + acks.off, acks.len - acks.off);
            } else if (fsync_log && lfd >= 0) {
                pthread_mutex_lock(&commit_mu);
                buf_put(&pending, acks.p + acks.off, acks.len - acks.off);
                pthread_cond_signal(&commit_cv);
                pthread_mutex_unlock(&commit_mu);
            } else {
                buf_put(&upout, acks.p + acks.off, acks.len - acks.off);
            }
            acks.off = acks.len = 0;
        }
        if (out == up) {
            watch(ep, up, EPOLLIN | (buf_flush(up, &upout) ? 0 : EPOLLOUT));
        } else {
            watch(ep, out, buf_flush(out, &upout) ? 0 : EPOLLOUT);
        }
        if (down >= 0) watch(ep, down, EPOLLIN | (buf_flush(down, &downout) ? 0 : EPOLLOUT));
    }
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

/* Queues the next request: a write of bs bytes, or with reading a read of bs bytes. */
static void send_next(struct buf *out, uint64_t id, uint64_t off, size_t bs, int reading, const char *payload) {
    struct hdr h = {id, off, reading ? (READ | bs) : bs};
    buf_put(out, &h, sizeof h);
    if (!reading) buf_put(out, payload, bs);
}

static int client(int argc, char **argv) {
    int port = atoi(opt(argc, argv, "--connect", "0"));
    size_t bs = strtoull(opt(argc, argv, "--bs", "4096"), NULL, 10);
    int qd = atoi(opt(argc, argv, "--qd", "32"));
    double secs = atof(opt(argc, argv, "--seconds", "8")), ramp = atof(opt(argc, argv, "--ramp", "2"));
    uint64_t span = strtoull(opt(argc, argv, "--span", "536870912"), NULL, 10);
    int sequential = opt(argc, argv, "--sequential", NULL) != NULL;
    int reading = opt(argc, argv, "--read", NULL) != NULL;
    if (qd < 1 || qd > 4096 || bs == 0 || span < bs) {
        fprintf(stderr, "client: --qd must be 1..4096 and --span at least --bs\n");
        return 2;
    }
    int fd = connect_to(port);
    char *payload = malloc(bs);
    memset(payload, 0xa5, bs);
    struct buf in = {0}, out = {0};
    uint64_t id = 0, seq = 0, done = 0, rnd = 88172645463325252ULL;
    double sent[4096]; /* when request id was sent, at id % 4096: at most qd are out */
    size_t nlat = 0, caplat = 1 << 20;
    double *lat = malloc(caplat * sizeof *lat);
#define NEXT_OFFSET() (sequential ? (seq++ * bs) % span \
        : ((rnd ^= rnd << 13, rnd ^= rnd >> 7, rnd ^= rnd << 17) % (span / bs)) * bs)
    double start = now();
    for (int i = 0; i < qd; i++) {
        sent[id % 4096] = start;
        send_next(&out, id, NEXT_OFFSET(), bs, reading, payload);
        id++;
    }
    int ep = epoll_create1(0);
    watch(ep, fd, EPOLLIN | EPOLLOUT);
    double measure = start + ramp, end = measure + secs;
    struct rusage r0;
    int measuring = 0;
    for (;;) {
        struct epoll_event ev;
        epoll_wait(ep, &ev, 1, -1);
        if (!buf_fill(fd, &in)) die("eof");
        struct hdr *h; char *data;
        double t = now();
        if (!measuring && t >= measure) { measuring = 1; done = 0; nlat = 0; getrusage(RUSAGE_SELF, &r0); measure = t; }
        if (t >= end) break;
        while ((h = next_msg(&in, &data))) {
            done++;
            if (nlat == caplat) lat = realloc(lat, (caplat *= 2) * sizeof *lat);
            lat[nlat++] = t - sent[h->id % 4096];
            sent[id % 4096] = t;
            send_next(&out, id, NEXT_OFFSET(), bs, reading, payload);
            id++;
        }
        watch(ep, fd, EPOLLIN | (buf_flush(fd, &out) ? 0 : EPOLLOUT));
    }
    struct rusage r1;
    getrusage(RUSAGE_SELF, &r1);
    double el = now() - measure;
    double cpu = (r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) + (r1.ru_stime.tv_sec - r0.ru_stime.tv_sec)
            + ((r1.ru_utime.tv_usec - r0.ru_utime.tv_usec) + (r1.ru_stime.tv_usec - r0.ru_stime.tv_usec)) / 1e6;
    qsort(lat, nlat, sizeof *lat, cmp_double);
    printf("ios %llu seconds %.3f iops %.0f MBps %.1f client_cpu_us_per_io %.1f p50_us %.1f p99_us %.1f\n",
           (unsigned long long) done, el, done / el, done * (double) bs / el / 1e6, cpu * 1e6 / (done ? done : 1),
           nlat ? lat[nlat / 2] * 1e6 : 0, nlat ? lat[nlat * 99 / 100] * 1e6 : 0);
    return 0;
}

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN);
    if (argc >= 2 && !strcmp(argv[1], "node")) return node(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "client")) return client(argc, argv);
    fprintf(stderr, "usage: chainfloor node --listen PORT [--next PORT] [--file F [--prefill BYTES]] [--log F] [--fsync [--inline-commit]]\n"
                    "                      [--ack-listen PORT | --ack-to PORT]\n"
                    "       chainfloor client --connect PORT [--bs 4096] [--qd 32] [--seconds 8] [--ramp 2]"
                    " [--span BYTES] [--sequential] [--read]\n");
    return 2;
}
