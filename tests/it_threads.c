/* The native interface from several application threads at once (issue 16 deliverable 3), with or without the
 * progress thread (NMAD_PROGRESS=thread): after nm_core_threads_enable(), T_THREADS threads per rank each run a
 * ring on their own tag (nm_sr_irecv from the left, nm_sr_isend to the right, both waited), with sizes across the
 * rendezvous threshold; every fourth round the receive is posted from NM_ANY_GATE on the thread's tag, and every
 * fifth the send is synchronous (nm_sr_issend). Contents derive from (sender, thread, round) and are checked.
 * Exits non-zero on the first failure; a hang is stopped by nmad-run's time limit (tests/it_run.sh). */
#include <nmad/nm_launcher.h>
#include <nmad/nm_sendrecv.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "it_common.h"

#define T_THREADS 4
#define T_ROUNDS 150
#define T_LARGE (80 * 1024) /* above the default rendezvous threshold (32 KiB) */

static int rank, size;
static nm_session_t sess;
static nm_gate_t left_gate, right_gate;

static uint64_t seed_of(int src, int t, int round) { return ((uint64_t)src << 40) ^ ((uint64_t)t << 24) ^ (uint64_t)round; }

static void *ring(void *arg)
{
  const int t = (int)(intptr_t)arg;
  const int left = (rank + size - 1) % size;
  const nm_tag_t tag = 0x1000 + (nm_tag_t)t;
  uint8_t *sbuf = malloc(T_LARGE), *rbuf = malloc(T_LARGE);
  CHECK(sbuf && rbuf, "out of memory");
  for (int round = 0; round < T_ROUNDS; round++) {
    size_t len = round % 6 == 5 ? T_LARGE : (size_t)(round * 37 % 2000);
    fill(sbuf, len, seed_of(rank, t, round));
    nm_sr_request_t rreq, sreq;
    int any = round % 4 == 3;
    CHECK_RC(nm_sr_irecv(sess, any ? NM_ANY_GATE : left_gate, tag, rbuf, T_LARGE, &rreq), "irecv");
    if (round % 5 == 4)
      CHECK_RC(nm_sr_issend(sess, right_gate, tag, sbuf, len, &sreq), "issend");
    else
      CHECK_RC(nm_sr_isend(sess, right_gate, tag, sbuf, len, &sreq), "isend");
    CHECK_RC(nm_sr_rwait(sess, &rreq), "rwait");
    CHECK_RC(nm_sr_swait(sess, &sreq), "swait");
    nm_len_t got = 0;
    CHECK_RC(nm_sr_get_size(sess, &rreq, &got), "get_size");
    CHECK(got == len, "thread %d round %d: %lu bytes received, %zu sent", t, round, (unsigned long)got, len);
    if (any) {
      nm_gate_t from = NULL;
      CHECK_RC(nm_sr_recv_source(sess, &rreq, &from), "recv_source");
      CHECK(from == left_gate, "thread %d round %d: any-gate receive matched another gate", t, round);
    }
    long bad = verify(rbuf, len, seed_of(left, t, round));
    CHECK(bad < 0, "thread %d round %d: byte %ld of %zu wrong", t, round, bad, len);
  }
  free(sbuf);
  free(rbuf);
  return NULL;
}

int main(int argc, char **argv)
{
  nm_launcher_t launcher;
  CHECK_RC(nm_launcher_init(&launcher, &argc, &argv), "nm_launcher_init");
  nm_launcher_get_rank(launcher, &rank);
  nm_launcher_get_size(launcher, &size);
  nm_core_t core = nm_launcher_get_core(launcher);
  CHECK_RC(nm_core_threads_enable(core), "nm_core_threads_enable");
  CHECK(nm_core_threads_enabled(core) == 1, "threads not enabled");
  CHECK_RC(nm_session_open(core, "it_threads", &sess), "nm_session_open");
  CHECK_RC(nm_launcher_get_gate(launcher, (rank + size - 1) % size, &left_gate), "left gate");
  CHECK_RC(nm_launcher_get_gate(launcher, (rank + 1) % size, &right_gate), "right gate");
  pthread_t th[T_THREADS];
  for (int t = 0; t < T_THREADS; t++)
    CHECK(pthread_create(&th[t], NULL, ring, (void *)(intptr_t)t) == 0, "pthread_create");
  for (int t = 0; t < T_THREADS; t++)
    pthread_join(th[t], NULL);
  CHECK_RC(nm_launcher_barrier(launcher), "barrier");
  if (rank == 0)
    printf("PASS %d threads x %d ring rounds, %d ranks, progress thread %s\n", T_THREADS, T_ROUNDS, size,
           nm_core_progress_thread_running(core) ? "on" : "off");
  fflush(stdout);
  CHECK_RC(nm_session_close(sess), "nm_session_close");
  CHECK_RC(nm_launcher_exit(launcher), "nm_launcher_exit");
  return 0;
}
