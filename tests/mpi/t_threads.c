/* MPI_THREAD_MULTIPLE (issue 16 deliverable 3): several threads of each rank call MPI at once.
 *   - MPI_Init_thread(MULTIPLE) provides MULTIPLE; MPI_Query_thread agrees; MPI_Is_thread_main is true on the
 *     main thread only.
 *   - T_WORKERS threads per rank, each on its own communicator (a duplicate of its own duplicate of WORLD, made by
 *     the thread itself: concurrent MPI_Comm_dup of different communicators) and its own tag, run ring exchanges
 *     (Isend to the right, Irecv from the left, Waitall), with messages across the rendezvous threshold, plus a
 *     wildcard receive (ANY_SOURCE, ANY_TAG), a blocking MPI_Probe + MPI_Recv sized by MPI_Get_count, an
 *     MPI_Iprobe loop and an MPI_Sendrecv; every payload derives from (sender, thread, iteration) and is checked.
 *   - one more thread runs non-blocking collectives (Iallreduce, Ibcast from a rotating root, Ibarrier) on its own
 *     communicator at the same time, results checked.
 * No timing is asserted; a hang is caught by the launcher's time limit (tests/mpi/run.sh). */
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;
static int local_fail;
static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;
#include "t_check.h"

#define T_WORKERS 4
#define T_ITERS 120
#define T_COLL_ITERS 60
#define T_SMALL 64
#define T_LARGE (96 * 1024) /* above the rendezvous threshold */

/* CHECK() counts into local_fail: the threads share it under a mutex of their own (not MPI's). */
#define TCHECK(cond, ...)                                                                                         \
  do {                                                                                                           \
    if (!(cond)) {                                                                                               \
      pthread_mutex_lock(&fail_lock);                                                                            \
      CHECK(cond, __VA_ARGS__);                                                                                  \
      pthread_mutex_unlock(&fail_lock);                                                                          \
    }                                                                                                            \
  } while (0)

struct worker_s {
  int id;
  MPI_Comm base; /* made by the main thread; the worker duplicates it itself */
  int is_main;   /* what MPI_Is_thread_main said in the thread */
};

static unsigned char byte_of(int src, int t, int it, size_t i)
{
  return (unsigned char)(src * 31 + t * 7 + it * 13 + (int)(i % 251));
}

static void fill(unsigned char *b, size_t len, int src, int t, int it)
{
  for (size_t i = 0; i < len; i++)
    b[i] = byte_of(src, t, it, i);
}

static int bad_at(const unsigned char *b, size_t len, int src, int t, int it)
{
  for (size_t i = 0; i < len; i++)
    if (b[i] != byte_of(src, t, it, i))
      return (int)i;
  return -1;
}

static void *worker(void *arg)
{
  struct worker_s *w = arg;
  MPI_Is_thread_main(&w->is_main);
  MPI_Comm comm;
  if (MPI_Comm_dup(w->base, &comm) != MPI_SUCCESS) {
    TCHECK(0, "thread %d: MPI_Comm_dup failed", w->id);
    return NULL;
  }
  const int right = (rank + 1) % size, left = (rank + size - 1) % size, tag = 100 + w->id;
  unsigned char *sbuf = malloc(T_LARGE), *rbuf = malloc(T_LARGE);
  for (int it = 0; it < T_ITERS; it++) {
    size_t len = it % 8 == 3 ? T_LARGE : (size_t)(T_SMALL + it);
    fill(sbuf, len, rank, w->id, it);
    memset(rbuf, 0, len);
    MPI_Status st;
    int kind = it % 5;
    if (kind == 0 || kind == 1) { /* Isend / Irecv / Waitall */
      MPI_Request rq[2];
      MPI_Irecv(rbuf, (int)len, MPI_BYTE, left, tag, comm, &rq[0]);
      MPI_Isend(sbuf, (int)len, MPI_BYTE, right, tag, comm, &rq[1]);
      MPI_Status sts[2];
      MPI_Waitall(2, rq, sts);
      st = sts[0];
    } else if (kind == 2) { /* wildcard receive on the thread's own communicator */
      MPI_Request rq;
      MPI_Irecv(rbuf, T_LARGE, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &rq);
      MPI_Send(sbuf, (int)len, MPI_BYTE, right, tag, comm);
      MPI_Wait(&rq, &st);
      TCHECK(st.MPI_SOURCE == left && st.MPI_TAG == tag, "thread %d it %d: wildcard got source %d tag %d", w->id,
             it, st.MPI_SOURCE, st.MPI_TAG);
    } else if (kind == 3) { /* blocking probe, then a receive of exactly the probed size */
      MPI_Request rq;
      MPI_Isend(sbuf, (int)len, MPI_BYTE, right, tag, comm, &rq);
      MPI_Probe(left, tag, comm, &st);
      int n = -1;
      MPI_Get_count(&st, MPI_BYTE, &n);
      TCHECK(n == (int)len, "thread %d it %d: probe says %d bytes, %zu sent", w->id, it, n, len);
      MPI_Recv(rbuf, n < 0 ? 0 : n, MPI_BYTE, left, tag, comm, &st);
      MPI_Wait(&rq, MPI_STATUS_IGNORE);
    } else { /* Iprobe until found, then Sendrecv-free receive; a Sendrecv next */
      MPI_Request rq;
      MPI_Isend(sbuf, (int)len, MPI_BYTE, right, tag, comm, &rq);
      int flag = 0;
      while (!flag)
        MPI_Iprobe(MPI_ANY_SOURCE, tag, comm, &flag, &st);
      TCHECK(st.MPI_SOURCE == left, "thread %d it %d: iprobe source %d", w->id, it, st.MPI_SOURCE);
      MPI_Recv(rbuf, T_LARGE, MPI_BYTE, st.MPI_SOURCE, tag, comm, &st);
      MPI_Wait(&rq, MPI_STATUS_IGNORE);
      int out = rank * 1000 + it, in = -1;
      MPI_Sendrecv(&out, 1, MPI_INT, right, tag + 50, &in, 1, MPI_INT, left, tag + 50, comm, MPI_STATUS_IGNORE);
      TCHECK(in == left * 1000 + it, "thread %d it %d: sendrecv got %d", w->id, it, in);
    }
    int n = -1;
    MPI_Get_count(&st, MPI_BYTE, &n);
    TCHECK(n == (int)len, "thread %d it %d: %d bytes received, %zu expected", w->id, it, n, len);
    int at = bad_at(rbuf, len, left, w->id, it);
    TCHECK(at < 0, "thread %d it %d: byte %d of %zu wrong (from rank %d)", w->id, it, at, len, left);
  }
  free(sbuf);
  free(rbuf);
  MPI_Comm_free(&comm);
  return NULL;
}

/* Non-blocking collectives on the thread's own communicator while the workers exchange. */
static void *collectives(void *arg)
{
  struct worker_s *w = arg;
  MPI_Comm comm;
  if (MPI_Comm_dup(w->base, &comm) != MPI_SUCCESS) {
    TCHECK(0, "collective thread: MPI_Comm_dup failed");
    return NULL;
  }
  long data[64];
  for (int it = 0; it < T_COLL_ITERS; it++) {
    long in = rank + it, sum = -1;
    int root = it % size;
    for (int i = 0; i < 64; i++)
      data[i] = rank == root ? (long)(root * 100 + it + i) : -1;
    MPI_Request rq[3];
    MPI_Iallreduce(&in, &sum, 1, MPI_LONG, MPI_SUM, comm, &rq[0]);
    MPI_Ibcast(data, 64, MPI_LONG, root, comm, &rq[1]);
    MPI_Ibarrier(comm, &rq[2]);
    MPI_Waitall(3, rq, MPI_STATUSES_IGNORE);
    long want = (long)size * (size - 1) / 2 + (long)size * it;
    TCHECK(sum == want, "collective it %d: allreduce %ld, expected %ld", it, sum, want);
    for (int i = 0; i < 64; i++)
      TCHECK(data[i] == (long)(root * 100 + it + i), "collective it %d: bcast element %d is %ld", it, i, data[i]);
  }
  MPI_Comm_free(&comm);
  return NULL;
}

int main(int argc, char **argv)
{
  int provided = -1, queried = -1, is_main = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Query_thread(&queried);
  MPI_Is_thread_main(&is_main);
  CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_Init_thread provided %d, MULTIPLE is %d", provided,
        MPI_THREAD_MULTIPLE);
  CHECK(queried == provided, "MPI_Query_thread says %d, MPI_Init_thread %d", queried, provided);
  CHECK(is_main, "MPI_Is_thread_main false on the main thread");

  struct worker_s w[T_WORKERS + 1];
  pthread_t th[T_WORKERS + 1];
  for (int t = 0; t <= T_WORKERS; t++) { /* in the same order everywhere: collective on WORLD */
    w[t].id = t;
    w[t].is_main = -1;
    MPI_Comm_dup(MPI_COMM_WORLD, &w[t].base);
  }
  for (int t = 0; t <= T_WORKERS; t++)
    pthread_create(&th[t], NULL, t < T_WORKERS ? worker : collectives, &w[t]);
  for (int t = 0; t <= T_WORKERS; t++)
    pthread_join(th[t], NULL);
  for (int t = 0; t < T_WORKERS; t++)
    CHECK(w[t].is_main == 0, "MPI_Is_thread_main says %d in thread %d", w[t].is_main, t);
  for (int t = 0; t <= T_WORKERS; t++)
    MPI_Comm_free(&w[t].base);

  int f = local_fail ? 1 : 0, g = 1;
  MPI_Allreduce(&f, &g, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0)
    printf("%s MPI_THREAD_MULTIPLE: %d threads x %d exchanges + %d non-blocking collective rounds, %d ranks\n",
           g ? "FAIL" : "PASS", T_WORKERS, T_ITERS, T_COLL_ITERS, size);
  MPI_Finalize();
  return g ? 1 : 0;
}
