/*
 * openloop: a minimal open-loop HTTP/1.1 load generator for the `quote` bench suite.
 *
 * Why it exists: the latency figure of the quote suite must come from a generator that sends on a
 * fixed schedule whatever the server does, and counts each request's latency from the time it was
 * *meant* to be sent (corrected for coordinated omission). None of the packaged tools does both:
 *   - wrk (Debian 4.1) is closed-loop: a connection sends its next request only after the previous
 *     response, so a server stall delays the requests that would have seen it and they are never
 *     counted (it is used for the max-throughput figure, where closed loop is what we want);
 *   - h2load --rps (nghttp2 1.52) keeps a schedule (late requests pile up as pending) but stamps
 *     each request when it is actually submitted, and with --h1 a connection holds one request at a
 *     time, so the wait behind a slow response is not counted;
 *   - hey -q throttles each worker closed-loop and times from the actual send (and is Go, heavier).
 * wrk2 and vegeta, which do, are not packaged. Checked on the 2-core box against a uWS server that
 * stalls 50 ms once a second, at 5,000 req/s: this generator's p99 was 42 ms (the stall, as it
 * should be), h2load --h1 --rps's per-request log gave 4.7 ms.
 *
 * What it does: one thread, epoll, `-c` keep-alive connections opened before the run. Request i
 * is due at start + i/rate (uniform spacing). A timerfd armed at the next due time (absolute,
 * timer slack set to 1 ns) wakes the loop; every request due by then is written at once, on an
 * idle connection if there is one, else pipelined on the least busy one (HTTP/1.1 pipelining,
 * answered in order), so a slow server never slows the schedule. A response completes when its
 * headers and Content-Length bytes have arrived; its latency is completion time - due time. The
 * generator's own lateness (write time - due time) is recorded beside it, so a reader can see how
 * much of a latency figure the generator itself could be. Requests due in the first `-w` seconds
 * warm up and are not recorded; every status is counted.
 *
 * Usage: openloop -p PORT -r RATE -d SECONDS -w WARMUP_SECONDS -c CONNECTIONS -f PATHS -o OUT
 *   [-h HOST] [-t DRAIN_SECONDS] [-b BODY] [-m MAX_CONNECTIONS]
 *   PATHS: request targets, one a line (`/quote?...`), used round-robin.
 *   BODY: a file whose bytes are POSTed to every target (Content-Type: application/json) instead
 *   of a GET, as JSON-RPC clients send.
 *   MAX_CONNECTIONS (default CONNECTIONS): when every connection is busy, a new one is opened (its
 *   connect counted in the request's latency) until there are this many; only then are requests
 *   pipelined. For servers that cannot take pipelined requests (uWebSockets.js with asynchronous
 *   answers closes such a connection), as clients that never pipeline do.
 *   OUT: binary, little-endian int64 pairs (latency ns, send lag ns), one per recorded response.
 *   stdout: one JSON summary line. A response still missing `-t` seconds after the last due time
 *   is counted as `incomplete` and recorded with its age then (a lower bound). Exit 1 on a socket
 *   error or a malformed response.
 * Build: gcc -O2 -Wall -o openloop openloop.c (Linux only: epoll, timerfd).
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
#include <strings.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define MAX_STATUS 600

typedef struct {
  int fd;
  char *in;
  size_t in_len, in_cap;
  char *out;
  size_t out_off, out_len, out_cap;
  uint32_t *queue; /* request indexes awaiting a response, FIFO */
  size_t q_head, q_count, q_cap;
  int epoll_out;
} conn_t;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *what) {
  fprintf(stderr, "openloop: %s: %s\n", what, errno ? strerror(errno) : "error");
  exit(1);
}

static void fail(const char *msg) {
  fprintf(stderr, "openloop: %s\n", msg);
  exit(1);
}

static int epfd;
static uint64_t start_ns, rate;
static uint64_t *lat_ns, *lag_ns; /* per request index; UINT64_MAX: not completed */
static uint64_t status_count[MAX_STATUS];
static uint64_t completed, pipelined, max_in_flight, in_flight;

static uint64_t due_ns(uint64_t i) { return start_ns + i * 1000000000ull / rate; }

static void set_epoll_out(conn_t *c, int on) {
  if (c->epoll_out == on) return;
  struct epoll_event ev = {.events = EPOLLIN | (on ? EPOLLOUT : 0), .data.ptr = c};
  if (epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev) != 0) die("epoll_ctl");
  c->epoll_out = on;
}

static void flush_out(conn_t *c) {
  while (c->out_off < c->out_len) {
    ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        set_epoll_out(c, 1);
        return;
      }
      die("send");
    }
    c->out_off += (size_t)n;
  }
  c->out_off = c->out_len = 0;
  set_epoll_out(c, 0);
}

static void send_request(conn_t *c, uint32_t idx, const char *req, size_t len) {
  if (c->q_count == c->q_cap) {
    uint32_t *q = malloc(2 * c->q_cap * sizeof *q);
    if (!q) die("malloc");
    for (size_t k = 0; k < c->q_count; k++) q[k] = c->queue[(c->q_head + k) % c->q_cap];
    free(c->queue);
    c->queue = q;
    c->q_head = 0;
    c->q_cap *= 2;
  }
  c->queue[(c->q_head + c->q_count) % c->q_cap] = idx;
  c->q_count++;
  if (++in_flight > max_in_flight) max_in_flight = in_flight;
  if (c->out_len + len > c->out_cap) {
    while (c->out_len + len > c->out_cap) c->out_cap *= 2;
    c->out = realloc(c->out, c->out_cap);
    if (!c->out) die("realloc");
  }
  memcpy(c->out + c->out_len, req, len);
  c->out_len += len;
  if (!c->epoll_out) flush_out(c);
}

/* Finds a header's value in [h, end) (case-insensitive name with the colon); NULL if absent. */
static const char *header_value(const char *h, const char *end, const char *name) {
  size_t nl = strlen(name);
  for (const char *line = h; line < end;) {
    const char *eol = memmem(line, (size_t)(end - line), "\r\n", 2);
    if (!eol) eol = end;
    if ((size_t)(eol - line) > nl && strncasecmp(line, name, nl) == 0) {
      const char *v = line + nl;
      while (v < eol && (*v == ' ' || *v == '\t')) v++;
      return v;
    }
    line = eol + 2;
  }
  return NULL;
}

static void parse_responses(conn_t *c, uint64_t t) {
  size_t pos = 0;
  for (;;) {
    const char *base = c->in + pos;
    size_t avail = c->in_len - pos;
    const char *hend = memmem(base, avail, "\r\n\r\n", 4);
    if (!hend) break;
    size_t hlen = (size_t)(hend - base) + 4;
    if (hlen < 12 || memcmp(base, "HTTP/1.", 7) != 0) fail("malformed response status line");
    int status = (base[9] - '0') * 100 + (base[10] - '0') * 10 + (base[11] - '0');
    if (status < 100 || status >= MAX_STATUS) fail("malformed response status code");
    const char *cl = header_value(base, hend, "content-length:");
    if (!cl) {
      if (header_value(base, hend, "transfer-encoding:")) fail("chunked responses are not supported");
      fail("response without Content-Length");
    }
    size_t body = strtoull(cl, NULL, 10);
    if (avail < hlen + body) break;
    if (c->q_count == 0) fail("response without a request");
    uint32_t idx = c->queue[c->q_head];
    c->q_head = (c->q_head + 1) % c->q_cap;
    c->q_count--;
    in_flight--;
    lat_ns[idx] = t - due_ns(idx);
    status_count[status]++;
    completed++;
    pos += hlen + body;
  }
  if (pos > 0) {
    memmove(c->in, c->in + pos, c->in_len - pos);
    c->in_len -= pos;
  }
}

static void read_conn(conn_t *c) {
  for (;;) {
    if (c->in_len == c->in_cap) {
      c->in_cap *= 2;
      c->in = realloc(c->in, c->in_cap);
      if (!c->in) die("realloc");
    }
    ssize_t n = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      die("recv");
    }
    if (n == 0) fail("server closed a connection");
    c->in_len += (size_t)n;
    parse_responses(c, now_ns());
  }
}

/* Connects `c` (blocking: a loopback connect takes microseconds), then makes it non-blocking and watched. */
static void open_conn(conn_t *c, const struct sockaddr_in *addr) {
  c->fd = socket(AF_INET, SOCK_STREAM, 0);
  if (c->fd < 0) die("socket");
  if (connect(c->fd, (const struct sockaddr *)addr, sizeof *addr) != 0) die("connect");
  int one = 1;
  setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
  c->in_cap = 65536;
  c->in = malloc(c->in_cap);
  c->out_cap = 4096;
  c->out = malloc(c->out_cap);
  c->q_cap = 64;
  c->queue = malloc(c->q_cap * sizeof *c->queue);
  if (!c->in || !c->out || !c->queue) die("malloc");
  struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
  if (epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev) != 0) die("epoll_ctl");
}

int main(int argc, char **argv) {
  const char *host = "127.0.0.1", *paths_file = NULL, *out_file = NULL, *body_file = NULL;
  int port = 0, conns = 32, max_conns = 0;
  double duration = 5, warmup = 1, drain = 5;
  int opt;
  while ((opt = getopt(argc, argv, "h:p:r:d:w:c:f:o:t:b:m:")) != -1) {
    switch (opt) {
      case 'h': host = optarg; break;
      case 'p': port = atoi(optarg); break;
      case 'r': rate = strtoull(optarg, NULL, 10); break;
      case 'd': duration = atof(optarg); break;
      case 'w': warmup = atof(optarg); break;
      case 'c': conns = atoi(optarg); break;
      case 'f': paths_file = optarg; break;
      case 'o': out_file = optarg; break;
      case 't': drain = atof(optarg); break;
      case 'b': body_file = optarg; break;
      case 'm': max_conns = atoi(optarg); break;
      default: fail("usage: openloop -p PORT -r RATE -d SECONDS -w WARMUP -c CONNECTIONS -f PATHS -o OUT [-h HOST] [-t DRAIN] [-b BODY] [-m MAX_CONNECTIONS]");
    }
  }
  if (port <= 0 || rate == 0 || duration <= 0 || warmup < 0 || conns <= 0 || !paths_file || !out_file) {
    fail("usage: openloop -p PORT -r RATE -d SECONDS -w WARMUP -c CONNECTIONS -f PATHS -o OUT [-h HOST] [-t DRAIN] [-b BODY] [-m MAX_CONNECTIONS]");
  }
  signal(SIGPIPE, SIG_IGN);
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

  /* The POST body, when there is one. */
  char *body = NULL;
  size_t body_len = 0;
  if (body_file) {
    FILE *bf = fopen(body_file, "rb");
    if (!bf) die(body_file);
    size_t cap_b = 4096;
    body = malloc(cap_b);
    size_t n;
    while ((n = fread(body + body_len, 1, cap_b - body_len, bf)) > 0) {
      body_len += n;
      if (body_len == cap_b) body = realloc(body, cap_b *= 2);
    }
    fclose(bf);
  }

  /* Requests, preformatted. */
  FILE *pf = fopen(paths_file, "r");
  if (!pf) die(paths_file);
  size_t npaths = 0, cap = 1024;
  char **reqs = malloc(cap * sizeof *reqs);
  size_t *req_len = malloc(cap * sizeof *req_len);
  char line[8192];
  while (fgets(line, sizeof line, pf)) {
    size_t l = strcspn(line, "\r\n");
    line[l] = 0;
    if (l == 0) continue;
    if (npaths == cap) {
      cap *= 2;
      reqs = realloc(reqs, cap * sizeof *reqs);
      req_len = realloc(req_len, cap * sizeof *req_len);
    }
    int n;
    if (body) {
      char *head;
      int h = asprintf(&head, "POST %s HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n", line, host,
                       port, body_len);
      if (h < 0) die("asprintf");
      reqs[npaths] = malloc((size_t)h + body_len);
      if (!reqs[npaths]) die("malloc");
      memcpy(reqs[npaths], head, (size_t)h);
      memcpy(reqs[npaths] + h, body, body_len);
      free(head);
      n = h + (int)body_len;
    } else {
      n = asprintf(&reqs[npaths], "GET %s HTTP/1.1\r\nHost: %s:%d\r\n\r\n", line, host, port);
      if (n < 0) die("asprintf");
    }
    req_len[npaths++] = (size_t)n;
  }
  fclose(pf);
  if (npaths == 0) fail("no request paths");

  uint64_t warm = (uint64_t)(warmup * (double)rate);
  uint64_t total = warm + (uint64_t)(duration * (double)rate);
  if (total > UINT32_MAX) fail("too many requests");
  lat_ns = malloc(total * sizeof *lat_ns);
  lag_ns = malloc(total * sizeof *lag_ns);
  if (!lat_ns || !lag_ns) die("malloc");
  for (uint64_t i = 0; i < total; i++) lat_ns[i] = UINT64_MAX;

  epfd = epoll_create1(0);
  if (epfd < 0) die("epoll_create1");
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) fail("host must be an IPv4 address");
  if (max_conns < conns) max_conns = conns;
  /* Room for every connection up front: epoll keeps pointers into this array. */
  conn_t *cs = calloc((size_t)max_conns, sizeof *cs);
  if (!cs) die("calloc");
  for (int k = 0; k < conns; k++) open_conn(&cs[k], &addr);
  int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
  if (tfd < 0) die("timerfd_create");
  struct epoll_event tev = {.events = EPOLLIN, .data.ptr = NULL};
  if (epoll_ctl(epfd, EPOLL_CTL_ADD, tfd, &tev) != 0) die("epoll_ctl");

  start_ns = now_ns() + 20000000ull; /* 20 ms after the connections are up */
  uint64_t next = 0, armed = 0, rr = 0;
  uint64_t last_due = due_ns(total - 1), drain_deadline = last_due + (uint64_t)(drain * 1e9);
  struct epoll_event evs[256];
  for (;;) {
    uint64_t t = now_ns();
    while (next < total && due_ns(next) <= t) {
      /* An idle connection if there is one (round-robin), else the one with the fewest waiting. */
      conn_t *c = NULL;
      for (int k = 0; k < conns; k++) {
        conn_t *cand = &cs[(rr + (uint64_t)k) % (uint64_t)conns];
        if (cand->q_count == 0) {
          c = cand;
          rr = (rr + (uint64_t)k + 1) % (uint64_t)conns;
          break;
        }
        if (!c || cand->q_count < c->q_count) c = cand;
      }
      if (c->q_count > 0 && conns < max_conns) {
        c = &cs[conns++];
        open_conn(c, &addr);
      }
      if (c->q_count > 0) pipelined++;
      size_t p = next % npaths;
      lag_ns[next] = now_ns() - due_ns(next);
      send_request(c, (uint32_t)next, reqs[p], req_len[p]);
      next++;
      t = now_ns();
    }
    if (next == total && in_flight == 0) break;
    if (next == total && t >= drain_deadline) break;
    uint64_t wake = next < total ? due_ns(next) : drain_deadline;
    if (wake != armed) {
      struct itimerspec its = {.it_value = {.tv_sec = (time_t)(wake / 1000000000ull), .tv_nsec = (long)(wake % 1000000000ull)}};
      if (timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL) != 0) die("timerfd_settime");
      armed = wake;
    }
    int n = epoll_wait(epfd, evs, 256, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      die("epoll_wait");
    }
    for (int k = 0; k < n; k++) {
      conn_t *c = evs[k].data.ptr;
      if (!c) {
        uint64_t x;
        if (read(tfd, &x, sizeof x) < 0 && errno != EAGAIN) die("read timerfd");
        continue;
      }
      if (evs[k].events & (EPOLLERR | EPOLLHUP)) fail("connection error or hang-up");
      if (evs[k].events & EPOLLIN) read_conn(c);
      if (evs[k].events & EPOLLOUT) flush_out(c);
    }
  }
  uint64_t end_ns = now_ns();
  double elapsed = (double)(end_ns - start_ns) / 1e9;

  FILE *of = fopen(out_file, "wb");
  if (!of) die(out_file);
  uint64_t recorded = 0, incomplete = 0;
  for (uint64_t i = warm; i < total; i++) {
    /* Still unanswered at the drain deadline: recorded at its age then, a lower bound. */
    if (lat_ns[i] == UINT64_MAX) {
      incomplete++;
      lat_ns[i] = end_ns - due_ns(i);
    }
    int64_t pair[2] = {(int64_t)lat_ns[i], (int64_t)lag_ns[i]};
    if (fwrite(pair, sizeof pair, 1, of) != 1) die("fwrite");
    recorded++;
  }
  if (fclose(of) != 0) die("fclose");

  uint64_t ok = status_count[200], other = completed - ok;
  printf("{\"rate\":%llu,\"warmupS\":%g,\"durationS\":%g,\"connections\":%d,\"scheduled\":%llu,\"completed\":%llu,"
         "\"recorded\":%llu,\"incomplete\":%llu,\"status200\":%llu,\"statusOther\":%llu,\"otherStatuses\":{",
         (unsigned long long)rate, warmup, duration, conns, (unsigned long long)total, (unsigned long long)completed,
         (unsigned long long)recorded, (unsigned long long)incomplete, (unsigned long long)ok, (unsigned long long)other);
  int first = 1;
  for (int s = 100; s < MAX_STATUS; s++) {
    if (s == 200 || status_count[s] == 0) continue;
    printf("%s\"%d\":%llu", first ? "" : ",", s, (unsigned long long)status_count[s]);
    first = 0;
  }
  printf("},\"pipelined\":%llu,\"maxInFlight\":%llu,\"elapsedS\":%.3f}\n", (unsigned long long)pipelined,
         (unsigned long long)max_in_flight, elapsed);
  return 0;
}
