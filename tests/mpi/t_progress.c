/* Non-blocking operations progress while the application computes (NMAD_PROGRESS=thread): after starting an
 * operation, the ranks make no MPI call at all until they see its result in their buffers; only the progress
 * thread can get it there (answer rendezvous, forward a broadcast down its tree, combine reductions).
 *   1. MPI_Ibcast of 1 MiB (rendezvous) from each root in turn: the other ranks watch their buffer.
 *   2. MPI_Iallreduce (sum, 4 B and 256 KiB): every rank watches its result; nobody is inside MPI meanwhile.
 *   3. MPI_Irecv of a 4 MiB rendezvous message: the receiver watches its buffer, the sender waits.
 * Each watch is bounded by a deadline that only turns a hang into a failure (no timing is asserted). Then the
 * request is completed with MPI_Wait and the whole result checked.
 * Without a progress thread the watches cannot end; the program then exits 77 (skip) rather than hang. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int rank, size;
static int local_fail, any_fail;
#include "t_check.h"

#define WATCH_LIMIT_S 60.0
#define BCAST_LEN (1 << 20)
#define P2P_LEN (4 << 20)

/* One section: every rank agrees on the outcome; rank 0 prints it. */
static void section(const char *what)
{
  int f = local_fail ? 1 : 0, g = 0;
  MPI_Allreduce(&f, &g, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0)
    printf("%s %s\n", g ? "FAIL" : "PASS", what);
  fflush(stdout);
  any_fail |= g;
  local_fail = 0;
}

/* The application's computation: spin without MPI until @p ready says so. @return 1 when it did. */
static int compute_until(int (*ready)(const void *), const void *arg)
{
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    if (ready(arg))
      return 1;
    clock_gettime(CLOCK_MONOTONIC, &t);
    if ((double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec) > WATCH_LIMIT_S)
      return 0;
  }
}

static unsigned char pattern(int root, size_t i) { return (unsigned char)(i * 13 + (size_t)root * 101 + 1); }

struct bytes_watch_s {
  const volatile unsigned char *buf;
  size_t len;
  int root;
};

/* The whole buffer holds the pattern (a rendezvous may write it in any order). */
static int bytes_arrived(const void *arg)
{
  const struct bytes_watch_s *w = arg;
  for (size_t i = w->len; i-- > 0;)
    if (w->buf[i] != pattern(w->root, i))
      return 0;
  return 1;
}

static void test_ibcast(void)
{
  unsigned char *buf = malloc(BCAST_LEN);
  for (int root = 0; root < size; root++) {
    for (size_t i = 0; i < BCAST_LEN; i++)
      buf[i] = rank == root ? pattern(root, i) : 0;
    MPI_Request req;
    CHECK(MPI_Ibcast(buf, BCAST_LEN, MPI_BYTE, root, MPI_COMM_WORLD, &req) == MPI_SUCCESS, "Ibcast posted");
    if (rank != root) {
      struct bytes_watch_s w = {buf, BCAST_LEN, root};
      CHECK(compute_until(bytes_arrived, &w), "Ibcast data arrived while computing (root %d)", root);
    }
    CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS, "Ibcast wait");
    struct bytes_watch_s w = {buf, BCAST_LEN, root};
    CHECK(bytes_arrived(&w), "Ibcast data from root %d", root);
  }
  free(buf);
  section("Ibcast of 1 MiB arrives while every non-root computes");
}

struct ints_watch_s {
  const volatile int *buf;
  int n;
  int expect;
};

static int ints_arrived(const void *arg)
{
  const struct ints_watch_s *w = arg;
  for (int i = w->n; i-- > 0;)
    if (w->buf[i] != w->expect + i)
      return 0;
  return 1;
}

static void test_iallreduce(void)
{
  const int counts[] = {1, 64 * 1024};
  for (int k = 0; k < 2; k++) {
    int n = counts[k];
    int *in = malloc(sizeof(int) * (size_t)n), *out = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++) {
      in[i] = rank + 1 + i;
      out[i] = -1;
    }
    /* sum over ranks of (r + 1 + i) = size * (size + 1) / 2 + size * i; watched as expect + i with size == 1 */
    int base = size * (size + 1) / 2;
    MPI_Request req;
    CHECK(MPI_Iallreduce(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req) == MPI_SUCCESS, "Iallreduce posted");
    if (size == 1) {
      CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS, "Iallreduce wait");
    } else {
      /* the last element is base + size * (n - 1): watch for it, then check every element after the wait */
      struct ints_watch_s w = {out + n - 1, 1, base + size * (n - 1)};
      CHECK(compute_until(ints_arrived, &w), "Iallreduce result arrived while every rank computes (%d ints)", n);
      CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS, "Iallreduce wait");
    }
    for (int i = 0; i < n; i++)
      CHECK(out[i] == base + size * i, "Iallreduce element %d: %d, expected %d", i, out[i], base + size * i);
    free(in);
    free(out);
  }
  section("Iallreduce completes while no rank is inside MPI");
}

static void test_p2p(void)
{
  if (size < 2)
    return; /* needs a peer */
  unsigned char *buf = malloc(P2P_LEN);
  MPI_Request req;
  if (rank == 0) {
    for (size_t i = 0; i < P2P_LEN; i++)
      buf[i] = pattern(7, i);
    CHECK(MPI_Isend(buf, P2P_LEN, MPI_BYTE, 1, 5, MPI_COMM_WORLD, &req) == MPI_SUCCESS, "Isend");
    CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS, "Isend wait");
  } else if (rank == 1) {
    memset(buf, 0, P2P_LEN);
    CHECK(MPI_Irecv(buf, P2P_LEN, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &req) == MPI_SUCCESS, "Irecv");
    struct bytes_watch_s w = {buf, P2P_LEN, 7};
    CHECK(compute_until(bytes_arrived, &w), "4 MiB rendezvous arrived while the receiver computes");
    MPI_Status st;
    CHECK(MPI_Wait(&req, &st) == MPI_SUCCESS, "Irecv wait");
    int count;
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK(count == P2P_LEN && st.MPI_SOURCE == 0 && st.MPI_TAG == 5, "Irecv status");
  }
  free(buf);
  section("a 4 MiB rendezvous receive completes while the receiver computes");
}

int main(int argc, char **argv)
{
  const char *mode = getenv("NMAD_PROGRESS");
  if (!mode || strcmp(mode, "thread") != 0) {
    fprintf(stderr, "t_progress: SKIP: needs NMAD_PROGRESS=thread (nothing progresses a computing rank otherwise)\n");
    return 77;
  }
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  test_ibcast();
  test_iallreduce();
  test_p2p();
  MPI_Finalize();
  return any_fail;
}
