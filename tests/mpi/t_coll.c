/* MPI collectives test (plain MPI: also runs with Open MPI), any number of ranks (1..8 and more).
 *
 * Every collective with counts of 0, 1, 1000 and 256 Ki ints (1 MiB), from every root, with MPI_IN_PLACE where the
 * standard allows it, with a derived datatype (a vector with holes: the holes must stay untouched) mixed with
 * MPI_INT on the other side, predefined operations and a user-defined non-commutative operation (2x2 matrix
 * product mod 10007, contiguous and with holes) whose result shows whether the canonical order
 * x0 op x1 op ... op x(p-1) was kept. The suite runs on MPI_COMM_WORLD and on a split communicator with a
 * reversed rank order, then checks argument errors (MPI_ERRORS_RETURN).
 *
 * Compiled with T_NONBLOCKING defined (tests/mpi/t_icoll.c), every collective is replaced by its non-blocking
 * version, overlapped with computation that calls MPI_Test on another request, then waited for.
 *
 * Environment: T_ONLY=<text>[,<text>...] runs only the sections whose label contains one of the texts (plus the
 * error checks).
 *
 * Output: "PASS <what>" / "FAIL <what>" lines on rank 0 (each rank prints its own failure details on stderr);
 * exit status 1 if anything failed.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GAP (-777)
#define MOD 10007

static int wrank, wsize;
static int local_fail;   /* failures on this rank in the current section */
static int any_fail;     /* any section failed (rank 0's view) */
static MPI_Datatype vec; /* 2 ints with a hole: [x _ y], extent 3 ints */
static MPI_Datatype mat_c, mat_v; /* 2x2 int matrix: contiguous (4 ints) / with a hole after each row (5 ints) */
static MPI_Op op_mat;
static MPI_Op op_sum; /* user-defined commutative sum on ints and on vec (predefined operations only apply to
                         predefined datatypes) */
static MPI_Comm side_comm; /* for the "other request" of the non-blocking mode: a duplicate of the communicator
                              under test (members of different split communicators run different collectives) */

#define CHECK(cond, ...)                                                                                           \
  do {                                                                                                             \
    if (!(cond)) {                                                                                                 \
      if (local_fail++ < 5) {                                                                                      \
        fprintf(stderr, "[rank %d] %s:%d: ", wrank, __FILE__, __LINE__);                                          \
        fprintf(stderr, __VA_ARGS__);                                                                              \
        fprintf(stderr, "\n");                                                                                     \
      }                                                                                                            \
    }                                                                                                              \
  } while (0)

/* One section: every rank agrees on the outcome. */
static void section(const char *what)
{
  int f = local_fail ? 1 : 0, g = 0;
  MPI_Allreduce(&f, &g, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (wrank == 0)
    printf("%s %s\n", g ? "FAIL" : "PASS", what);
  fflush(stdout);
  if (g)
    any_fail = 1;
  local_fail = 0;
}

/* ------------------------------------------------------------------ blocking or non-blocking */

#ifdef T_NONBLOCKING
/* Post, compute while calling MPI_Test on another (independent) request, then wait. */
static int overlap(int rc, MPI_Request *req)
{
  MPI_Request other;
  int flag = 0, it;
  volatile double x = 0;
  if (rc != MPI_SUCCESS)
    return rc;
  MPI_Ibarrier(side_comm, &other);
  for (it = 0; !flag || it < 4; it++) {
    for (int k = 0; k < 2000; k++)
      x += k * 0.5;
    MPI_Test(&other, &flag, MPI_STATUS_IGNORE);
  }
  return MPI_Wait(req, MPI_STATUS_IGNORE);
}
#define COLL(blocking, nonblocking, ...) ({ MPI_Request r_; overlap(nonblocking(__VA_ARGS__, &r_), &r_); })
#define MODE "I"
#else
#define COLL(blocking, nonblocking, ...) blocking(__VA_ARGS__)
#define MODE ""
#endif

/* ------------------------------------------------------------------ data helpers */

/* Buffer kinds: 0 = MPI_INT (1 int per element), 1 = vec (2 ints per element in 3 ints). */
static MPI_Datatype ktype(int k) { return k ? vec : MPI_INT; }
static int kper(int k) { return k ? 2 : 1; }
static long kpos(int k, long j) { return k ? (j / 2) * 3 + (j % 2) * 2 : j; }
/* ints of storage for n ints of data */
static long kspace(int k, long n) { return k ? (n / 2) * 3 + 1 : n + 1; }

static int val(int a, long j, int salt) { return (int)(((long)a * 7919 + j * 31 + salt * 101) % 100000); }

static int *kalloc(int k, long n)
{
  long sp = kspace(k, n);
  int *b = malloc(sizeof(int) * (size_t)sp);
  for (long i = 0; i < sp; i++)
    b[i] = GAP;
  for (long j = 0; j < n; j++)
    b[kpos(k, j)] = -1;
  return b;
}

/* the holes (and the spare int at the end) are untouched */
static int kgaps_ok(int k, const int *b, long n)
{
  long sp = kspace(k, n), j = 0;
  for (long i = 0; i < sp; i++) {
    if (j < n && i == kpos(k, j)) {
      j++;
      continue;
    }
    if (b[i] != GAP)
      return 0;
  }
  return 1;
}

static const int counts[] = {0, 1, 1000, 262144};
#define NCOUNTS ((int)(sizeof(counts) / sizeof(counts[0])))
/* data ints for a kind: even for the vector */
static long kn(int k, long n) { return k ? (n + 1) / 2 * 2 : n; }

/* ------------------------------------------------------------------ the matrix operation */

static void mat_get(const int *p, int holes, int m[4])
{
  m[0] = p[0];
  m[1] = p[1];
  m[2] = p[holes ? 3 : 2];
  m[3] = p[holes ? 4 : 3];
}

static void mat_put(int *p, int holes, const int m[4])
{
  p[0] = m[0];
  p[1] = m[1];
  p[holes ? 3 : 2] = m[2];
  p[holes ? 4 : 3] = m[3];
}

static void mat_mul(const int a[4], const int b[4], int c[4])
{
  c[0] = (a[0] * b[0] + a[1] * b[2]) % MOD;
  c[1] = (a[0] * b[1] + a[1] * b[3]) % MOD;
  c[2] = (a[2] * b[0] + a[3] * b[2]) % MOD;
  c[3] = (a[2] * b[1] + a[3] * b[3]) % MOD;
}

/* inout = in * inout */
static void mat_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
  int holes = (*dt == mat_v), stride = holes ? 5 : 4;
  for (int i = 0; i < *len; i++) {
    int a[4], b[4], c[4];
    mat_get((int *)in + (long)i * stride, holes, a);
    mat_get((int *)inout + (long)i * stride, holes, b);
    mat_mul(a, b, c);
    mat_put((int *)inout + (long)i * stride, holes, c);
  }
}

static void sum_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
  const int *a = in;
  int *b = inout;
  if (*dt == vec) {
    for (long i = 0; i < *len; i++) {
      b[3 * i] += a[3 * i];
      b[3 * i + 2] += a[3 * i + 2];
    }
  } else {
    for (long i = 0; i < *len; i++)
      b[i] += a[i];
  }
}

/* the sum for a buffer kind */
static MPI_Op ksum(int k) { return k ? op_sum : MPI_SUM; }

static void mat_of(int rank, long i, int m[4])
{
  m[0] = 1 + (rank * 7 + i) % 5;
  m[1] = (rank * 3 + i) % 11;
  m[2] = (rank + i) % 13;
  m[3] = 1 + (rank * 5 + i) % 7;
}

/* product of the matrices of ranks [lo, hi) for element i */
static void mat_prod(int lo, int hi, long i, int m[4])
{
  int acc[4] = {1, 0, 0, 1}, x[4], t[4];
  for (int r = lo; r < hi; r++) {
    mat_of(r, i, x);
    mat_mul(acc, x, t);
    memcpy(acc, t, sizeof(t));
  }
  memcpy(m, acc, sizeof(acc));
}

static int *mat_alloc(int holes, long n)
{
  long sp = n * (holes ? 5 : 4) + 1;
  int *b = malloc(sizeof(int) * (size_t)sp);
  for (long i = 0; i < sp; i++)
    b[i] = GAP;
  return b;
}

static void mat_fill(int *b, int holes, long n, int rank)
{
  for (long i = 0; i < n; i++) {
    int m[4];
    mat_of(rank, i, m);
    mat_put(b + i * (holes ? 5 : 4), holes, m);
  }
}

/* elements [first, first + n) hold products of ranks [lo, hi); holes untouched */
static int mat_check(const int *b, int holes, long n, long first, int lo, int hi)
{
  int stride = holes ? 5 : 4;
  for (long i = 0; i < n; i++) {
    int m[4], e[4];
    mat_get(b + i * stride, holes, m);
    mat_prod(lo, hi, first + i, e);
    if (memcmp(m, e, sizeof(m)))
      return 0;
    if (holes && b[i * stride + 2] != GAP)
      return 0;
  }
  return b[n * stride] == GAP;
}

/* ------------------------------------------------------------------ tests */

static void t_barrier(MPI_Comm comm)
{
  for (int i = 0; i < 5; i++)
    CHECK(COLL(MPI_Barrier, MPI_Ibarrier, comm) == MPI_SUCCESS, "barrier");
}

static void t_bcast(MPI_Comm comm)
{
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  for (int ci = 0; ci < NCOUNTS; ci++)
    for (int mix = 0; mix < 3; mix++) /* 2: even ranks contiguous, odd ranks the vector (same type signature) */
      for (int root = 0; root < size; root++) {
        int k = mix < 2 ? mix : rank % 2;
        long n = mix < 2 ? kn(k, counts[ci]) : kn(1, counts[ci]);
        int salt = ci * 10 + mix + root;
        int *b = kalloc(k, n);
        if (rank == root)
          for (long j = 0; j < n; j++)
            b[kpos(k, j)] = val(root, j, salt);
        int rc = COLL(MPI_Bcast, MPI_Ibcast, b, (int)(n / kper(k)), ktype(k), root, comm);
        CHECK(rc == MPI_SUCCESS, "bcast rc %d", rc);
        long bad = -1;
        for (long j = 0; j < n && bad < 0; j++)
          if (b[kpos(k, j)] != val(root, j, salt))
            bad = j;
        CHECK(bad < 0, "bcast n=%ld kind=%d root=%d: bad int %ld", n, k, root, bad);
        CHECK(kgaps_ok(k, b, n), "bcast n=%ld kind=%d root=%d: holes overwritten", n, k, root);
        free(b);
      }
}

/* kinds of (send, recv) sides */
static const int kpairs[][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}};
#define NKPAIRS 4

static void t_gather(MPI_Comm comm, int v)
{
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  for (int ci = 0; ci < NCOUNTS; ci++)
    for (int kp = 0; kp < NKPAIRS + 1; kp++)
      for (int root = 0; root < size; root++) {
        int in_place = (kp == NKPAIRS);
        int sk = in_place ? 1 : kpairs[kp][0], rk = in_place ? 1 : kpairs[kp][1];
        long n = kn(1, counts[ci]); /* even: both kinds */
        if (counts[ci] > 1000 && size > 4 && kp != 0 && !in_place)
          continue; /* keep the run short */
        int salt = ci * 10 + kp + root;
        /* v: rank i contributes cnt[i] ints at displacement disp[i] (in ints, elements of the recv kind) */
        long cnt[64], disp[64], total = 0;
        for (int i = 0; i < size; i++) {
          cnt[i] = v ? kn(1, n * ((i * 3) % (size + 1)) / (size + 1)) : n;
          disp[i] = total + (v ? 2 * (i % 3) : 0);
          total = disp[i] + cnt[i];
        }
        int *rb = rank == root ? kalloc(rk, total) : NULL;
        int *sb = kalloc(sk, cnt[rank]);
        for (long j = 0; j < cnt[rank]; j++)
          sb[kpos(sk, j)] = val(rank, j, salt);
        if (in_place && rank == root)
          for (long j = 0; j < cnt[rank]; j++)
            rb[kpos(rk, disp[rank] + j)] = val(rank, j, salt);
        int rcnt[64], rdisp[64];
        for (int i = 0; i < size; i++) {
          rcnt[i] = (int)(cnt[i] / kper(rk));
          rdisp[i] = (int)(disp[i] / kper(rk));
        }
        const void *sendbuf = in_place && rank == root ? MPI_IN_PLACE : sb;
        int rc;
        if (v)
          rc = COLL(MPI_Gatherv, MPI_Igatherv, sendbuf, (int)(cnt[rank] / kper(sk)), ktype(sk), rb, rcnt, rdisp,
                    ktype(rk), root, comm);
        else
          rc = COLL(MPI_Gather, MPI_Igather, sendbuf, (int)(n / kper(sk)), ktype(sk), rb, (int)(n / kper(rk)),
                    ktype(rk), root, comm);
        CHECK(rc == MPI_SUCCESS, "gather rc %d", rc);
        if (rank == root) {
          long bad = -1;
          int badi = -1;
          for (int i = 0; i < size && bad < 0; i++)
            for (long j = 0; j < cnt[i] && bad < 0; j++)
              if (rb[kpos(rk, disp[i] + j)] != val(i, j, salt)) {
                bad = j;
                badi = i;
              }
          CHECK(bad < 0, "gather%s n=%ld kinds=%d/%d%s root=%d: block %d int %ld wrong", v ? "v" : "", n, sk, rk,
                in_place ? " in place" : "", root, badi, bad);
          /* everything outside the blocks untouched */
          long sp = kspace(rk, total), bi = 0;
          int ok = 1;
          char *isdata = calloc((size_t)sp, 1);
          for (int i = 0; i < size; i++)
            for (long j = 0; j < cnt[i]; j++)
              isdata[kpos(rk, disp[i] + j)] = 1;
          for (bi = 0; bi < sp; bi++)
            if (!isdata[bi] && rb[bi] != GAP && rb[bi] != -1)
              ok = 0;
          free(isdata);
          CHECK(ok, "gather%s n=%ld kinds=%d/%d root=%d: wrote outside the blocks", v ? "v" : "", n, sk, rk, root);
        }
        free(rb);
        free(sb);
      }
}

static void t_scatter(MPI_Comm comm, int v)
{
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  for (int ci = 0; ci < NCOUNTS; ci++)
    for (int kp = 0; kp < NKPAIRS + 1; kp++)
      for (int root = 0; root < size; root++) {
        int in_place = (kp == NKPAIRS);
        int sk = in_place ? 1 : kpairs[kp][0], rk = in_place ? 1 : kpairs[kp][1];
        long n = kn(1, counts[ci]);
        if (counts[ci] > 1000 && size > 4 && kp != 0 && !in_place)
          continue;
        int salt = ci * 10 + kp + root + 3;
        long cnt[64], disp[64], total = 0;
        for (int i = 0; i < size; i++) {
          cnt[i] = v ? kn(1, n * ((i * 5 + 1) % (size + 1)) / (size + 1)) : n;
          disp[i] = total + (v ? 2 * ((i + 1) % 3) : 0);
          total = disp[i] + cnt[i];
        }
        int *sb = NULL;
        if (rank == root) {
          sb = kalloc(sk, total);
          for (int i = 0; i < size; i++)
            for (long j = 0; j < cnt[i]; j++)
              sb[kpos(sk, disp[i] + j)] = val(i, j, salt);
        }
        int *rb = kalloc(rk, cnt[rank]);
        int scnt[64], sdisp[64];
        for (int i = 0; i < size; i++) {
          scnt[i] = (int)(cnt[i] / kper(sk));
          sdisp[i] = (int)(disp[i] / kper(sk));
        }
        void *recvbuf = in_place && rank == root ? MPI_IN_PLACE : rb;
        int rc;
        if (v)
          rc = COLL(MPI_Scatterv, MPI_Iscatterv, sb, scnt, sdisp, ktype(sk), recvbuf, (int)(cnt[rank] / kper(rk)),
                    ktype(rk), root, comm);
        else
          rc = COLL(MPI_Scatter, MPI_Iscatter, sb, (int)(n / kper(sk)), ktype(sk), recvbuf, (int)(n / kper(rk)),
                    ktype(rk), root, comm);
        CHECK(rc == MPI_SUCCESS, "scatter rc %d", rc);
        if (in_place && rank == root) {
          /* the root's own block stays where it is, untouched */
          long bad = -1;
          for (int i = 0; i < size && bad < 0; i++)
            for (long j = 0; j < cnt[i] && bad < 0; j++)
              if (sb[kpos(sk, disp[i] + j)] != val(i, j, salt))
                bad = j;
          CHECK(bad < 0, "scatter in place root=%d: send buffer modified", root);
        } else {
          long bad = -1;
          for (long j = 0; j < cnt[rank] && bad < 0; j++)
            if (rb[kpos(rk, j)] != val(rank, j, salt))
              bad = j;
          CHECK(bad < 0, "scatter%s n=%ld kinds=%d/%d root=%d: int %ld wrong", v ? "v" : "", n, sk, rk, root, bad);
          CHECK(kgaps_ok(rk, rb, cnt[rank]), "scatter%s: holes overwritten", v ? "v" : "");
        }
        free(rb);
        free(sb);
      }
}

static void t_allgather(MPI_Comm comm, int v)
{
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  for (int ci = 0; ci < NCOUNTS; ci++)
    for (int kp = 0; kp < NKPAIRS + 1; kp++) {
      int in_place = (kp == NKPAIRS);
      int sk = in_place ? 1 : kpairs[kp][0], rk = in_place ? 1 : kpairs[kp][1];
      long n = kn(1, counts[ci]);
      if (counts[ci] > 1000 && size > 4 && kp != 0 && !in_place)
        continue;
      int salt = ci * 10 + kp + 5;
      long cnt[64], disp[64], total = 0;
      for (int i = 0; i < size; i++) {
        cnt[i] = v ? kn(1, n * ((i * 3 + 2) % (size + 1)) / (size + 1)) : n;
        disp[i] = total + (v ? 2 * (i % 2) : 0);
        total = disp[i] + cnt[i];
      }
      int *rb = kalloc(rk, total);
      int *sb = kalloc(sk, cnt[rank]);
      for (long j = 0; j < cnt[rank]; j++)
        sb[kpos(sk, j)] = val(rank, j, salt);
      if (in_place)
        for (long j = 0; j < cnt[rank]; j++)
          rb[kpos(rk, disp[rank] + j)] = val(rank, j, salt);
      int rcnt[64], rdisp[64];
      for (int i = 0; i < size; i++) {
        rcnt[i] = (int)(cnt[i] / kper(rk));
        rdisp[i] = (int)(disp[i] / kper(rk));
      }
      const void *sendbuf = in_place ? MPI_IN_PLACE : sb;
      int rc;
      if (v)
        rc = COLL(MPI_Allgatherv, MPI_Iallgatherv, sendbuf, (int)(cnt[rank] / kper(sk)), ktype(sk), rb, rcnt, rdisp,
                  ktype(rk), comm);
      else
        rc = COLL(MPI_Allgather, MPI_Iallgather, sendbuf, (int)(n / kper(sk)), ktype(sk), rb, (int)(n / kper(rk)),
                  ktype(rk), comm);
      CHECK(rc == MPI_SUCCESS, "allgather rc %d", rc);
      long bad = -1;
      int badi = -1;
      for (int i = 0; i < size && bad < 0; i++)
        for (long j = 0; j < cnt[i] && bad < 0; j++)
          if (rb[kpos(rk, disp[i] + j)] != val(i, j, salt)) {
            bad = j;
            badi = i;
          }
      CHECK(bad < 0, "allgather%s n=%ld kinds=%d/%d%s: block %d int %ld wrong", v ? "v" : "", n, sk, rk,
            in_place ? " in place" : "", badi, bad);
      free(rb);
      free(sb);
    }
}

static void t_alltoall(MPI_Comm comm, int v)
{
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  for (int ci = 0; ci < NCOUNTS; ci++)
    for (int kp = 0; kp < NKPAIRS + 1; kp++) {
      int in_place = (kp == NKPAIRS);
      int sk = in_place ? 1 : kpairs[kp][0], rk = in_place ? 1 : kpairs[kp][1];
#if defined(T_NONBLOCKING) && !defined(NMAD_MPI)
      /* Open MPI 4.1.4's in-place MPI_Ialltoallv delivers wrong data from 5 ranks on with blocks of ~50000 ints
       * (its libnbc; MPI_Alltoallv with the same arguments is right): not checked on other MPIs */
      if (in_place && v)
        continue;
#endif
      long n = kn(1, counts[ci] / size > 0 ? counts[ci] / size : counts[ci]); /* about 1 MiB per rank at most */
      int salt = ci * 10 + kp + 7;
      /* block from i to j: c(i, j) ints */
      /* (symmetric in place: the send description is the receive one). Small counts round up, so that no rank
       * has an empty block for every peer but a non-empty one for itself: with MPI_IN_PLACE, that makes Open MPI
       * 4.1.4's MPI_Ialltoallv hang the next MPI_Ialltoallv (a bug of its libnbc, not of this test). */
#define A2A_CNT(i, j) (v ? kn(1, (n * (((i) + (in_place ? 1 : 2) * (j)) % 4) + 2) / 3) : n)
      long scnt_l[64], sdisp_l[64], rcnt_l[64], rdisp_l[64], stot = 0, rtot = 0;
      for (int i = 0; i < size; i++) {
        scnt_l[i] = A2A_CNT(rank, i);
        sdisp_l[i] = stot + (v ? 2 * (i % 2) : 0);
        stot = sdisp_l[i] + scnt_l[i];
        rcnt_l[i] = A2A_CNT(i, rank);
        rdisp_l[i] = rtot + (v ? 2 * ((i + 1) % 2) : 0);
        rtot = rdisp_l[i] + rcnt_l[i];
      }
      if (in_place) {
        for (int i = 0; i < size; i++) {
          scnt_l[i] = rcnt_l[i];
          sdisp_l[i] = rdisp_l[i];
        }
        stot = rtot;
      }
      int *sb = kalloc(sk, stot), *rb = kalloc(rk, rtot);
      for (int i = 0; i < size; i++)
        for (long j = 0; j < scnt_l[i]; j++) {
          sb[kpos(sk, sdisp_l[i] + j)] = val(rank * 64 + i, j, salt);
          if (in_place)
            rb[kpos(rk, rdisp_l[i] + j)] = val(rank * 64 + i, j, salt);
        }
      int scnt[64], sdisp[64], rcnt[64], rdisp[64];
      for (int i = 0; i < size; i++) {
        scnt[i] = (int)(scnt_l[i] / kper(sk));
        sdisp[i] = (int)(sdisp_l[i] / kper(sk));
        rcnt[i] = (int)(rcnt_l[i] / kper(rk));
        rdisp[i] = (int)(rdisp_l[i] / kper(rk));
      }
      const void *sendbuf = in_place ? MPI_IN_PLACE : sb;
      int rc;
      if (v)
        rc = COLL(MPI_Alltoallv, MPI_Ialltoallv, sendbuf, scnt, sdisp, ktype(sk), rb, rcnt, rdisp, ktype(rk), comm);
      else
        rc = COLL(MPI_Alltoall, MPI_Ialltoall, sendbuf, (int)(n / kper(sk)), ktype(sk), rb, (int)(n / kper(rk)),
                  ktype(rk), comm);
      CHECK(rc == MPI_SUCCESS, "alltoall rc %d", rc);
      long bad = -1;
      int badi = -1;
      for (int i = 0; i < size && bad < 0; i++)
        for (long j = 0; j < rcnt_l[i] && bad < 0; j++)
          if (rb[kpos(rk, rdisp_l[i] + j)] != val(i * 64 + rank, j, salt)) {
            bad = j;
            badi = i;
          }
      CHECK(bad < 0, "alltoall%s n=%ld kinds=%d/%d%s: block from %d int %ld wrong", v ? "v" : "", n, sk, rk,
            in_place ? " in place" : "", badi, bad);
      free(sb);
      free(rb);
#undef A2A_CNT
    }
}

/* SUM of ints (both kinds), MAX of doubles, and the matrix product (contiguous and with holes) */
static void t_reduce(MPI_Comm comm)
{
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  for (int ci = 0; ci < NCOUNTS; ci++)
    for (int root = 0; root < size; root++)
      for (int variant = 0; variant < 3; variant++) {
        int in_place = (variant == 2);
        for (int k = 0; k < 2; k++) {
          long n = kn(k, counts[ci]);
          int salt = ci + root + k;
          int *sb = kalloc(k, n), *rb = kalloc(k, n);
          int *src = in_place && rank == root ? rb : sb;
          for (long j = 0; j < n; j++)
            src[kpos(k, j)] = val(rank, j, salt);
          int rc = COLL(MPI_Reduce, MPI_Ireduce, in_place && rank == root ? MPI_IN_PLACE : sb, rb,
                        (int)(n / kper(k)), ktype(k), ksum(k), root, comm);
          CHECK(rc == MPI_SUCCESS, "reduce rc %d", rc);
          if (rank == root) {
            long bad = -1;
            for (long j = 0; j < n && bad < 0; j++) {
              int e = 0;
              for (int i = 0; i < size; i++)
                e += val(i, j, salt);
              if (rb[kpos(k, j)] != e)
                bad = j;
            }
            CHECK(bad < 0, "reduce sum n=%ld kind=%d root=%d%s: int %ld wrong", n, k, root,
                  in_place ? " in place" : "", bad);
            CHECK(kgaps_ok(k, rb, n), "reduce: holes overwritten");
          }
          free(sb);
          free(rb);
        }
        if (variant == 1) {
          /* MAX on doubles */
          long n = counts[ci] / 2;
          double *sd = malloc(sizeof(double) * (size_t)(n + 1)), *rd = malloc(sizeof(double) * (size_t)(n + 1));
          for (long j = 0; j < n; j++)
            sd[j] = (double)val(rank, j, 9) / 7.0;
          int rc = COLL(MPI_Reduce, MPI_Ireduce, sd, rd, (int)n, MPI_DOUBLE, MPI_MAX, root, comm);
          CHECK(rc == MPI_SUCCESS, "reduce max rc %d", rc);
          if (rank == root) {
            long bad = -1;
            for (long j = 0; j < n && bad < 0; j++) {
              double e = 0;
              for (int i = 0; i < size; i++)
                if ((double)val(i, j, 9) / 7.0 > e)
                  e = (double)val(i, j, 9) / 7.0;
              if (rd[j] != e)
                bad = j;
            }
            CHECK(bad < 0, "reduce max double n=%ld root=%d: %ld wrong", n, root, bad);
          }
          free(sd);
          free(rd);
        }
        /* non-commutative user op: canonical order */
        for (int holes = 0; holes < 2; holes++) {
          long n = counts[ci] / 16;
          int *sb = mat_alloc(holes, n), *rb = mat_alloc(holes, n);
          mat_fill(in_place && rank == root ? rb : sb, holes, n, rank);
          int rc = COLL(MPI_Reduce, MPI_Ireduce, in_place && rank == root ? MPI_IN_PLACE : sb, rb, (int)n,
                        holes ? mat_v : mat_c, op_mat, root, comm);
          CHECK(rc == MPI_SUCCESS, "reduce mat rc %d", rc);
          if (rank == root)
            CHECK(mat_check(rb, holes, n, 0, 0, size), "reduce non-commutative n=%ld holes=%d root=%d%s: wrong", n,
                  holes, root, in_place ? " in place" : "");
          free(sb);
          free(rb);
        }
      }
}

static void t_allreduce(MPI_Comm comm)
{
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  for (int ci = 0; ci < NCOUNTS; ci++)
    for (int in_place = 0; in_place < 2; in_place++) {
      for (int k = 0; k < 2; k++) {
        long n = kn(k, counts[ci]);
        int salt = ci + k + 11;
        int *sb = kalloc(k, n), *rb = kalloc(k, n);
        for (long j = 0; j < n; j++)
          (in_place ? rb : sb)[kpos(k, j)] = val(rank, j, salt);
        int rc = COLL(MPI_Allreduce, MPI_Iallreduce, in_place ? MPI_IN_PLACE : sb, rb, (int)(n / kper(k)), ktype(k),
                      ksum(k), comm);
        CHECK(rc == MPI_SUCCESS, "allreduce rc %d", rc);
        long bad = -1;
        for (long j = 0; j < n && bad < 0; j++) {
          int e = 0;
          for (int i = 0; i < size; i++)
            e += val(i, j, salt);
          if (rb[kpos(k, j)] != e)
            bad = j;
        }
        CHECK(bad < 0, "allreduce sum n=%ld kind=%d%s: int %ld wrong", n, k, in_place ? " in place" : "", bad);
        CHECK(kgaps_ok(k, rb, n), "allreduce: holes overwritten");
        free(sb);
        free(rb);
      }
      for (int holes = 0; holes < 2; holes++) {
        long n = counts[ci] / 16;
        int *sb = mat_alloc(holes, n), *rb = mat_alloc(holes, n);
        mat_fill(in_place ? rb : sb, holes, n, rank);
        int rc = COLL(MPI_Allreduce, MPI_Iallreduce, in_place ? MPI_IN_PLACE : sb, rb, (int)n, holes ? mat_v : mat_c,
                      op_mat, comm);
        CHECK(rc == MPI_SUCCESS, "allreduce mat rc %d", rc);
        CHECK(mat_check(rb, holes, n, 0, 0, size), "allreduce non-commutative n=%ld holes=%d%s: wrong", n, holes,
              in_place ? " in place" : "");
        free(sb);
        free(rb);
      }
      {
        long n = counts[ci] / 2;
        double *sd = malloc(sizeof(double) * (size_t)(n + 1)), *rd = malloc(sizeof(double) * (size_t)(n + 1));
        for (long j = 0; j < n; j++)
          (in_place ? rd : sd)[j] = (double)val(rank, j, 4) / 3.0;
        int rc = COLL(MPI_Allreduce, MPI_Iallreduce, in_place ? MPI_IN_PLACE : sd, rd, (int)n, MPI_DOUBLE, MPI_MAX,
                      comm);
        CHECK(rc == MPI_SUCCESS, "allreduce max rc %d", rc);
        long bad = -1;
        for (long j = 0; j < n && bad < 0; j++) {
          double e = 0;
          for (int i = 0; i < size; i++)
            if ((double)val(i, j, 4) / 3.0 > e)
              e = (double)val(i, j, 4) / 3.0;
          if (rd[j] != e)
            bad = j;
        }
        CHECK(bad < 0, "allreduce max double n=%ld: %ld wrong", n, bad);
        free(sd);
        free(rd);
      }
    }
}

static void t_reduce_scatter(MPI_Comm comm, int block)
{
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  for (int ci = 0; ci < NCOUNTS; ci++)
    for (int in_place = 0; in_place < 2; in_place++) {
      long n = counts[ci] / size; /* per rank, about */
      int rc_i[64];
      long off[64], total = 0;
      for (int i = 0; i < size; i++) {
        rc_i[i] = (int)(block ? n : n * ((i * 7 + 3) % 5) / 4);
        off[i] = total;
        total += rc_i[i];
      }
      for (int k = 0; k < 2; k++) {
        /* kind 1: counts in vector elements (2 ints each) */
        long per = kper(k);
        int salt = ci + k + 13;
        int *sb = kalloc(k, total * per), *rb = kalloc(k, total * per);
        for (long j = 0; j < total * per; j++)
          (in_place ? rb : sb)[kpos(k, j)] = val(rank, j, salt);
        int rc;
        if (block)
          rc = COLL(MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, in_place ? MPI_IN_PLACE : sb, rb, rc_i[0],
                    ktype(k), ksum(k), comm);
        else
          rc = COLL(MPI_Reduce_scatter, MPI_Ireduce_scatter, in_place ? MPI_IN_PLACE : sb, rb, rc_i, ktype(k),
                    ksum(k), comm);
        CHECK(rc == MPI_SUCCESS, "reduce_scatter rc %d", rc);
        long bad = -1;
        for (long j = 0; j < rc_i[rank] * per && bad < 0; j++) {
          int e = 0;
          for (int i = 0; i < size; i++)
            e += val(i, off[rank] * per + j, salt);
          if (rb[kpos(k, j)] != e)
            bad = j;
        }
        CHECK(bad < 0, "reduce_scatter%s n=%ld kind=%d%s: int %ld wrong", block ? "_block" : "", n, k,
              in_place ? " in place" : "", bad);
        free(sb);
        free(rb);
      }
      for (int holes = 0; holes < 2; holes++) {
        long nm = n / 16 + (n ? 1 : 0);
        int mc[64];
        long moff[64], mtot = 0;
        for (int i = 0; i < size; i++) {
          mc[i] = block ? (int)nm : (int)(nm * ((i + 1) % 3));
          moff[i] = mtot;
          mtot += mc[i];
        }
        int *sb = mat_alloc(holes, mtot), *rb = mat_alloc(holes, mtot);
        mat_fill(in_place ? rb : sb, holes, mtot, rank);
        int rc;
        if (block)
          rc = COLL(MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, in_place ? MPI_IN_PLACE : sb, rb, mc[0],
                    holes ? mat_v : mat_c, op_mat, comm);
        else
          rc = COLL(MPI_Reduce_scatter, MPI_Ireduce_scatter, in_place ? MPI_IN_PLACE : sb, rb, mc,
                    holes ? mat_v : mat_c, op_mat, comm);
        CHECK(rc == MPI_SUCCESS, "reduce_scatter mat rc %d", rc);
        /* the piece is at the start of rb; check it, ignoring what lies after it */
        int stride = holes ? 5 : 4, ok = 1;
        for (long i = 0; i < mc[rank] && ok; i++) {
          int m[4], e[4];
          mat_get(rb + i * stride, holes, m);
          mat_prod(0, size, moff[rank] + i, e);
          ok = !memcmp(m, e, sizeof(m)) && (!holes || rb[i * stride + 2] == GAP);
        }
        CHECK(ok, "reduce_scatter%s non-commutative holes=%d%s: wrong", block ? "_block" : "", holes,
              in_place ? " in place" : "");
        free(sb);
        free(rb);
      }
    }
}

static void t_scan(MPI_Comm comm, int exclusive)
{
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  for (int ci = 0; ci < NCOUNTS; ci++)
    for (int in_place = 0; in_place < 2; in_place++) {
      for (int k = 0; k < 2; k++) {
        long n = kn(k, counts[ci]);
        int salt = ci + k + 17;
        int *sb = kalloc(k, n), *rb = kalloc(k, n);
        for (long j = 0; j < n; j++)
          (in_place ? rb : sb)[kpos(k, j)] = val(rank, j, salt);
        int rc = exclusive ? COLL(MPI_Exscan, MPI_Iexscan, in_place ? MPI_IN_PLACE : sb, rb, (int)(n / kper(k)),
                                  ktype(k), ksum(k), comm)
                           : COLL(MPI_Scan, MPI_Iscan, in_place ? MPI_IN_PLACE : sb, rb, (int)(n / kper(k)),
                                  ktype(k), ksum(k), comm);
        CHECK(rc == MPI_SUCCESS, "scan rc %d", rc);
        if (!exclusive || rank > 0) {
          long bad = -1;
          for (long j = 0; j < n && bad < 0; j++) {
            int e = 0;
            for (int i = 0; i < rank + !exclusive; i++)
              e += val(i, j, salt);
            if (rb[kpos(k, j)] != e)
              bad = j;
          }
          CHECK(bad < 0, "%s n=%ld kind=%d%s: int %ld wrong", exclusive ? "exscan" : "scan", n, k,
                in_place ? " in place" : "", bad);
          CHECK(kgaps_ok(k, rb, n), "scan: holes overwritten");
        }
        free(sb);
        free(rb);
      }
      for (int holes = 0; holes < 2; holes++) {
        long n = counts[ci] / 16;
        int *sb = mat_alloc(holes, n), *rb = mat_alloc(holes, n);
        mat_fill(in_place ? rb : sb, holes, n, rank);
        int rc = exclusive ? COLL(MPI_Exscan, MPI_Iexscan, in_place ? MPI_IN_PLACE : sb, rb, (int)n,
                                  holes ? mat_v : mat_c, op_mat, comm)
                           : COLL(MPI_Scan, MPI_Iscan, in_place ? MPI_IN_PLACE : sb, rb, (int)n,
                                  holes ? mat_v : mat_c, op_mat, comm);
        CHECK(rc == MPI_SUCCESS, "scan mat rc %d", rc);
        if (!exclusive || rank > 0)
          CHECK(mat_check(rb, holes, n, 0, 0, rank + !exclusive), "%s non-commutative n=%ld holes=%d%s: wrong",
                exclusive ? "exscan" : "scan", n, holes, in_place ? " in place" : "");
        free(sb);
        free(rb);
      }
    }
}

static int err_class(int rc)
{
  int cls = rc;
  if (rc != MPI_SUCCESS)
    MPI_Error_class(rc, &cls);
  return cls;
}

static void t_errors(void)
{
  int size, x[4] = {0}, y[4] = {0}, cnts[64], displs[64];
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 0; i < size; i++) {
    cnts[i] = 1;
    displs[i] = i;
  }
  int *big = calloc((size_t)size * 4, sizeof(int));
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  CHECK(err_class(COLL(MPI_Bcast, MPI_Ibcast, x, 1, MPI_INT, size, MPI_COMM_WORLD)) == MPI_ERR_ROOT, "bcast root");
  CHECK(err_class(COLL(MPI_Bcast, MPI_Ibcast, x, 1, MPI_INT, -1, MPI_COMM_WORLD)) == MPI_ERR_ROOT, "bcast root -1");
  CHECK(err_class(COLL(MPI_Bcast, MPI_Ibcast, x, -1, MPI_INT, 0, MPI_COMM_WORLD)) == MPI_ERR_COUNT, "bcast count");
  CHECK(err_class(COLL(MPI_Bcast, MPI_Ibcast, x, 1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD)) == MPI_ERR_TYPE,
        "bcast type");
  CHECK(err_class(COLL(MPI_Bcast, MPI_Ibcast, x, 1, MPI_INT, 0, MPI_COMM_NULL)) == MPI_ERR_COMM, "bcast comm");
  /* nmad remembers the broadcast model's choice per communicator and length, and reads NMAD_BCAST_ALGO once, at
   * MPI_Init (as every NMAD_<COLLECTIVE>_ALGO: doc/collectives.md): an override set afterwards, even an invalid
   * one, changes nothing (the launch-time one, tests/mpi/bcast-algos.sh, does). Other libraries ignore it. */
  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  int lib_len = 0;
  MPI_Get_library_version(lib, &lib_len);
  if (strstr(lib, "nmad") && size > 1) {
    const char *was = getenv("NMAD_BCAST_ALGO");
    char *saved = was ? strdup(was) : NULL;
    unsetenv("NMAD_BCAST_ALGO");
    CHECK(COLL(MPI_Bcast, MPI_Ibcast, x, 3, MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS, "bcast by the model");
    CHECK(COLL(MPI_Bcast, MPI_Ibcast, x, 3, MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS, "bcast remembered");
    setenv("NMAD_BCAST_ALGO", "no_such_algo", 1);
    CHECK(COLL(MPI_Bcast, MPI_Ibcast, x, 3, MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS,
          "bcast: an override set after MPI_Init is not read");
    if (saved)
      setenv("NMAD_BCAST_ALGO", saved, 1);
    else
      unsetenv("NMAD_BCAST_ALGO");
    free(saved);
    CHECK(COLL(MPI_Bcast, MPI_Ibcast, x, 3, MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS, "bcast after the override");
  }
  CHECK(err_class(COLL(MPI_Barrier, MPI_Ibarrier, MPI_COMM_NULL)) == MPI_ERR_COMM, "barrier comm");
  CHECK(err_class(COLL(MPI_Gather, MPI_Igather, x, 1, MPI_INT, big, 1, MPI_INT, size, MPI_COMM_WORLD)) ==
            MPI_ERR_ROOT,
        "gather root");
  CHECK(err_class(COLL(MPI_Scatter, MPI_Iscatter, big, 1, MPI_INT, x, 1, MPI_INT, -2, MPI_COMM_WORLD)) ==
            MPI_ERR_ROOT,
        "scatter root");
  CHECK(err_class(COLL(MPI_Gatherv, MPI_Igatherv, x, 1, MPI_INT, big, cnts, displs, MPI_INT, size,
                       MPI_COMM_WORLD)) == MPI_ERR_ROOT,
        "gatherv root");
  CHECK(err_class(COLL(MPI_Allgather, MPI_Iallgather, x, -1, MPI_INT, big, 1, MPI_INT, MPI_COMM_WORLD)) ==
            MPI_ERR_COUNT,
        "allgather count");
  CHECK(err_class(COLL(MPI_Alltoall, MPI_Ialltoall, x, 1, MPI_DATATYPE_NULL, big, 1, MPI_INT, MPI_COMM_WORLD)) ==
            MPI_ERR_TYPE,
        "alltoall type");
  CHECK(err_class(COLL(MPI_Reduce, MPI_Ireduce, x, y, 1, MPI_INT, MPI_OP_NULL, 0, MPI_COMM_WORLD)) == MPI_ERR_OP,
        "reduce op null");
  CHECK(err_class(COLL(MPI_Reduce, MPI_Ireduce, x, y, 1, MPI_INT, MPI_SUM, size, MPI_COMM_WORLD)) == MPI_ERR_ROOT,
        "reduce root");
  CHECK(err_class(COLL(MPI_Allreduce, MPI_Iallreduce, x, y, 1, MPI_FLOAT, MPI_BAND, MPI_COMM_WORLD)) == MPI_ERR_OP,
        "allreduce band on floats");
  CHECK(err_class(COLL(MPI_Allreduce, MPI_Iallreduce, x, y, -3, MPI_INT, MPI_SUM, MPI_COMM_WORLD)) == MPI_ERR_COUNT,
        "allreduce count");
  /* which of the two is checked first is not specified (Open MPI reports MPI_ERR_OP) */
  int cls = err_class(COLL(MPI_Scan, MPI_Iscan, x, y, 1, MPI_DATATYPE_NULL, MPI_SUM, MPI_COMM_WORLD));
  CHECK(cls == MPI_ERR_TYPE || cls == MPI_ERR_OP, "scan type");
  CHECK(err_class(COLL(MPI_Exscan, MPI_Iexscan, x, y, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD)) == MPI_ERR_OP,
        "exscan op");
  /* still working after the errors */
  x[0] = 1;
  CHECK(COLL(MPI_Allreduce, MPI_Iallreduce, x, y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS &&
            y[0] == size,
        "allreduce after errors");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  free(big);
}

/* Whether @p label contains one of the comma-separated texts of @p only. */
static int selected(const char *only, const char *label)
{
  char buf[256];
  snprintf(buf, sizeof(buf), "%s", only);
  for (char *tok = buf, *end; tok; tok = end ? end + 1 : NULL) {
    end = strchr(tok, ',');
    if (end)
      *end = '\0';
    if (*tok && strstr(label, tok))
      return 1;
  }
  return 0;
}

/* Collectives of different kinds and roots back to back, with no barrier between them and one rank delayed in
 * turn (the others run ahead, so messages of later collectives arrive before earlier ones are done), while a
 * non-blocking allreduce and barrier of the same communicator stay outstanding across them all. The MPI shim
 * gives every blocking collective of a communicator one tag (mpi_coll_sched.h): this is what its pairing by
 * per-(peer, tag) order must survive. */
static void t_interleaved(MPI_Comm comm)
{
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int pending_in = rank + 1, pending_out = 0, sum = size * (size + 1) / 2;
  MPI_Request pending[2];
  CHECK(MPI_Iallreduce(&pending_in, &pending_out, 1, MPI_INT, MPI_SUM, comm, &pending[0]) == MPI_SUCCESS, "iallreduce");
  CHECK(MPI_Ibarrier(comm, &pending[1]) == MPI_SUCCESS, "ibarrier");
  enum { MAXN = 300 };
  int *b = malloc(sizeof(int) * MAXN), *all = malloc(sizeof(int) * MAXN * (size_t)size);
  for (int i = 0; i < 40; i++) {
    if (rank == i % size) { /* this one lags: the others post the next collectives first */
      volatile double x = 0;
      for (int k = 0; k < 20000; k++)
        x += k * 0.5;
    }
    int n = 1 + (i * 37) % MAXN, root = i % size;
    for (int j = 0; j < n; j++)
      b[j] = rank == root ? val(root, j, i) : -1;
    CHECK(COLL(MPI_Bcast, MPI_Ibcast, b, n, MPI_INT, root, comm) == MPI_SUCCESS, "bcast %d", i);
    for (int j = 0; j < n; j++)
      CHECK(b[j] == val(root, j, i), "bcast %d: [%d] = %d", i, j, b[j]);
    int mine = val(rank, i, 1), r = -1, rroot = (i + 1) % size;
    CHECK(COLL(MPI_Reduce, MPI_Ireduce, &mine, &r, 1, MPI_INT, MPI_MAX, rroot, comm) == MPI_SUCCESS, "reduce %d", i);
    if (rank == rroot) {
      int want = 0;
      for (int q = 0; q < size; q++)
        want = val(q, i, 1) > want ? val(q, i, 1) : want;
      CHECK(r == want, "reduce %d: %d, want %d", i, r, want);
    }
    int groot = (i + 2) % size, m = 1 + i % 7;
    for (int j = 0; j < m; j++)
      b[j] = val(rank, j, i + 3);
    CHECK(COLL(MPI_Gather, MPI_Igather, b, m, MPI_INT, all, m, MPI_INT, groot, comm) == MPI_SUCCESS, "gather %d", i);
    if (rank == groot)
      for (int q = 0; q < size; q++)
        for (int j = 0; j < m; j++)
          CHECK(all[q * m + j] == val(q, j, i + 3), "gather %d: from %d [%d]", i, q, j);
    int x = rank + i, y = -1;
    CHECK(COLL(MPI_Allreduce, MPI_Iallreduce, &x, &y, 1, MPI_INT, MPI_SUM, comm) == MPI_SUCCESS, "allreduce %d", i);
    CHECK(y == sum - size + size * i, "allreduce %d: %d", i, y);
  }
  CHECK(MPI_Waitall(2, pending, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "waitall");
  CHECK(pending_out == sum, "iallreduce across them: %d, want %d", pending_out, sum);
  free(b);
  free(all);
}

static void suite(MPI_Comm comm, const char *name)
{
  char what[128];
  if (comm != MPI_COMM_NULL)
    MPI_Comm_dup(comm, &side_comm);
  const char *only = getenv("T_ONLY"); /* run only the sections whose label contains this */
#define SECTION(call, label)                                                                                       \
  do {                                                                                                             \
    if (only && !selected(only, label))                                                                            \
      break;                                                                                                       \
    if (comm != MPI_COMM_NULL)                                                                                     \
      call;                                                                                                        \
    snprintf(what, sizeof(what), "%s%s %s", MODE, label, name);                                                   \
    section(what);                                                                                                 \
  } while (0)
  SECTION(t_barrier(comm), "barrier");
  SECTION(t_bcast(comm), "bcast");
  SECTION(t_gather(comm, 0), "gather");
  SECTION(t_gather(comm, 1), "gatherv");
  SECTION(t_scatter(comm, 0), "scatter");
  SECTION(t_scatter(comm, 1), "scatterv");
  SECTION(t_allgather(comm, 0), "allgather");
  SECTION(t_allgather(comm, 1), "allgatherv");
  SECTION(t_alltoall(comm, 0), "alltoall");
  SECTION(t_alltoall(comm, 1), "alltoallv");
  SECTION(t_reduce(comm), "reduce");
  SECTION(t_allreduce(comm), "allreduce");
  SECTION(t_reduce_scatter(comm, 0), "reduce_scatter");
  SECTION(t_reduce_scatter(comm, 1), "reduce_scatter_block");
  SECTION(t_scan(comm, 0), "scan");
  SECTION(t_scan(comm, 1), "exscan");
  SECTION(t_interleaved(comm), "interleaved");
#undef SECTION
  if (comm != MPI_COMM_NULL)
    MPI_Comm_free(&side_comm);
}

#ifdef T_NONBLOCKING
static void t_extra(void);
#endif

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Comm_size(MPI_COMM_WORLD, &wsize);
  if (wsize > 64) {
    if (wrank == 0)
      printf("FAIL more than 64 ranks are not supported by this test\n");
    MPI_Finalize();
    return 1;
  }
  MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  MPI_Type_vector(1, 4, 4, MPI_INT, &mat_c);
  MPI_Type_commit(&mat_c);
  MPI_Type_vector(2, 2, 3, MPI_INT, &mat_v);
  MPI_Type_commit(&mat_v);
  MPI_Op_create(mat_fn, 0, &op_mat);
  MPI_Op_create(sum_fn, 1, &op_sum);

  suite(MPI_COMM_WORLD, "world");
  /* the odd ranks then the even ones, in reverse order: ranks differ from world ranks */
  MPI_Comm split;
  MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wsize - wrank, &split);
  suite(split, "split");
  MPI_Comm_free(&split);
  MPI_Comm_dup(MPI_COMM_WORLD, &side_comm);
  t_errors();
  section(MODE "errors");
#ifdef T_NONBLOCKING
  t_extra();
#endif
  MPI_Comm_free(&side_comm);

  MPI_Op_free(&op_mat);
  MPI_Op_free(&op_sum);
  MPI_Type_free(&vec);
  MPI_Type_free(&mat_c);
  MPI_Type_free(&mat_v);
  MPI_Finalize();
  return any_fail;
}
