/**
 * @file t_p2p.c
 * @brief MPI point-to-point test (plain MPI: runs with nmad's shim and with Open MPI), 1..8 ranks.
 *
 * Covers: blocking/non-blocking sends in the four modes, receives with MPI_ANY_SOURCE/MPI_ANY_TAG/MPI_PROC_NULL,
 * MPI_STATUS(ES)_IGNORE, non-overtaking order (pre-posted and unexpected, eager and rendezvous sizes), probes and
 * matched probes, cancel, every wait/test variant with MPI_REQUEST_NULL entries, persistent requests, buffered
 * sends, Sendrecv(_replace), truncation and argument errors with MPI_ERRORS_RETURN (MPI_ERR_IN_STATUS),
 * non-contiguous datatypes, Request_free/Request_get_status, progress of a non-blocking collective while
 * blocked in point-to-point, and (nmad only) MPIX_Isend_prio and MPIX_Dynamic_bcast.
 *
 * Every section prints `PASS <what>` or `FAIL <what>` (rank 0, after all ranks agreed); details of a failure are
 * printed on stderr by the rank that saw it. Exit status: 0 if everything passed, 1 otherwise.
 * The harness synchronizes over its own duplicate of MPI_COMM_WORLD with point-to-point only, so that the
 * sections do not depend on collectives (except the one that tests MPI_Ibarrier).
 *
 * Build and run with Open MPI:
 *   mpicc.openmpi -O2 tests/mpi/t_p2p.c -o t_p2p
 *   mpirun.openmpi --allow-run-as-root --oversubscribe -np 4 ./t_p2p
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int rank, size;
static MPI_Comm ctl;   /* harness communicator */
static MPI_Comm rcomm; /* duplicate with MPI_ERRORS_RETURN for the error tests */
static int local_fail, sections_failed;

#define TAG_AGREE 1
#define TAG_CTL 2

#include "t_check.h" /* CHECK(cond, fmt, ...): counts a failure in local_fail, says where on stderr */

/* ---------------------------------------------------------------- harness */

/* Sum of v over all ranks, through point-to-point on ctl (also a barrier). */
static int agree_sum(int v)
{
  int sum = v, x;
  if (rank == 0) {
    for (int p = 1; p < size; p++) {
      MPI_Recv(&x, 1, MPI_INT, p, TAG_AGREE, ctl, MPI_STATUS_IGNORE);
      sum += x;
    }
    for (int p = 1; p < size; p++)
      MPI_Send(&sum, 1, MPI_INT, p, TAG_AGREE, ctl);
  } else {
    MPI_Send(&v, 1, MPI_INT, 0, TAG_AGREE, ctl);
    MPI_Recv(&sum, 1, MPI_INT, 0, TAG_AGREE, ctl, MPI_STATUS_IGNORE);
  }
  return sum;
}

static void ctl_barrier(void)
{
  agree_sum(0);
}

static void section(const char *what)
{
  int f = agree_sum(local_fail);
  if (rank == 0) {
    printf("%s %s\n", f ? "FAIL" : "PASS", what);
    fflush(stdout);
  }
  if (f)
    sections_failed++;
  local_fail = 0;
}

static void ctl_send(int to, int v)
{
  MPI_Send(&v, 1, MPI_INT, to, TAG_CTL, ctl);
}

static int ctl_recv(int from)
{
  int v;
  MPI_Recv(&v, 1, MPI_INT, from, TAG_CTL, ctl, MPI_STATUS_IGNORE);
  return v;
}

static void fill(void *buf, size_t n, unsigned seed)
{
  unsigned char *p = buf;
  for (size_t i = 0; i < n; i++)
    p[i] = (unsigned char)(seed * 131u + i * 7u + (i >> 9));
}

/* @return -1 if the buffer holds fill(seed), else the first bad offset. */
static long verify(const void *buf, size_t n, unsigned seed)
{
  const unsigned char *p = buf;
  for (size_t i = 0; i < n; i++)
    if (p[i] != (unsigned char)(seed * 131u + i * 7u + (i >> 9)))
      return (long)i;
  return -1;
}

/* Partner for pairwise tests: rank ^ 1, or oneself when it does not exist (odd size, single rank). */
static int partner(void)
{
  int p = rank ^ 1;
  return p < size ? p : rank;
}

static void sleep_ms(int ms)
{
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static int err_class(int err)
{
  int c = -1;
  MPI_Error_class(err, &c);
  return c;
}

static int count_of(const MPI_Status *st, MPI_Datatype dt)
{
  int c = -12345;
  MPI_Get_count(st, dt, &c);
  return c;
}

/* ---------------------------------------------------------------- sections */

/* Ring exchange of every size class: empty, tiny, eager, around the rendezvous threshold, large. */
static void t_ring(void)
{
  static const int sizes[] = {0, 1, 8, 1000, 32767, 32768, 65539, 1 << 20, 4 << 20};
  int right = (rank + 1) % size, left = (rank - 1 + size) % size;
  for (unsigned k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
    int n = sizes[k];
    char *sb = malloc(n ? n : 1), *rb = malloc(n ? n : 1);
    fill(sb, n, (unsigned)(rank * 100 + k));
    memset(rb, 0xee, n ? n : 1);
    MPI_Request rq;
    MPI_Status st;
    MPI_Irecv(rb, n, MPI_BYTE, left, 100 + (int)k, MPI_COMM_WORLD, &rq);
    MPI_Send(sb, n, MPI_BYTE, right, 100 + (int)k, MPI_COMM_WORLD);
    MPI_Wait(&rq, &st);
    CHECK(rq == MPI_REQUEST_NULL, "request not freed");
    CHECK(st.MPI_SOURCE == left, "size %d: source %d", n, st.MPI_SOURCE);
    CHECK(st.MPI_TAG == 100 + (int)k, "size %d: tag %d", n, st.MPI_TAG);
    CHECK(count_of(&st, MPI_BYTE) == n, "size %d: count %d", n, count_of(&st, MPI_BYTE));
    CHECK(verify(rb, n, (unsigned)(left * 100 + k)) < 0, "size %d: bad data at %ld", n,
          verify(rb, n, (unsigned)(left * 100 + k)));
    free(sb);
    free(rb);
  }
  /* Blocking receive into a NULL buffer with count 0 */
  MPI_Sendrecv(NULL, 0, MPI_INT, right, 9, NULL, 0, MPI_INT, left, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  section("ring send/recv 0 B .. 4 MiB");
}

/* Every rank sends 3 messages to rank 0, which receives them with wildcards. */
static void t_wildcards(void)
{
  const int per = 3;
  int msg[3][2];
  MPI_Request sr[3];
  for (int k = 0; k < per; k++) {
    msg[k][0] = rank;
    msg[k][1] = k;
    MPI_Isend(msg[k], 2, MPI_INT, 0, rank * 10 + k, MPI_COMM_WORLD, &sr[k]);
  }
  if (rank == 0) {
    int *next = calloc(size, sizeof(int));
    for (int i = 0; i < size * per; i++) {
      int m[2] = {-1, -1};
      MPI_Status st;
      MPI_Recv(m, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
      CHECK(st.MPI_SOURCE == m[0], "source %d but payload from %d", st.MPI_SOURCE, m[0]);
      CHECK(st.MPI_TAG == m[0] * 10 + m[1], "tag %d for payload (%d,%d)", st.MPI_TAG, m[0], m[1]);
      CHECK(count_of(&st, MPI_INT) == 2, "count %d", count_of(&st, MPI_INT));
      if (m[0] >= 0 && m[0] < size) {
        /* one source, any tag: the messages of that source arrive in send order */
        CHECK(m[1] == next[m[0]], "from %d: message %d before %d", m[0], m[1], next[m[0]]);
        next[m[0]] = m[1] + 1;
      }
    }
    free(next);
  }
  MPI_Waitall(per, sr, MPI_STATUSES_IGNORE);
  ctl_barrier();
  /* Specific source with any tag, any source with a specific tag. */
  int peer = partner(), v = rank * 7, got = -1;
  MPI_Request rq;
  MPI_Status st;
  MPI_Irecv(&got, 1, MPI_INT, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &rq);
  MPI_Send(&v, 1, MPI_INT, peer, 77, MPI_COMM_WORLD);
  MPI_Wait(&rq, &st);
  CHECK(got == peer * 7 && st.MPI_TAG == 77 && st.MPI_SOURCE == peer, "specific source, any tag: %d tag %d", got,
        st.MPI_TAG);
  ctl_barrier();
  MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 78, MPI_COMM_WORLD, &rq);
  MPI_Send(&v, 1, MPI_INT, peer, 78, MPI_COMM_WORLD);
  MPI_Wait(&rq, &st);
  CHECK(got == peer * 7 && st.MPI_SOURCE == peer && st.MPI_TAG == 78, "any source, tag 78: %d from %d", got,
        st.MPI_SOURCE);
  section("MPI_ANY_SOURCE / MPI_ANY_TAG");
}

/* Non-overtaking: messages of one sender with one tag match in send order, eager and rendezvous mixed. */
static void t_order(void)
{
  enum { N = 16 };
  int peer = partner();
  int lens[N];
  char *sb[N], *rb[N];
  for (int i = 0; i < N; i++) {
    lens[i] = (i % 3 == 2) ? 70000 + i : 16 + i;
    sb[i] = malloc(lens[i]);
    rb[i] = malloc(lens[i]);
    fill(sb[i], lens[i], (unsigned)(rank * 1000 + i));
  }
  for (int phase = 0; phase < 2; phase++) {
    MPI_Request sr[N], rr[N];
    if (phase == 0) { /* receives posted first */
      for (int i = 0; i < N; i++)
        MPI_Irecv(rb[i], lens[i], MPI_BYTE, peer, 5, MPI_COMM_WORLD, &rr[i]);
      ctl_barrier();
      for (int i = 0; i < N; i++)
        MPI_Isend(sb[i], lens[i], MPI_BYTE, peer, 5, MPI_COMM_WORLD, &sr[i]);
    } else { /* messages first (unexpected), receives later */
      for (int i = 0; i < N; i++)
        MPI_Isend(sb[i], lens[i], MPI_BYTE, peer, 6, MPI_COMM_WORLD, &sr[i]);
      ctl_barrier();
      sleep_ms(20);
      for (int i = 0; i < N; i++)
        MPI_Irecv(rb[i], lens[i], MPI_BYTE, peer, i % 2 ? 6 : MPI_ANY_TAG, MPI_COMM_WORLD, &rr[i]);
    }
    MPI_Status st[N];
    MPI_Waitall(N, rr, st);
    MPI_Waitall(N, sr, MPI_STATUSES_IGNORE);
    for (int i = 0; i < N; i++) {
      CHECK(count_of(&st[i], MPI_BYTE) == lens[i], "phase %d msg %d: count %d", phase, i,
            count_of(&st[i], MPI_BYTE));
      CHECK(verify(rb[i], lens[i], (unsigned)(peer * 1000 + i)) < 0, "phase %d msg %d: wrong message", phase, i);
    }
    ctl_barrier();
  }
  for (int i = 0; i < N; i++) {
    free(sb[i]);
    free(rb[i]);
  }
  section("non-overtaking order (posted and unexpected, eager and rendezvous)");
}

static void check_proc_null(const MPI_Status *st, const char *what)
{
  CHECK(st->MPI_SOURCE == MPI_PROC_NULL, "%s: source %d", what, st->MPI_SOURCE);
  CHECK(st->MPI_TAG == MPI_ANY_TAG, "%s: tag %d", what, st->MPI_TAG);
  CHECK(count_of(st, MPI_INT) == 0, "%s: count %d", what, count_of(st, MPI_INT));
  /* single-completion calls leave MPI_ERROR alone (MPI-3.1 3.2.5); t_proc_null presets it */
  CHECK(st->MPI_ERROR == MPI_ERR_DIMS, "%s: MPI_ERROR changed to %d", what, st->MPI_ERROR);
}

static void t_proc_null(void)
{
  int buf[10] = {0}, flag = 0;
  MPI_Status st;
  MPI_Request rq;
#define PRESET(st) ((st).MPI_ERROR = MPI_ERR_DIMS)
  CHECK(MPI_Send(buf, 10, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD) == MPI_SUCCESS, "send");
  CHECK(MPI_Ssend(buf, 10, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD) == MPI_SUCCESS, "ssend");
  CHECK(MPI_Rsend(buf, 10, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD) == MPI_SUCCESS, "rsend");
  st.MPI_SOURCE = 1234;
  PRESET(st);
  MPI_Recv(buf, 10, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st);
  check_proc_null(&st, "recv");
  MPI_Irecv(buf, 10, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &rq);
  PRESET(st);
  MPI_Test(&rq, &flag, &st);
  CHECK(flag && rq == MPI_REQUEST_NULL, "irecv from PROC_NULL completes at once");
  check_proc_null(&st, "irecv");
  MPI_Isend(buf, 10, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &rq);
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
  PRESET(st);
  MPI_Sendrecv(buf, 10, MPI_INT, MPI_PROC_NULL, 1, buf, 10, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st);
  check_proc_null(&st, "sendrecv");
  PRESET(st);
  MPI_Sendrecv_replace(buf, 10, MPI_INT, MPI_PROC_NULL, 1, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st);
  check_proc_null(&st, "sendrecv_replace");
  PRESET(st);
  MPI_Probe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st);
  check_proc_null(&st, "probe");
  flag = 0;
  PRESET(st);
  MPI_Iprobe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &flag, &st);
  CHECK(flag, "iprobe flag");
  check_proc_null(&st, "iprobe");
  MPI_Message msg = MPI_MESSAGE_NULL;
  PRESET(st);
  MPI_Mprobe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &msg, &st);
  CHECK(msg == MPI_MESSAGE_NO_PROC, "mprobe message");
  check_proc_null(&st, "mprobe");
  PRESET(st);
  MPI_Mrecv(buf, 10, MPI_INT, &msg, &st);
  CHECK(msg == MPI_MESSAGE_NULL, "mrecv message");
  check_proc_null(&st, "mrecv");
  flag = 0;
  PRESET(st);
  MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st);
  CHECK(flag && msg == MPI_MESSAGE_NO_PROC, "improbe");
  MPI_Imrecv(buf, 10, MPI_INT, &msg, &rq);
  PRESET(st);
  MPI_Wait(&rq, &st);
  check_proc_null(&st, "imrecv");
  MPI_Bsend(buf, 10, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD); /* no buffer needed */
#undef PRESET
  section("MPI_PROC_NULL");
}

/* Wait/test variants, with MPI_REQUEST_NULL entries and all-null arrays. */
static void t_wait_test(void)
{
  MPI_Request nul[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  MPI_Status st, sts[6];
  int flag = 0, idx = 0, out = 0, ind[6];
  MPI_Request r0 = MPI_REQUEST_NULL;
  st.MPI_SOURCE = 5;
  MPI_Wait(&r0, &st);
  CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG && count_of(&st, MPI_INT) == 0,
        "wait on null: empty status");
  MPI_Test(&r0, &flag, MPI_STATUS_IGNORE);
  CHECK(flag, "test on null: flag");
  MPI_Waitany(3, nul, &idx, &st);
  CHECK(idx == MPI_UNDEFINED, "waitany all null: %d", idx);
  flag = 0;
  MPI_Testany(3, nul, &idx, &flag, MPI_STATUS_IGNORE);
  CHECK(flag && idx == MPI_UNDEFINED, "testany all null");
  MPI_Waitsome(3, nul, &out, ind, MPI_STATUSES_IGNORE);
  CHECK(out == MPI_UNDEFINED, "waitsome all null: %d", out);
  MPI_Testsome(3, nul, &out, ind, MPI_STATUSES_IGNORE);
  CHECK(out == MPI_UNDEFINED, "testsome all null: %d", out);
  flag = 0;
  MPI_Testall(3, nul, &flag, sts);
  CHECK(flag, "testall all null");
  MPI_Waitall(3, nul, sts);
  MPI_Waitall(0, NULL, MPI_STATUSES_IGNORE);
  MPI_Waitany(0, NULL, &idx, MPI_STATUS_IGNORE);
  CHECK(idx == MPI_UNDEFINED, "waitany of 0");

  int peer = partner();
  /* 4 live requests among nulls: recv a (tag 1), recv b (tag 2, rendezvous), send c, send d */
  enum { BIG = 100000 };
  int *a = calloc(4, sizeof(int)), *b = calloc(BIG, sizeof(int)), *c = malloc(4 * sizeof(int)),
      *d = malloc(BIG * sizeof(int));
  for (int variant = 0; variant < 5; variant++) {
    for (int i = 0; i < 4; i++)
      c[i] = rank * 100 + variant * 10 + i;
    for (int i = 0; i < BIG; i++)
      d[i] = rank + i + variant;
    MPI_Request rq[6] = {MPI_REQUEST_NULL};
    MPI_Irecv(a, 4, MPI_INT, peer, 1, MPI_COMM_WORLD, &rq[1]);
    rq[2] = MPI_REQUEST_NULL;
    MPI_Irecv(b, BIG, MPI_INT, peer, 2, MPI_COMM_WORLD, &rq[3]);
    MPI_Isend(d, BIG, MPI_INT, peer, 2, MPI_COMM_WORLD, &rq[4]);
    MPI_Isend(c, 4, MPI_INT, peer, 1, MPI_COMM_WORLD, &rq[5]);
    int seen[6] = {0}, done = 0;
    switch (variant) {
    case 0: /* Waitany until MPI_UNDEFINED */
      for (;;) {
        MPI_Waitany(6, rq, &idx, &st);
        if (idx == MPI_UNDEFINED)
          break;
        CHECK(idx >= 1 && idx != 2 && !seen[idx], "waitany index %d", idx);
        CHECK(rq[idx] == MPI_REQUEST_NULL, "waitany: request %d not freed", idx);
        if (idx == 1)
          CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == 1, "waitany status of recv a");
        seen[idx] = 1;
        done++;
      }
      CHECK(done == 4, "waitany completed %d", done);
      break;
    case 1: /* Waitsome */
      while (done < 4) {
        MPI_Waitsome(6, rq, &out, ind, sts);
        CHECK(out >= 1 && out != MPI_UNDEFINED, "waitsome outcount %d", out);
        for (int k = 0; k < out && out != MPI_UNDEFINED; k++) {
          CHECK(!seen[ind[k]] && rq[ind[k]] == MPI_REQUEST_NULL, "waitsome index %d", ind[k]);
          if (ind[k] == 3)
            CHECK(sts[k].MPI_TAG == 2 && count_of(&sts[k], MPI_INT) == BIG, "waitsome status of recv b");
          seen[ind[k]] = 1;
          done++;
        }
      }
      MPI_Waitsome(6, rq, &out, ind, sts);
      CHECK(out == MPI_UNDEFINED, "waitsome after all: %d", out);
      break;
    case 2: /* Testsome polling */
      while (done < 4) {
        MPI_Testsome(6, rq, &out, ind, MPI_STATUSES_IGNORE);
        CHECK(out != MPI_UNDEFINED, "testsome outcount undefined too early");
        for (int k = 0; k < out && out != MPI_UNDEFINED; k++) {
          CHECK(!seen[ind[k]], "testsome index %d twice", ind[k]);
          seen[ind[k]] = 1;
          done++;
        }
      }
      break;
    case 3: /* Testany polling */
      while (done < 4) {
        flag = 0;
        MPI_Testany(6, rq, &idx, &flag, &st);
        if (flag && idx != MPI_UNDEFINED) {
          CHECK(!seen[idx], "testany index %d twice", idx);
          seen[idx] = 1;
          done++;
        } else {
          CHECK(!flag, "testany: flag with undefined index while requests are active");
        }
      }
      break;
    case 4: /* Testall polling, then Test and Wait on already completed handles */
      flag = 0;
      while (!flag)
        MPI_Testall(6, rq, &flag, sts);
      for (int i = 0; i < 6; i++)
        CHECK(rq[i] == MPI_REQUEST_NULL, "testall: request %d not freed", i);
      CHECK(sts[1].MPI_SOURCE == peer && count_of(&sts[1], MPI_INT) == 4, "testall status of recv a");
      CHECK(sts[0].MPI_SOURCE == MPI_ANY_SOURCE, "testall: status of a null entry is empty");
      break;
    }
    for (int i = 0; i < 4; i++)
      CHECK(a[i] == peer * 100 + variant * 10 + i, "variant %d: a[%d] = %d", variant, i, a[i]);
    CHECK(b[0] == peer + variant && b[BIG - 1] == peer + BIG - 1 + variant, "variant %d: b", variant);
    ctl_barrier();
  }
  free(a);
  free(b);
  free(c);
  free(d);
  /* Test until complete on a single request */
  int v = rank, got = -1;
  MPI_Request rq;
  MPI_Irecv(&got, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, &rq);
  MPI_Send(&v, 1, MPI_INT, peer, 3, MPI_COMM_WORLD);
  flag = 0;
  while (!flag)
    MPI_Test(&rq, &flag, &st);
  CHECK(got == peer && rq == MPI_REQUEST_NULL && st.MPI_TAG == 3, "test loop");
  section("Wait/Test/Waitall/Testall/Waitany/Testany/Waitsome/Testsome with null requests");
}

/* A synchronous send completes only once the receive is posted. */
static void t_ssend(void)
{
  int peer = partner();
  if (peer != rank) {
    int v = 42, got = 0, flag = 0;
    if (rank < peer) {
      MPI_Request rq;
      MPI_Issend(&v, 1, MPI_INT, peer, 11, MPI_COMM_WORLD, &rq);
      for (int i = 0; i < 5; i++) {
        MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
        CHECK(!flag, "issend completed before the receive was posted");
        if (flag)
          break;
        sleep_ms(2);
      }
      ctl_send(peer, 1);
      if (!flag)
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
      MPI_Ssend(&v, 1, MPI_INT, peer, 12, MPI_COMM_WORLD);
    } else {
      ctl_recv(peer);
      MPI_Recv(&got, 1, MPI_INT, peer, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      CHECK(got == 42, "issend data %d", got);
      got = 0;
      MPI_Recv(&got, 1, MPI_INT, peer, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      CHECK(got == 42, "ssend data %d", got);
    }
  }
  /* Large synchronous sends both ways, receives pre-posted. */
  enum { N = 50000 };
  int *sb = malloc(N * sizeof(int)), *rb = malloc(N * sizeof(int));
  for (int i = 0; i < N; i++)
    sb[i] = rank * N + i;
  MPI_Request rq;
  MPI_Irecv(rb, N, MPI_INT, peer, 13, MPI_COMM_WORLD, &rq);
  MPI_Ssend(sb, N, MPI_INT, peer, 13, MPI_COMM_WORLD);
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
  CHECK(rb[0] == peer * N && rb[N - 1] == peer * N + N - 1, "large ssend data");
  free(sb);
  free(rb);
  section("MPI_Ssend / MPI_Issend (completion waits for the receive)");
}

/* Ready sends: the receive is posted (and the sender told so) first. */
static void t_rsend(void)
{
  int peer = partner(), v[2] = {rank, rank + 1}, got[2] = {-1, -1};
  MPI_Request rq, sq;
  MPI_Irecv(got, 2, MPI_INT, peer, 21, MPI_COMM_WORLD, &rq);
  if (peer != rank) {
    ctl_send(peer, 1);
    ctl_recv(peer);
  }
  MPI_Rsend(v, 2, MPI_INT, peer, 21, MPI_COMM_WORLD);
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
  CHECK(got[0] == peer && got[1] == peer + 1, "rsend data");
  MPI_Irecv(got, 2, MPI_INT, peer, 22, MPI_COMM_WORLD, &rq);
  ctl_barrier();
  MPI_Irsend(v, 2, MPI_INT, peer, 22, MPI_COMM_WORLD, &sq);
  MPI_Wait(&sq, MPI_STATUS_IGNORE);
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
  CHECK(got[0] == peer, "irsend data");
  section("MPI_Rsend / MPI_Irsend");
}

/* Buffered sends: local completion, accounting, detach waits. */
static void t_bsend(void)
{
  int peer = partner();
  enum { M = 1000, BIG = 200000 };
  int bufsize = 3 * (M + MPI_BSEND_OVERHEAD) + BIG + MPI_BSEND_OVERHEAD;
  char *buffer = malloc(bufsize);
  char *m = malloc(M), *big = malloc(BIG), *rb = malloc(BIG);
  CHECK(MPI_Buffer_attach(buffer, bufsize) == MPI_SUCCESS, "attach");
  fill(m, M, (unsigned)rank);
  fill(big, BIG, (unsigned)rank + 50);
  /* Both sides send a large message before receiving: buffered mode must not deadlock. */
  MPI_Bsend(big, BIG, MPI_BYTE, peer, 31, MPI_COMM_WORLD);
  MPI_Bsend(m, M, MPI_BYTE, peer, 32, MPI_COMM_WORLD);
  MPI_Request rq;
  MPI_Ibsend(m, M, MPI_BYTE, peer, 33, MPI_COMM_WORLD, &rq);
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
  memset(m, 0, M); /* the copies were made at send time */
  MPI_Recv(rb, BIG, MPI_BYTE, peer, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK(verify(rb, BIG, (unsigned)peer + 50) < 0, "bsend big data");
  MPI_Recv(rb, M, MPI_BYTE, peer, 32, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK(verify(rb, M, (unsigned)peer) < 0, "bsend data");
  MPI_Recv(rb, M, MPI_BYTE, peer, 33, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK(verify(rb, M, (unsigned)peer) < 0, "ibsend data");
  /* Persistent buffered send, started twice */
  int v = rank * 3, got = -1;
  MPI_Request pr;
  MPI_Bsend_init(&v, 1, MPI_INT, peer, 34, MPI_COMM_WORLD, &pr);
  for (int it = 0; it < 2; it++) {
    MPI_Start(&pr);
    MPI_Wait(&pr, MPI_STATUS_IGNORE);
    CHECK(pr != MPI_REQUEST_NULL, "persistent request kept");
    v++;
    MPI_Recv(&got, 1, MPI_INT, peer, 34, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(got == peer * 3 + it, "bsend_init data %d", got);
  }
  MPI_Request_free(&pr);
#ifdef NMAD_MPI
  /* nmad accounts strictly; Open MPI may send small messages eagerly without using the buffer (and a failed
   * Bsend disturbs its shared-memory transport), so these checks are nmad-only. */
  fill(big, BIG, 1);
  char *huge = malloc(2 * BIG);
  int err = MPI_Bsend(huge, 2 * BIG, MPI_BYTE, peer, 35, rcomm);
  CHECK(err_class(err) == MPI_ERR_BUFFER, "bsend larger than the buffer: class %d", err_class(err));
  free(huge);
#endif
  void *addr = NULL;
  int sz = 0;
  MPI_Buffer_detach(&addr, &sz);
  CHECK(addr == buffer && sz == bufsize, "detach returns the buffer (%p, %d)", addr, sz);
#ifdef NMAD_MPI
  err = MPI_Bsend(m, 1, MPI_BYTE, peer, 36, rcomm);
  CHECK(err_class(err) == MPI_ERR_BUFFER, "bsend without a buffer: class %d", err_class(err));
#endif
  ctl_barrier();
  free(buffer);
  free(m);
  free(big);
  free(rb);
  section("MPI_Bsend / MPI_Ibsend / MPI_Bsend_init / Buffer_attach / Buffer_detach");
}

static void t_sendrecv(void)
{
  int right = (rank + 1) % size, left = (rank - 1 + size) % size;
  enum { N = 20000 };
  int *sb = malloc(N * sizeof(int)), *rb = malloc(N * sizeof(int));
  for (int i = 0; i < N; i++)
    sb[i] = rank * 7 + i;
  MPI_Status st;
  MPI_Sendrecv(sb, N, MPI_INT, right, 41, rb, N, MPI_INT, left, 41, MPI_COMM_WORLD, &st);
  CHECK(rb[0] == left * 7 && rb[N - 1] == left * 7 + N - 1, "sendrecv data");
  CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 41 && count_of(&st, MPI_INT) == N, "sendrecv status");
  MPI_Sendrecv_replace(sb, N, MPI_INT, right, 42, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
  CHECK(sb[0] == left * 7 && sb[N - 1] == left * 7 + N - 1, "sendrecv_replace data");
  CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 42, "sendrecv_replace status");
  /* Non-contiguous: every other int of a 2N array */
  MPI_Datatype vec;
  MPI_Type_vector(N, 1, 2, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  int *sp = malloc(2 * N * sizeof(int));
  for (int i = 0; i < 2 * N; i++)
    sp[i] = i % 2 ? -1 : rank * 3 + i;
  MPI_Sendrecv_replace(sp, 1, vec, right, 43, left, 43, MPI_COMM_WORLD, &st);
  int ok = 1;
  for (int i = 0; i < 2 * N; i++)
    if (sp[i] != (i % 2 ? -1 : left * 3 + i))
      ok = 0;
  CHECK(ok, "sendrecv_replace with a vector type");
  MPI_Type_free(&vec);
  free(sp);
  free(sb);
  free(rb);
  section("MPI_Sendrecv / MPI_Sendrecv_replace");
}

static void t_probe(void)
{
  int right = (rank + 1) % size, left = (rank - 1 + size) % size, flag = 1;
  MPI_Status st;
  MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, &st);
  CHECK(!flag, "iprobe found a message nobody sent");
  ctl_barrier();
  int n = (rank + 1) * 100;
  int *sb = malloc(n * sizeof(int));
  for (int i = 0; i < n; i++)
    sb[i] = rank + i;
  MPI_Request sq;
  MPI_Isend(sb, n, MPI_INT, right, 50 + rank, MPI_COMM_WORLD, &sq);
  MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
  int c = count_of(&st, MPI_INT);
  CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 50 + left && c == (left + 1) * 100, "probe status (%d, %d, %d)",
        st.MPI_SOURCE, st.MPI_TAG, c);
  int *rb = malloc((c > 0 ? c : 1) * sizeof(int));
  MPI_Recv(rb, c, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st);
  CHECK(rb[0] == left && rb[c - 1] == left + c - 1, "probed message data");
  MPI_Wait(&sq, MPI_STATUS_IGNORE);
  free(rb);
  ctl_barrier();
  /* Iprobe polling, large message (rendezvous) */
  enum { L = 300000 };
  char *big = malloc(L), *rbig = malloc(L);
  fill(big, L, (unsigned)rank + 9);
  MPI_Isend(big, L, MPI_BYTE, right, 60, MPI_COMM_WORLD, &sq);
  flag = 0;
  while (!flag)
    MPI_Iprobe(left, 60, MPI_COMM_WORLD, &flag, &st);
  CHECK(count_of(&st, MPI_BYTE) == L && st.MPI_SOURCE == left, "iprobe status of a large message");
  MPI_Recv(rbig, L, MPI_BYTE, left, 60, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK(verify(rbig, L, (unsigned)left + 9) < 0, "iprobed large message data");
  MPI_Wait(&sq, MPI_STATUS_IGNORE);
  free(big);
  free(rbig);
  free(sb);
  section("MPI_Probe / MPI_Iprobe");
}

/* Matched probes take a message out of matching: a later receive gets the next one. */
static void t_mprobe(void)
{
  int right = (rank + 1) % size, left = (rank - 1 + size) % size;
  enum { S = 10, L = 50000 };
  int *small = malloc(S * sizeof(int)), *large = malloc(L * sizeof(int)), *third = malloc(S * sizeof(int));
  for (int i = 0; i < S; i++)
    small[i] = rank * 10 + i, third[i] = -rank - i;
  for (int i = 0; i < L; i++)
    large[i] = rank + 2 * i;
  MPI_Request sq[3];
  MPI_Isend(small, S, MPI_INT, right, 70, MPI_COMM_WORLD, &sq[0]);
  MPI_Isend(large, L, MPI_INT, right, 70, MPI_COMM_WORLD, &sq[1]);
  MPI_Message msg;
  MPI_Status st;
  MPI_Mprobe(left, 70, MPI_COMM_WORLD, &msg, &st);
  CHECK(msg != MPI_MESSAGE_NULL && msg != MPI_MESSAGE_NO_PROC, "mprobe message handle");
  CHECK(st.MPI_SOURCE == left && count_of(&st, MPI_INT) == S, "mprobe status: count %d", count_of(&st, MPI_INT));
  int *rl = malloc(L * sizeof(int)), *rs = malloc(S * sizeof(int));
  MPI_Request rq;
  MPI_Irecv(rl, L, MPI_INT, MPI_ANY_SOURCE, 70, MPI_COMM_WORLD, &rq); /* must get the second message */
  MPI_Mrecv(rs, S, MPI_INT, &msg, &st);
  CHECK(msg == MPI_MESSAGE_NULL, "mrecv resets the handle");
  CHECK(rs[0] == left * 10 && rs[S - 1] == left * 10 + S - 1, "mrecv data");
  CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 70 && count_of(&st, MPI_INT) == S, "mrecv status");
  MPI_Wait(&rq, &st);
  CHECK(count_of(&st, MPI_INT) == L && rl[0] == left && rl[L - 1] == left + 2 * (L - 1),
        "the receive posted after mprobe got the next message");
  /* Improbe with wildcards + Imrecv */
  MPI_Isend(third, S, MPI_INT, right, 71, MPI_COMM_WORLD, &sq[2]);
  int flag = 0;
  while (!flag)
    MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st);
  CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 71, "improbe status (%d, %d)", st.MPI_SOURCE, st.MPI_TAG);
  MPI_Imrecv(rs, S, MPI_INT, &msg, &rq);
  CHECK(msg == MPI_MESSAGE_NULL, "imrecv resets the handle");
  MPI_Wait(&rq, &st);
  CHECK(rs[0] == -left && rs[S - 1] == -left - (S - 1), "imrecv data");
  CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 71, "imrecv status");
  /* A large matched message */
  MPI_Request bq;
  MPI_Isend(large, L, MPI_INT, right, 72, MPI_COMM_WORLD, &bq);
  MPI_Mprobe(MPI_ANY_SOURCE, 72, MPI_COMM_WORLD, &msg, &st);
  CHECK(count_of(&st, MPI_INT) == L, "mprobe of a large message: count %d", count_of(&st, MPI_INT));
  memset(rl, 0, L * sizeof(int));
  MPI_Mrecv(rl, L, MPI_INT, &msg, MPI_STATUS_IGNORE);
  CHECK(rl[0] == left && rl[L - 1] == left + 2 * (L - 1), "mrecv of a large message");
  MPI_Wait(&bq, MPI_STATUS_IGNORE);
  MPI_Waitall(3, sq, MPI_STATUSES_IGNORE);
  free(small);
  free(large);
  free(third);
  free(rl);
  free(rs);
  section("MPI_Mprobe / MPI_Improbe / MPI_Mrecv / MPI_Imrecv");
}

static void t_cancel(void)
{
  int buf[4], flag = 0;
  MPI_Request rq;
  MPI_Status st;
  MPI_Irecv(buf, 4, MPI_INT, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &rq);
  MPI_Cancel(&rq);
  MPI_Wait(&rq, &st);
  MPI_Test_cancelled(&st, &flag);
  CHECK(flag, "cancelled receive: Test_cancelled false");
  /* Persistent receive: start, cancel, wait; the request stays usable */
  MPI_Request pr;
  MPI_Recv_init(buf, 4, MPI_INT, MPI_ANY_SOURCE, 998, MPI_COMM_WORLD, &pr);
  MPI_Start(&pr);
  MPI_Cancel(&pr);
  MPI_Wait(&pr, &st);
  flag = 0;
  MPI_Test_cancelled(&st, &flag);
  CHECK(flag && pr != MPI_REQUEST_NULL, "cancelled persistent receive");
  MPI_Request_free(&pr);
  /* A receive that matched is not cancelled */
  int peer = partner(), v = rank + 5, got = -1;
  MPI_Irecv(&got, 1, MPI_INT, peer, 80, MPI_COMM_WORLD, &rq);
  MPI_Send(&v, 1, MPI_INT, peer, 80, MPI_COMM_WORLD);
  ctl_barrier();
  flag = 0;
  MPI_Status pst;
  if (peer == rank) {
    MPI_Request_get_status(rq, &flag, &pst); /* self message: already matched */
  } else {
    while (!flag)
      MPI_Request_get_status(rq, &flag, &pst);
  }
  MPI_Cancel(&rq);
  MPI_Wait(&rq, &st);
  MPI_Test_cancelled(&st, &flag);
  CHECK(!flag && got == peer + 5, "a completed receive is not cancelled (got %d)", got);
  /* Sends nobody received yet: eager, rendezvous-sized, synchronous. Portable rule (MPI-3.1 3.8.4): the wait
   * returns, and either the send was withdrawn (the receiver never gets it) or it completed (the receiver gets
   * it); for a buffered send, the request is that of MPI_Ibsend or MPI_Bsend_init. The outcome goes to the receiver
   * on another tag.
   * nmad withdraws every send no receive matched yet. */
  static char sbig[100000], rbig[100000];
  static const char *kinds[] = {"eager", "rendezvous", "synchronous", "buffered", "persistent buffered",
                                "restarted persistent buffered"};
  const int tags[] = {82, 83, 84, 85, 88, 88}; /* the persistent request's tag is fixed by MPI_Bsend_init */
  char *bsend_buf = malloc(64 + MPI_BSEND_OVERHEAD);
  MPI_Buffer_attach(bsend_buf, 64 + MPI_BSEND_OVERHEAD);
  MPI_Request prq = MPI_REQUEST_NULL;
  for (int k = 0; k < 6; k++) {
    int n = k == 1 ? (int)sizeof(sbig) : 4, tag = tags[k], peer_flag = 0;
    if (k == 2) {
      MPI_Issend(sbig, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &rq);
    } else if (k == 3) {
      MPI_Ibsend(sbig, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &rq);
    } else if (k >= 4) { /* one MPI_Bsend_init request, started, cancelled and waited for twice */
      if (k == 4)
        MPI_Bsend_init(sbig, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &prq);
      MPI_Start(&prq);
      rq = prq;
    } else {
      MPI_Isend(sbig, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &rq);
    }
    MPI_Cancel(&rq);
    MPI_Wait(&rq, &st);
    flag = 0;
    MPI_Test_cancelled(&st, &flag);
#ifdef NMAD_MPI
    CHECK(flag, "unmatched %s send not withdrawn", kinds[k]);
#endif
    if (k >= 4)
      CHECK(rq == prq && rq != MPI_REQUEST_NULL, "%s send: the wait kept the persistent request", kinds[k]);
    MPI_Sendrecv(&flag, 1, MPI_INT, peer, 90, &peer_flag, 1, MPI_INT, peer, 90, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    if (!peer_flag)
      MPI_Recv(rbig, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    ctl_barrier();
    int pending = 1;
    MPI_Iprobe(peer, tag, MPI_COMM_WORLD, &pending, MPI_STATUS_IGNORE);
    CHECK(!pending, "a withdrawn %s send was still delivered", kinds[k]);
    ctl_barrier(); /* both probed before the persistent request sends on the same tag again */
  }
  MPI_Request_free(&prq);
  /* A buffered send's request freed while its transfer is being withdrawn: detaching the buffer still returns
   * (the transfer completes either way), with the buffer; a message that was not withdrawn is received. */
  MPI_Ibsend(sbig, 4, MPI_BYTE, peer, 87, MPI_COMM_WORLD, &rq);
  MPI_Cancel(&rq);
  MPI_Request_free(&rq);
  char *detached = NULL;
  int bsize = 0;
  MPI_Buffer_detach(&detached, &bsize);
  CHECK(detached == bsend_buf && bsize == 64 + MPI_BSEND_OVERHEAD, "Buffer_detach after a cancelled Ibsend");
  ctl_barrier();
  int arrived = 0;
  MPI_Iprobe(peer, 87, MPI_COMM_WORLD, &arrived, MPI_STATUS_IGNORE);
  if (arrived)
    MPI_Recv(rbig, 4, MPI_BYTE, peer, 87, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  ctl_barrier();
  free(bsend_buf);
  /* A send the receiver already matched is not withdrawn, even when its request is still active */
  MPI_Request rr;
  got = -1;
  MPI_Irecv(&got, 1, MPI_INT, peer, 86, MPI_COMM_WORLD, &rr);
  ctl_barrier();
  MPI_Isend(&v, 1, MPI_INT, peer, 86, MPI_COMM_WORLD, &rq);
  MPI_Wait(&rr, MPI_STATUS_IGNORE);
  ctl_barrier(); /* both messages matched */
  MPI_Cancel(&rq);
  MPI_Wait(&rq, &st);
  flag = 1;
  MPI_Test_cancelled(&st, &flag);
  CHECK(!flag && got == peer + 5, "a matched send reported withdrawn (got %d)", got);
  MPI_Status s2;
  memset(&s2, 0, sizeof(s2));
  MPI_Status_set_cancelled(&s2, 1);
  flag = 0;
  MPI_Test_cancelled(&s2, &flag);
  CHECK(flag, "Status_set_cancelled(1)");
  MPI_Status_set_cancelled(&s2, 0);
  MPI_Test_cancelled(&s2, &flag);
  CHECK(!flag, "Status_set_cancelled(0)");
  ctl_barrier();
  section("MPI_Cancel / MPI_Test_cancelled / MPI_Status_set_cancelled");
}

/* Truncation and argument errors with MPI_ERRORS_RETURN. */
static void t_errors(void)
{
  int peer = partner();
  enum { L = 40000 };
  int *sb = malloc(L * sizeof(int)), *rb = malloc(L * sizeof(int));
  for (int i = 0; i < L; i++)
    sb[i] = i;
  MPI_Request sq[4], rq[2];
  MPI_Status sts[2];
  MPI_Isend(sb, 10, MPI_INT, peer, 90, rcomm, &sq[0]);
  MPI_Isend(sb, 10, MPI_INT, peer, 91, rcomm, &sq[1]);
  MPI_Isend(sb, L, MPI_INT, peer, 92, rcomm, &sq[2]);
  MPI_Isend(sb, 5, MPI_INT, peer, 93, rcomm, &sq[3]);
  int err = MPI_Recv(rb, 5, MPI_INT, peer, 90, rcomm, MPI_STATUS_IGNORE);
  CHECK(err_class(err) == MPI_ERR_TRUNCATE, "recv of 10 ints into 5: class %d", err_class(err));
  MPI_Request r1;
  MPI_Irecv(rb, 5, MPI_INT, peer, 91, rcomm, &r1);
  err = MPI_Wait(&r1, MPI_STATUS_IGNORE);
  CHECK(err_class(err) == MPI_ERR_TRUNCATE, "irecv+wait truncation: class %d", err_class(err));
  CHECK(r1 == MPI_REQUEST_NULL, "failed request freed");
  /* Waitall: one truncated (rendezvous size), one fine */
  MPI_Irecv(rb, 1000, MPI_INT, peer, 92, rcomm, &rq[0]);
  int small[5] = {-1, -1, -1, -1, -1}; /* apart: some MPIs write a truncated message past the count */
  MPI_Irecv(small, 5, MPI_INT, peer, 93, rcomm, &rq[1]);
  sts[0].MPI_ERROR = sts[1].MPI_ERROR = -7;
  err = MPI_Waitall(2, rq, sts);
  CHECK(err == MPI_ERR_IN_STATUS, "waitall with a truncated request: %d", err);
  CHECK(err_class(sts[0].MPI_ERROR) == MPI_ERR_TRUNCATE, "status[0].MPI_ERROR class %d",
        err_class(sts[0].MPI_ERROR));
  /* The other request completed (MPI_SUCCESS) or is still pending (MPI_ERR_PENDING, MPI-3.1 3.7.5) */
  CHECK(sts[1].MPI_ERROR == MPI_SUCCESS || sts[1].MPI_ERROR == MPI_ERR_PENDING, "status[1].MPI_ERROR %d",
        sts[1].MPI_ERROR);
  if (sts[1].MPI_ERROR == MPI_ERR_PENDING)
    MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
  CHECK(rq[0] == MPI_REQUEST_NULL && rq[1] == MPI_REQUEST_NULL, "requests freed");
  CHECK(small[0] == 0 && small[4] == 4, "the good request's data (%d, %d)", small[0], small[4]);
  MPI_Waitall(4, sq, MPI_STATUSES_IGNORE);
  /* Argument errors */
  CHECK(err_class(MPI_Send(sb, 1, MPI_INT, size, 1, rcomm)) == MPI_ERR_RANK, "dest out of range");
  CHECK(err_class(MPI_Send(sb, 1, MPI_INT, -5, 1, rcomm)) == MPI_ERR_RANK, "negative dest");
  CHECK(err_class(MPI_Send(sb, 1, MPI_INT, peer, -3, rcomm)) == MPI_ERR_TAG, "negative tag");
  CHECK(err_class(MPI_Send(sb, 1, MPI_INT, peer, MPI_ANY_TAG, rcomm)) == MPI_ERR_TAG, "ANY_TAG in a send");
  CHECK(err_class(MPI_Send(sb, -1, MPI_INT, peer, 1, rcomm)) == MPI_ERR_COUNT, "negative count");
  CHECK(err_class(MPI_Send(sb, 1, MPI_DATATYPE_NULL, peer, 1, rcomm)) == MPI_ERR_TYPE, "null datatype");
  CHECK(err_class(MPI_Recv(rb, 1, MPI_INT, size + 3, 1, rcomm, MPI_STATUS_IGNORE)) == MPI_ERR_RANK,
        "recv source out of range");
  MPI_Request bad;
  CHECK(err_class(MPI_Irecv(rb, 1, MPI_INT, peer, -2, rcomm, &bad)) == MPI_ERR_TAG, "irecv negative tag");
  /* MPI_COMM_NULL: reported through MPI_COMM_WORLD's handler */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK(err_class(MPI_Send(sb, 1, MPI_INT, 0, 1, MPI_COMM_NULL)) == MPI_ERR_COMM, "null communicator");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  free(sb);
  free(rb);
  ctl_barrier();
  section("truncation (MPI_ERR_TRUNCATE, MPI_ERR_IN_STATUS) and argument errors");
}

static void t_persistent(void)
{
  int peer = partner();
  enum { N = 3000 };
  int *sb = malloc(N * sizeof(int)), *rb = malloc(N * sizeof(int));
  MPI_Request pr[2];
  MPI_Recv_init(rb, N, MPI_INT, peer, 100, MPI_COMM_WORLD, &pr[0]);
  MPI_Send_init(sb, N, MPI_INT, peer, 100, MPI_COMM_WORLD, &pr[1]);
  MPI_Status st;
  st.MPI_SOURCE = 77;
  MPI_Wait(&pr[0], &st); /* inactive: returns at once with an empty status */
  CHECK(pr[0] != MPI_REQUEST_NULL && st.MPI_SOURCE == MPI_ANY_SOURCE, "wait on an inactive persistent request");
  for (int it = 0; it < 10; it++) {
    for (int i = 0; i < N; i++)
      sb[i] = rank * 1000 + it + i;
    MPI_Startall(2, pr);
    MPI_Status sts[2];
    MPI_Waitall(2, pr, sts);
    CHECK(pr[0] != MPI_REQUEST_NULL && pr[1] != MPI_REQUEST_NULL, "persistent handles kept");
    CHECK(rb[0] == peer * 1000 + it && rb[N - 1] == peer * 1000 + it + N - 1, "iteration %d data", it);
    CHECK(sts[0].MPI_SOURCE == peer && count_of(&sts[0], MPI_INT) == N, "iteration %d status", it);
  }
  MPI_Request_free(&pr[0]);
  MPI_Request_free(&pr[1]);
  CHECK(pr[0] == MPI_REQUEST_NULL && pr[1] == MPI_REQUEST_NULL, "Request_free nulls the handles");
  /* Synchronous and ready persistent sends, each started twice */
  int v = rank, got = -1;
  MPI_Request ps, prr;
  MPI_Ssend_init(&v, 1, MPI_INT, peer, 101, MPI_COMM_WORLD, &ps);
  MPI_Recv_init(&got, 1, MPI_INT, peer, 101, MPI_COMM_WORLD, &prr);
  for (int it = 0; it < 2; it++) {
    MPI_Start(&prr);
    MPI_Start(&ps);
    MPI_Wait(&ps, MPI_STATUS_IGNORE);
    MPI_Wait(&prr, MPI_STATUS_IGNORE);
    CHECK(got == peer, "ssend_init data");
  }
  MPI_Request_free(&ps);
  MPI_Request_free(&prr);
  MPI_Rsend_init(&v, 1, MPI_INT, peer, 102, MPI_COMM_WORLD, &ps);
  MPI_Recv_init(&got, 1, MPI_INT, peer, 102, MPI_COMM_WORLD, &prr);
  for (int it = 0; it < 2; it++) {
    got = -1;
    MPI_Start(&prr);
    ctl_barrier(); /* the receive is posted everywhere */
    MPI_Start(&ps);
    MPI_Wait(&ps, MPI_STATUS_IGNORE);
    MPI_Wait(&prr, MPI_STATUS_IGNORE);
    CHECK(got == peer, "rsend_init data");
  }
  MPI_Request_free(&ps);
  MPI_Request_free(&prr);
  free(sb);
  free(rb);
  section("persistent requests (Send/Ssend/Rsend/Recv_init, Start, Startall)");
}

static void t_free_status(void)
{
  int peer = partner();
  enum { L = 100000 };
  char *sb = malloc(L), *rb = malloc(L);
  fill(sb, L, (unsigned)rank + 3);
  MPI_Request sq, rq;
  MPI_Irecv(rb, L, MPI_BYTE, peer, 110, MPI_COMM_WORLD, &rq);
  MPI_Isend(sb, L, MPI_BYTE, peer, 110, MPI_COMM_WORLD, &sq);
  MPI_Request_free(&sq); /* the send goes on */
  CHECK(sq == MPI_REQUEST_NULL, "Request_free nulls the handle");
  int flag = 0;
  MPI_Status st;
  while (!flag)
    MPI_Request_get_status(rq, &flag, &st);
  CHECK(rq != MPI_REQUEST_NULL, "Request_get_status keeps the request");
  CHECK(st.MPI_SOURCE == peer && count_of(&st, MPI_BYTE) == L, "Request_get_status status");
  MPI_Wait(&rq, &st);
  CHECK(verify(rb, L, (unsigned)peer + 3) < 0 && st.MPI_SOURCE == peer, "data of a freed send");
  flag = 0;
  MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st);
  CHECK(flag, "Request_get_status on MPI_REQUEST_NULL");
  /* A freed receive still lands (its buffer is checked after a handshake) */
  int v = rank * 11, got = -1;
  MPI_Irecv(&got, 1, MPI_INT, peer, 111, MPI_COMM_WORLD, &rq);
  MPI_Request_free(&rq);
  MPI_Send(&v, 1, MPI_INT, peer, 111, MPI_COMM_WORLD);
  /* the peer's data is in flight: a second message on the same (source, tag) arrives after it */
  int v2 = 1, got2 = 0;
  MPI_Send(&v2, 1, MPI_INT, peer, 111, MPI_COMM_WORLD);
  MPI_Recv(&got2, 1, MPI_INT, peer, 111, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK(got == peer * 11, "a freed receive completed (%d)", got);
  ctl_barrier();
  free(sb);
  free(rb);
  section("MPI_Request_free / MPI_Request_get_status");
}

static void t_datatypes(void)
{
  int peer = partner();
  static const int counts[] = {100, 20000};
  for (int k = 0; k < 2; k++) {
    int n = counts[k];
    MPI_Datatype vec;
    MPI_Type_vector(n, 1, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int *strided = malloc(3 * n * sizeof(int)), *contig = malloc(n * sizeof(int));
    for (int i = 0; i < 3 * n; i++)
      strided[i] = rank * 100000 + i;
    /* strided -> contiguous */
    MPI_Request rq;
    MPI_Status st;
    MPI_Irecv(contig, n, MPI_INT, peer, 120, MPI_COMM_WORLD, &rq);
    MPI_Send(strided, 1, vec, peer, 120, MPI_COMM_WORLD);
    MPI_Wait(&rq, &st);
    int ok = 1;
    for (int i = 0; i < n; i++)
      if (contig[i] != peer * 100000 + 3 * i)
        ok = 0;
    CHECK(ok && count_of(&st, MPI_INT) == n, "vector -> contiguous (%d)", n);
    /* contiguous -> strided, receiving into a vector type (other elements untouched) */
    for (int i = 0; i < n; i++)
      contig[i] = rank - i;
    for (int i = 0; i < 3 * n; i++)
      strided[i] = -1;
    MPI_Irecv(strided, 1, vec, peer, 121, MPI_COMM_WORLD, &rq);
    MPI_Send(contig, n, MPI_INT, peer, 121, MPI_COMM_WORLD);
    MPI_Wait(&rq, &st);
    ok = 1;
    for (int i = 0; i < 3 * n; i++)
      if (strided[i] != (i % 3 ? -1 : peer - i / 3))
        ok = 0;
    CHECK(ok, "contiguous -> vector (%d)", n);
    CHECK(count_of(&st, vec) == 1, "Get_count in vector elements: %d", count_of(&st, vec));
    /* the type may be freed while a request uses it */
    MPI_Irecv(strided, 1, vec, peer, 122, MPI_COMM_WORLD, &rq);
    MPI_Type_free(&vec);
    MPI_Send(contig, n, MPI_INT, peer, 122, MPI_COMM_WORLD);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    CHECK(strided[0] == peer && strided[3 * (n - 1)] == peer - (n - 1), "type freed while in use (%d)", n);
    free(strided);
    free(contig);
    ctl_barrier();
  }
  section("non-contiguous datatypes (eager and rendezvous)");
}

/* Everybody to everybody, receives from any source completed with Waitany. */
static void t_alltoall(void)
{
  int nreq = 2 * size;
  MPI_Request *rq = malloc(nreq * sizeof(MPI_Request));
  char **sb = malloc(size * sizeof(char *)), **rb = malloc(size * sizeof(char *));
  int *len = malloc(size * sizeof(int));
  for (int round = 0; round < 3; round++) {
    for (int p = 0; p < size; p++) {
      len[p] = ((rank + p + round) % 4) * 20000 + 17; /* what p sends to me and I to p */
      sb[p] = malloc(len[p]);
      rb[p] = malloc(len[p]);
      fill(sb[p], len[p], (unsigned)(rank * 64 + p + round));
    }
    for (int p = 0; p < size; p++)
      MPI_Irecv(rb[p], len[p], MPI_BYTE, p, 130 + round, MPI_COMM_WORLD, &rq[p]);
    for (int p = 0; p < size; p++) {
      int to = (rank + p) % size;
      MPI_Isend(sb[to], len[to], MPI_BYTE, to, 130 + round, MPI_COMM_WORLD, &rq[size + to]);
    }
    for (int k = 0; k < nreq; k++) {
      int idx;
      MPI_Status st;
      MPI_Waitany(nreq, rq, &idx, &st);
      CHECK(idx != MPI_UNDEFINED, "waitany ran out");
      if (idx != MPI_UNDEFINED && idx < size)
        CHECK(st.MPI_SOURCE == idx && count_of(&st, MPI_BYTE) == len[idx], "recv from %d status", idx);
    }
    for (int p = 0; p < size; p++) {
      CHECK(verify(rb[p], len[p], (unsigned)(p * 64 + rank + round)) < 0, "round %d data from %d", round, p);
      free(sb[p]);
      free(rb[p]);
    }
  }
  free(rq);
  free(sb);
  free(rb);
  free(len);
  ctl_barrier();
  section("all-to-all with MPI_Waitany (self messages included)");
}

/* A non-blocking collective progresses while its rank blocks in point-to-point (MPI-3.1 5.12). */
static void t_coll_progress(void)
{
  MPI_Request b;
  int v = 0, got = -1;
  if (size >= 2) {
    if (rank == 0) {
      MPI_Ibarrier(MPI_COMM_WORLD, &b);
      MPI_Recv(&got, 1, MPI_INT, 1, 140, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Wait(&b, MPI_STATUS_IGNORE);
      CHECK(got == 1, "data after the barrier");
    } else {
      MPI_Ibarrier(MPI_COMM_WORLD, &b);
      MPI_Wait(&b, MPI_STATUS_IGNORE);
      v = 1;
      if (rank == 1)
        MPI_Send(&v, 1, MPI_INT, 0, 140, MPI_COMM_WORLD);
    }
  }
  /* Collective and point-to-point requests in one Waitany/Testall */
  int peer = partner(), x = rank;
  MPI_Request rq[3];
  MPI_Ibarrier(MPI_COMM_WORLD, &rq[0]);
  MPI_Irecv(&got, 1, MPI_INT, peer, 141, MPI_COMM_WORLD, &rq[1]);
  MPI_Isend(&x, 1, MPI_INT, peer, 141, MPI_COMM_WORLD, &rq[2]);
  int done = 0, idx;
  while (done < 3) {
    MPI_Waitany(3, rq, &idx, MPI_STATUS_IGNORE);
    CHECK(idx != MPI_UNDEFINED, "waitany with a collective");
    done++;
  }
  CHECK(got == peer, "p2p next to a collective");
  MPI_Ibarrier(MPI_COMM_WORLD, &rq[0]);
  MPI_Irecv(&got, 1, MPI_INT, peer, 142, MPI_COMM_WORLD, &rq[1]);
  MPI_Isend(&x, 1, MPI_INT, peer, 142, MPI_COMM_WORLD, &rq[2]);
  int flag = 0;
  while (!flag)
    MPI_Testall(3, rq, &flag, MPI_STATUSES_IGNORE);
  ctl_barrier();
  section("non-blocking collective progress during point-to-point waits");
}

#ifdef NMAD_MPI
static void t_mpix(void)
{
  int peer = partner(), got = -1, v = rank + 1000;
  MPI_Request rq, sq;
  MPI_Irecv(&got, 1, MPI_INT, peer, 150, MPI_COMM_WORLD, &rq);
  MPIX_Isend_prio(&v, 1, MPI_INT, peer, 150, 7, MPI_COMM_WORLD, &sq);
  MPI_Wait(&sq, MPI_STATUS_IGNORE);
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
  CHECK(got == peer + 1000, "MPIX_Isend_prio data");
  /* Dynamic broadcast from rank 0 to every other rank, received with ordinary receives */
  enum { L = 70000 };
  int *buf = malloc(L * sizeof(int));
  if (rank == 0) {
    int n = size - 1;
    int *dests = malloc((n ? n : 1) * sizeof(int)), *prios = malloc((n ? n : 1) * sizeof(int));
    for (int i = 0; i < n; i++)
      dests[i] = i + 1, prios[i] = i % 3;
    for (int i = 0; i < L; i++)
      buf[i] = i * 3;
    MPIX_Dynamic_bcast(buf, L, MPI_INT, dests, prios, n, 151, MPI_COMM_WORLD, &sq);
    MPI_Wait(&sq, MPI_STATUS_IGNORE);
    free(dests);
    free(prios);
    MPI_Request bad;
    int self = 0;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int err = MPIX_Dynamic_bcast(buf, 1, MPI_INT, &self, NULL, 1, 151, MPI_COMM_WORLD, &bad);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    CHECK(err_class(err) == MPI_ERR_RANK, "dynamic bcast to the root itself: class %d", err_class(err));
  } else {
    MPI_Status st;
    MPI_Recv(buf, L, MPI_INT, 0, 151, MPI_COMM_WORLD, &st);
    CHECK(buf[0] == 0 && buf[L - 1] == 3 * (L - 1) && st.MPI_SOURCE == 0 && count_of(&st, MPI_INT) == L,
          "dynamic bcast data");
  }
  /* Topology-ID multicast (issue 19) from rank 0 to the odd ranks, listed backwards, in 8 KiB segments */
  if (rank == 0) {
    int *dests = malloc((size / 2 + 1) * sizeof(int)), n = 0;
    for (int i = size - 1; i > 0; i--)
      if (i % 2)
        dests[n++] = i;
    for (int i = 0; i < L; i++)
      buf[i] = i * 5 + 1;
    MPIX_Mcast_topo(buf, L, MPI_INT, dests, n, 152, MPI_COMM_WORLD, &sq);
    MPI_Wait(&sq, MPI_STATUS_IGNORE);
    if (n > 0) {
      int two[2] = {dests[0], dests[0]};
      MPI_Request bad;
      MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
      int err = MPIX_Mcast_topo(buf, 1, MPI_INT, two, 2, 152, MPI_COMM_WORLD, &bad);
      MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
      CHECK(err_class(err) == MPI_ERR_ARG, "topology multicast with a duplicate: class %d", err_class(err));
    }
    free(dests);
  } else if (rank % 2) {
    MPI_Status st;
    MPI_Recv(buf, L, MPI_INT, 0, 152, MPI_COMM_WORLD, &st);
    CHECK(buf[0] == 1 && buf[L - 1] == 5 * (L - 1) + 1 && st.MPI_SOURCE == 0 && count_of(&st, MPI_INT) == L,
          "topology multicast data");
  }
  free(buf);
  ctl_barrier();
  section("MPIX_Isend_prio / MPIX_Dynamic_bcast / MPIX_Mcast_topo");
}
#endif

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_dup(MPI_COMM_WORLD, &ctl);
  MPI_Comm_dup(MPI_COMM_WORLD, &rcomm);
  MPI_Comm_set_errhandler(rcomm, MPI_ERRORS_RETURN);
  t_ring();
  t_wildcards();
  t_order();
  t_proc_null();
  t_wait_test();
  t_ssend();
  t_rsend();
  t_bsend();
  t_sendrecv();
  t_probe();
  t_mprobe();
  t_cancel();
  t_errors();
  t_persistent();
  t_free_status();
  t_datatypes();
  t_alltoall();
  t_coll_progress();
#ifdef NMAD_MPI
  t_mpix();
#endif
  int failed = sections_failed; /* the same on every rank: section() agrees */
  if (rank == 0)
    printf("%s t_p2p: %d ranks, %d failed section(s)\n", failed ? "FAIL" : "PASS", size, failed);
  MPI_Comm_free(&rcomm);
  MPI_Comm_free(&ctl);
  MPI_Finalize();
  return failed ? 1 : 0;
}
