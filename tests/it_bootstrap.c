/**
 * @file it_bootstrap.c
 * @brief Integration test of the bootstraps (nm_bootstrap.h only): run it under `nmad-run -n N`, under a PMIx
 *        launcher (`mpirun -np N`), or alone (singleton).
 *
 * Every rank allgathers (rank, pid) and checks every entry, allgathers a larger pattern, and passes barriers.
 * With `--die R`, rank R kills itself (SIGKILL) after the first barrier; every other rank waits up to 15 s
 * (poll() on fault_fd, then poll_fault()) for the report of rank R, prints `rank X saw rank R fail`, checks
 * that a later barrier fails with -NM_ECLOSED, and exits 0.
 * Output: `PASS ...` / `FAIL ...` lines; exit status 0 only if everything passed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "../nmad/launcher/nm_bootstrap.h" /* private header: relative, so no extra -I is needed */

#include <nmad/nm_errno.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FAULT_WAIT_MS 15000
/* Bytes per rank in the second allgather: more than a socket buffer in total at 4 ranks, while the whole result
 * stays within 1 MiB per process at 1024 ranks. */
#define BIG_LEN_MAX 100000
#define BIG_TOTAL_MAX (1 << 20)

struct entry_s {
  int32_t rank;
  int32_t pid;
};

static int failures;

static void check(int ok, int rank, const char *what)
{
  printf("%s rank %d: %s\n", ok ? "PASS" : "FAIL", rank, what);
  fflush(stdout);
  if (!ok)
    failures++;
}

static int64_t now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int test_allgather_pid(struct nm_bootstrap_s *bs)
{
  struct entry_s mine = { .rank = bs->rank, .pid = (int32_t)getpid() };
  struct entry_s *all = calloc((size_t)bs->size, sizeof(*all));
  if (all == NULL)
    return -NM_ENOMEM;
  int rc = bs->ops->allgather(bs, &mine, sizeof(mine), all);
  int ok = rc == 0;
  for (int r = 0; ok && r < bs->size; r++) {
    if (all[r].rank != r || all[r].pid <= 0)
      ok = 0;
    for (int q = 0; ok && q < r; q++)
      if (all[q].pid == all[r].pid) /* every test launcher runs on one host */
        ok = 0;
  }
  if (ok && all[bs->rank].pid != (int32_t)getpid())
    ok = 0;
  char msg[96];
  snprintf(msg, sizeof(msg), "allgather of (rank, pid) over %d ranks (rc %d)", bs->size, rc);
  check(ok, bs->rank, msg);
  free(all);
  return ok ? 0 : -1;
}

static uint8_t pattern(int rank, size_t i)
{
  return (uint8_t)((size_t)rank * 31u + i * 7u);
}

static int test_allgather_big(struct nm_bootstrap_s *bs)
{
  const size_t BIG_LEN = BIG_TOTAL_MAX / (size_t)bs->size < BIG_LEN_MAX ? BIG_TOTAL_MAX / (size_t)bs->size : BIG_LEN_MAX;
  uint8_t *mine = malloc(BIG_LEN), *all = malloc(BIG_LEN * (size_t)bs->size);
  int ok = 0, rc = -NM_ENOMEM;
  if (mine && all) {
    for (size_t i = 0; i < BIG_LEN; i++)
      mine[i] = pattern(bs->rank, i);
    rc = bs->ops->allgather(bs, mine, BIG_LEN, all);
    ok = rc == 0;
    for (int r = 0; ok && r < bs->size; r++)
      for (size_t i = 0; ok && i < BIG_LEN; i++)
        if (all[(size_t)r * BIG_LEN + i] != pattern(r, i))
          ok = 0;
  }
  char msg[96];
  snprintf(msg, sizeof(msg), "allgather of %zu bytes per rank (rc %d)", BIG_LEN, rc);
  check(ok, bs->rank, msg);
  free(mine);
  free(all);
  return ok ? 0 : -1;
}

/* Wait for the report that rank @p dead failed. */
static void wait_fault(struct nm_bootstrap_s *bs, int dead)
{
  int64_t end = now_ms() + FAULT_WAIT_MS;
  for (;;) {
    int r = -1;
    int rc = bs->ops->poll_fault(bs, &r);
    if (rc == 1 && r == dead) {
      printf("rank %d saw rank %d fail\n", bs->rank, dead);
      check(1, bs->rank, "fault report of the dead rank");
      break;
    }
    if (rc == 1) {
      printf("rank %d: unexpected fault report for rank %d\n", bs->rank, r);
      check(0, bs->rank, "fault report names the dead rank");
      continue;
    }
    if (rc < 0) {
      printf("rank %d: poll_fault: %s\n", bs->rank, nm_strerror(rc));
      check(0, bs->rank, "poll_fault while waiting for the failure");
      return;
    }
    int64_t left = end - now_ms();
    if (left <= 0) {
      check(0, bs->rank, "fault report within 15 s");
      return;
    }
    int fd = bs->ops->fault_fd(bs);
    if (fd >= 0) {
      struct pollfd p = { .fd = fd, .events = POLLIN, .revents = 0 };
      (void)poll(&p, 1, (int)left);
    } else {
      (void)poll(NULL, 0, left < 10 ? (int)left : 10);
    }
  }
  int rc = bs->ops->barrier(bs);
  char msg[96];
  snprintf(msg, sizeof(msg), "barrier after the failure returns -NM_ECLOSED (rc %d)", rc);
  check(rc == -NM_ECLOSED, bs->rank, msg);
}

int main(int argc, char **argv)
{
  int die = -1;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--die") == 0 && i + 1 < argc) {
      char *end;
      long v = strtol(argv[++i], &end, 10);
      if (*end != '\0' || end == argv[i] || v < 0 || v > 1 << 20) {
        fprintf(stderr, "usage: %s [--die RANK]\n", argv[0]);
        return 2;
      }
      die = (int)v;
    } else {
      fprintf(stderr, "usage: %s [--die RANK]\n", argv[0]);
      return 2;
    }
  }
  setvbuf(stdout, NULL, _IOLBF, 0);

  struct nm_bootstrap_s bs;
  int rc = nm_bootstrap_select(&bs);
  if (rc) {
    printf("FAIL: nm_bootstrap_select: %s\n", nm_strerror(rc));
    return 1;
  }
  check(bs.rank >= 0 && bs.rank < bs.size, bs.rank, bs.ops->name);
  if (die >= bs.size) {
    printf("FAIL rank %d: --die %d is not a rank of a job of %d\n", bs.rank, die, bs.size);
    bs.ops->fini(&bs);
    return 2;
  }

  if (test_allgather_pid(&bs) == 0)
    (void)test_allgather_big(&bs);
  rc = bs.ops->barrier(&bs);
  check(rc == 0, bs.rank, "first barrier");

  if (die >= 0) {
    if (bs.rank == die) {
      printf("rank %d: dying now\n", bs.rank);
      fflush(stdout);
      raise(SIGKILL);
    }
    wait_fault(&bs, die);
  } else {
    int r;
    rc = bs.ops->poll_fault(&bs, &r);
    check(rc == 0, bs.rank, "no fault reported");
    rc = bs.ops->barrier(&bs);
    check(rc == 0, bs.rank, "second barrier");
  }
  rc = bs.ops->fini(&bs);
  check(rc == 0 || die >= 0, bs.rank, "fini");
  printf("%s rank %d\n", failures ? "FAIL" : "PASS", bs.rank);
  return failures ? 1 : 0;
}
