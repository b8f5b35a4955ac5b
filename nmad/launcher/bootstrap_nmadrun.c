/**
 * @file bootstrap_nmadrun.c
 * @brief Child side of the local launcher `nmad-run`: collectives and fault reports over the stream socket
 *        inherited as NMAD_RUN_FD (frames in nmad_run_proto.h).
 *
 * Collectives are blocking request/reply. The launcher may also send FAULT frames at any time; they are queued
 * here, each dead rank once, and handed out by poll_fault(). A FAULT read while a collective waits fails that
 * collective with -NM_ECLOSED: the dead rank will never contribute, and the launcher sends no result after it.
 * An abort sends one ABORT frame and then waits for nmad-run to terminate the process. Not thread-safe: one
 * thread uses a bootstrap at a time, except abort(), which only writes one small frame (atomic on a stream
 * socket) and never reads.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* POLLRDHUP */
#endif
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "nm_bootstrap.h"
#include "nmad_run_proto.h"

#include <nmad/nm_errno.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/** After sending ABORT, how long the rank waits for nmad-run's SIGTERM (or SIGKILL, 0.3 s later) before it
 *  exits by itself: nmad-run acts within milliseconds; this bound only serves a launcher that does not. */
#define NM_ABORT_WAIT_MS 3000

struct nmadrun_priv_s {
  int fd;           /**< socket to nmad-run */
  int eof;          /**< the launcher closed the socket */
  uint8_t *dead;    /**< dead[r] != 0 once rank r is known dead (size entries) */
  int *queue;       /**< dead ranks not yet returned by poll_fault(): a FIFO of at most size entries */
  int q_head, q_len;
  int waiting;      /**< a collective waits for its reply while progressing the core (barrier_progress) */
  int stashed;      /**< poll_fault(), run by that progress, read the reply first: kept here for the collective */
  struct nmad_run_hdr_s stash_h;
  void *stash_payload;
};

/* Parse a decimal int in [min, max] from environment variable @p var; message on stderr on error. */
static int env_int(const char *var, long min, long max, int *out)
{
  const char *s = getenv(var);
  if (s == NULL || *s == '\0') {
    fprintf(stderr, "nmad: %s is not set (expected by the nmad-run bootstrap)\n", var);
    return -NM_EINVAL;
  }
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < min || v > max) {
    fprintf(stderr, "nmad: bad value '%s' for %s: expected an integer in [%ld, %ld]\n", s, var, min, max);
    return -NM_EINVAL;
  }
  *out = (int)v;
  return 0;
}

/* The job key nmad-run made for this job (nmad_run.c). */
static int env_key(uint64_t *key)
{
  const char *s = getenv(NMAD_RUN_KEY_ENV);
  if (s == NULL || nmad_run_key_parse(s, key)) {
    fprintf(stderr, "nmad: %s is %s (expected 16 hex digits from nmad-run)\n", NMAD_RUN_KEY_ENV,
            s ? "malformed" : "not set");
    return -NM_EINVAL;
  }
  return 0;
}

static void record_dead(struct nmadrun_priv_s *p, int size, uint32_t rank)
{
  if (rank >= (uint32_t)size || p->dead[rank])
    return;
  p->dead[rank] = 1;
  p->queue[(p->q_head + p->q_len) % size] = (int)rank;
  p->q_len++;
}

static int any_dead(const struct nmadrun_priv_s *p, int size)
{
  for (int r = 0; r < size; r++)
    if (p->dead[r])
      return 1;
  return 0;
}

static int nmadrun_init(struct nm_bootstrap_s *bs)
{
  int fd, rank, size, rc;
  if ((rc = env_int("NMAD_RUN_FD", 0, INT_MAX, &fd)) || (rc = env_int("NMAD_RUN_SIZE", 1, INT_MAX / 2, &size)) ||
      (rc = env_int("NMAD_RUN_RANK", 0, (long)size - 1, &rank)) || (rc = env_key(&bs->job_key)))
    return rc;
  int type = 0;
  socklen_t tlen = sizeof(type);
  errno = 0;
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen) != 0 || type != SOCK_STREAM) {
    fprintf(stderr, "nmad: NMAD_RUN_FD=%d is not a stream socket inherited from nmad-run (%s)\n", fd,
            errno ? strerror(errno) : "wrong socket type");
    return -NM_EINVAL;
  }
  /* Programs this process exec's must not hold the launcher connection open. */
  int fl = fcntl(fd, F_GETFD);
  if (fl >= 0)
    (void)fcntl(fd, F_SETFD, fl | FD_CLOEXEC);

  struct nmadrun_priv_s *p = calloc(1, sizeof(*p));
  if (p == NULL)
    return -NM_ENOMEM;
  p->dead = calloc((size_t)size, 1);
  p->queue = calloc((size_t)size, sizeof(int));
  if (p->dead == NULL || p->queue == NULL) {
    free(p->dead);
    free(p->queue);
    free(p);
    return -NM_ENOMEM;
  }
  p->fd = fd;
  bs->rank = rank;
  bs->size = size;
  bs->priv = p;
  return 0;
}

/* Send a collective request and wait for its reply; a FAULT before the reply fails it. With @p progress, the wait
 * calls it between polls of the socket (nm_bootstrap_idle()) instead of blocking in the read. */
static int collective(struct nm_bootstrap_s *bs, uint32_t type, const void *mine, size_t len, void *all,
                      int (*progress)(void *), void *arg)
{
  struct nmadrun_priv_s *p = bs->priv;
  if (p->eof)
    return -NM_ECLOSED;
  if (any_dead(p, bs->size))
    return -NM_ECLOSED;
  int rc = nmad_run_send(p->fd, type, (uint32_t)bs->rank, mine, len);
  if (rc) {
    if (rc == -NM_ECLOSED)
      p->eof = 1;
    return rc;
  }
  unsigned backoff_us = 0;
  /* The progress may run the core's fault check, which reads this socket too (poll_fault()): a reply it reads is
   * stashed for us, not taken for a protocol error (that lost the reply and hung the barrier, 1 run in 20-40 of
   * tests/it_mcast_seg over tcp). */
  p->waiting = progress != NULL;
  while (progress && !p->stashed && !nm_bootstrap_idle(p->fd, progress, arg, &backoff_us))
    ;
  p->waiting = 0;
  for (;;) {
    struct nmad_run_hdr_s h;
    void *payload;
    if (p->stashed) {
      h = p->stash_h;
      payload = p->stash_payload;
      p->stashed = 0;
      p->stash_payload = NULL;
    } else if ((rc = nmad_run_recv(p->fd, &h, &payload))) {
      if (rc == -NM_ECLOSED)
        p->eof = 1;
      return rc;
    }
    if (h.type == NMAD_RUN_MSG_FAULT) {
      record_dead(p, bs->size, h.arg);
      return -NM_ECLOSED;
    }
    if (h.type != type || h.len != (uint64_t)len * (uint64_t)bs->size || h.arg != (uint32_t)bs->size) {
      free(payload);
      return -NM_EPROTO;
    }
    if (h.len > 0)
      memcpy(all, payload, (size_t)h.len);
    free(payload);
    return 0;
  }
}

static int nmadrun_allgather(struct nm_bootstrap_s *bs, const void *mine, size_t len, void *all)
{
  if (len > 0 && (mine == NULL || all == NULL))
    return -NM_EINVAL;
  if ((uint64_t)len * (uint64_t)bs->size > NMAD_RUN_PROTO_MAX_PAYLOAD)
    return -NM_EINVAL;
  return collective(bs, NMAD_RUN_MSG_ALLGATHER, mine, len, all, NULL, NULL);
}

static int nmadrun_barrier(struct nm_bootstrap_s *bs)
{
  return collective(bs, NMAD_RUN_MSG_BARRIER, NULL, 0, NULL, NULL, NULL);
}

static int nmadrun_barrier_progress(struct nm_bootstrap_s *bs, int (*progress)(void *), void *arg)
{
  return collective(bs, NMAD_RUN_MSG_BARRIER, NULL, 0, NULL, progress, arg);
}

static int nmadrun_poll_fault(struct nm_bootstrap_s *bs, int *rank)
{
  struct nmadrun_priv_s *p = bs->priv;
  /* Drain what the launcher already sent, without blocking. */
  while (!p->eof) {
    struct pollfd pfd = { .fd = p->fd, .events = POLLIN, .revents = 0 };
    int n = poll(&pfd, 1, 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0 || !(pfd.revents & (POLLIN | POLLHUP | POLLERR)))
      break;
    struct nmad_run_hdr_s h;
    void *payload;
    int rc = nmad_run_recv(p->fd, &h, &payload);
    if (rc == -NM_ECLOSED) {
      p->eof = 1;
      break;
    }
    if (rc)
      return rc;
    if (h.type != NMAD_RUN_MSG_FAULT) {
      if (p->waiting && !p->stashed) { /* the reply of the collective whose wait runs us: keep it for it */
        p->stash_h = h;
        p->stash_payload = payload;
        p->stashed = 1;
        break;
      }
      free(payload);
      return -NM_EPROTO; /* no collective is pending: only FAULT frames may arrive */
    }
    free(payload);
    record_dead(p, bs->size, h.arg);
  }
  if (p->q_len > 0) {
    *rank = p->queue[p->q_head];
    p->q_head = (p->q_head + 1) % bs->size;
    p->q_len--;
    return 1;
  }
  return p->eof ? -NM_ECLOSED : 0;
}

static int nmadrun_fault_fd(struct nm_bootstrap_s *bs)
{
  struct nmadrun_priv_s *p = bs->priv;
  return p->fd;
}

static int64_t mono_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Exiting right after the frame would let the other ranks see this rank die (and report that as their own
 * failure) before nmad-run has read the request: wait to be terminated instead. Only hang-ups wake us, so
 * FAULT frames stay in the socket for a thread that may be reading it. */
static void wait_for_termination(int fd)
{
  int64_t end = mono_ms() + NM_ABORT_WAIT_MS;
  for (int64_t left = NM_ABORT_WAIT_MS; left > 0; left = end - mono_ms()) {
    struct pollfd pfd = { .fd = fd, .events = POLLRDHUP, .revents = 0 };
    int n = poll(&pfd, 1, (int)left);
    if (n > 0 && (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)))
      return; /* nmad-run is gone: nobody will terminate us */
    if (n < 0 && errno != EINTR)
      return;
  }
}

static int nmadrun_abort(struct nm_bootstrap_s *bs, int code)
{
  struct nmadrun_priv_s *p = bs->priv;
  if (p->eof)
    return -NM_ECLOSED;
  uint8_t payload[NMAD_RUN_ABORT_LEN];
  nmad_run_abort_encode(payload, (int32_t)code);
  int rc = nmad_run_send(p->fd, NMAD_RUN_MSG_ABORT, (uint32_t)bs->rank, payload, sizeof(payload));
  if (rc == 0)
    wait_for_termination(p->fd);
  return rc;
}

static int nmadrun_fini(struct nm_bootstrap_s *bs)
{
  struct nmadrun_priv_s *p = bs->priv;
  int rc = 0;
  if (p == NULL)
    return 0;
  if (!p->eof)
    rc = nmad_run_send(p->fd, NMAD_RUN_MSG_FINI, (uint32_t)bs->rank, NULL, 0);
  close(p->fd);
  free(p->dead);
  free(p->queue);
  free(p->stash_payload);
  free(p);
  bs->priv = NULL;
  return rc;
}

const struct nm_bootstrap_ops_s nm_bootstrap_nmadrun_ops = {
  .name = "nmad-run",
  .init = nmadrun_init,
  .allgather = nmadrun_allgather,
  .barrier = nmadrun_barrier,
  .barrier_progress = nmadrun_barrier_progress,
  .poll_fault = nmadrun_poll_fault,
  .fault_fd = nmadrun_fault_fd,
  .abort = nmadrun_abort,
  .fini = nmadrun_fini,
};
