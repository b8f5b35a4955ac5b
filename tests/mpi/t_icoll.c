/* Non-blocking collectives test (plain MPI: also runs with Open MPI), any number of ranks (1..8 and more).
 *
 * 1. The whole suite of t_coll.c with every collective replaced by its MPI_I* version: posted, overlapped with
 *    computation that calls MPI_Test on another request (an MPI_Ibarrier on another communicator), then waited for.
 * 2. Progress: a 1 MiB MPI_Ibcast must reach ranks that wait for it while the forwarding ranks only call MPI_Test on
 *    another request (an MPI_Ibarrier the waiting ranks join only once they have the data): this deadlocks unless a
 *    collective progresses from any MPI call. Both parities in turn, then the same with MPI_Iallreduce.
 * 3. Several outstanding collectives at once, on one communicator and on three (world, a duplicate, a split one),
 *    completed in reverse order, with MPI_Waitall, and by polling with MPI_Testall; 32 MPI_Iallreduce in flight;
 *    blocking collectives issued while non-blocking ones are pending; communicators freed while collectives on
 *    them are pending (nmad only: Open MPI 4.1.4 crashes).
 * Output: "PASS <what>" / "FAIL <what>" on rank 0; exit status 1 on failure.
 */
#define T_NONBLOCKING 1
#include "t_coll.c"

#define BIG 262144 /* ints: 1 MiB */

/* ---- 2. progress from other requests */

static void t_progress(void)
{
  for (int parity = 0; parity < 2; parity++) {
    int *b = malloc(sizeof(int) * BIG);
    MPI_Request bc, bar;
    for (int j = 0; j < BIG; j++)
      b[j] = wrank == 0 ? val(0, j, 77 + parity) : -1;
    MPI_Ibcast(b, BIG, MPI_INT, 0, MPI_COMM_WORLD, &bc);
    if (wrank % 2 == parity) {
      /* only ever test the other request until it completes, then wait for the broadcast */
      int flag = 0;
      MPI_Ibarrier(side_comm, &bar);
      while (!flag)
        MPI_Test(&bar, &flag, MPI_STATUS_IGNORE);
      MPI_Wait(&bc, MPI_STATUS_IGNORE);
    } else {
      MPI_Wait(&bc, MPI_STATUS_IGNORE);
      MPI_Ibarrier(side_comm, &bar);
      MPI_Wait(&bar, MPI_STATUS_IGNORE);
    }
    long bad = -1;
    for (long j = 0; j < BIG && bad < 0; j++)
      if (b[j] != val(0, j, 77 + parity))
        bad = j;
    CHECK(bad < 0, "progress bcast parity %d: int %ld wrong", parity, bad);
    free(b);
  }
  for (int parity = 0; parity < 2; parity++) {
    int *s = malloc(sizeof(int) * BIG), *r = malloc(sizeof(int) * BIG);
    MPI_Request ar, bar;
    for (int j = 0; j < BIG; j++)
      s[j] = val(wrank, j, 5);
    MPI_Iallreduce(s, r, BIG, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &ar);
    if (wrank % 2 == parity) {
      int flag = 0;
      MPI_Ibarrier(side_comm, &bar);
      while (!flag)
        MPI_Test(&bar, &flag, MPI_STATUS_IGNORE);
      MPI_Wait(&ar, MPI_STATUS_IGNORE);
    } else {
      MPI_Wait(&ar, MPI_STATUS_IGNORE);
      MPI_Ibarrier(side_comm, &bar);
      MPI_Wait(&bar, MPI_STATUS_IGNORE);
    }
    long bad = -1;
    for (long j = 0; j < BIG && bad < 0; j++) {
      int e = 0;
      for (int i = 0; i < wsize; i++)
        e += val(i, j, 5);
      if (r[j] != e)
        bad = j;
    }
    CHECK(bad < 0, "progress allreduce parity %d: int %ld wrong", parity, bad);
    free(s);
    free(r);
  }
}

/* ---- 3. several outstanding collectives */

struct pending {
  MPI_Comm c[3];
  int size[3], rank[3];
  int *bc;          /* c0: Ibcast 1 MiB from the last rank */
  int *a2as, *a2ar; /* c0: Ialltoall 100 ints per block */
  int *gs, *gr;     /* c0: Igather of 10 ints to rank 0 */
  int *ars, *arr;   /* c1: Iallreduce 1000 ints */
  int *ms, *mr;     /* c1: Iscan of 50 matrices (non-commutative) */
  int *ags, *agr;   /* c2: Iallgather of 7 ints, then Ibarrier */
};

/* Post 7 collectives on c0, c1, c2 (possibly the same communicator) into reqs[7]. */
static void pending_post(struct pending *p, MPI_Comm c0, MPI_Comm c1, MPI_Comm c2, MPI_Request *reqs, int salt)
{
  p->c[0] = c0;
  p->c[1] = c1;
  p->c[2] = c2;
  for (int i = 0; i < 3; i++) {
    MPI_Comm_size(p->c[i], &p->size[i]);
    MPI_Comm_rank(p->c[i], &p->rank[i]);
  }
  int s0 = p->size[0], r0 = p->rank[0], r1 = p->rank[1], s2 = p->size[2], r2 = p->rank[2];
  p->bc = malloc(sizeof(int) * BIG);
  for (int j = 0; j < BIG; j++)
    p->bc[j] = r0 == s0 - 1 ? val(s0 - 1, j, salt) : -1;
  p->a2as = malloc(sizeof(int) * 100 * (size_t)s0);
  p->a2ar = malloc(sizeof(int) * 100 * (size_t)s0);
  for (int i = 0; i < s0; i++)
    for (int j = 0; j < 100; j++)
      p->a2as[i * 100 + j] = val(r0 * 64 + i, j, salt + 2);
  p->gs = malloc(sizeof(int) * 10);
  p->gr = malloc(sizeof(int) * 10 * (size_t)s0);
  for (int j = 0; j < 10; j++)
    p->gs[j] = val(r0, j, salt + 3);
  p->ars = malloc(sizeof(int) * 1000);
  p->arr = malloc(sizeof(int) * 1000);
  for (int j = 0; j < 1000; j++)
    p->ars[j] = val(r1, j, salt + 1);
  p->ms = mat_alloc(0, 50);
  p->mr = mat_alloc(0, 50);
  mat_fill(p->ms, 0, 50, r1);
  p->ags = malloc(sizeof(int) * 7);
  p->agr = malloc(sizeof(int) * 7 * (size_t)s2);
  for (int j = 0; j < 7; j++)
    p->ags[j] = val(r2, j, salt + 4);
  MPI_Ibcast(p->bc, BIG, MPI_INT, s0 - 1, c0, &reqs[0]);
  MPI_Iallreduce(p->ars, p->arr, 1000, MPI_INT, MPI_SUM, c1, &reqs[1]);
  MPI_Ialltoall(p->a2as, 100, MPI_INT, p->a2ar, 100, MPI_INT, c0, &reqs[2]);
  MPI_Igather(p->gs, 10, MPI_INT, p->gr, 10, MPI_INT, 0, c0, &reqs[3]);
  MPI_Iscan(p->ms, p->mr, 50, mat_c, op_mat, c1, &reqs[4]);
  MPI_Iallgather(p->ags, 7, MPI_INT, p->agr, 7, MPI_INT, c2, &reqs[5]);
  MPI_Ibarrier(c2, &reqs[6]);
}

static void pending_check(struct pending *p, int salt, const char *how)
{
  int s0 = p->size[0], r0 = p->rank[0], s1 = p->size[1], r1 = p->rank[1], s2 = p->size[2], ok;
  ok = 1;
  for (int j = 0; j < BIG && ok; j++)
    ok = p->bc[j] == val(s0 - 1, j, salt);
  CHECK(ok, "%s: ibcast wrong", how);
  ok = 1;
  for (int i = 0; i < s0 && ok; i++)
    for (int j = 0; j < 100 && ok; j++)
      ok = p->a2ar[i * 100 + j] == val(i * 64 + r0, j, salt + 2);
  CHECK(ok, "%s: ialltoall wrong", how);
  ok = 1;
  if (r0 == 0)
    for (int i = 0; i < s0 && ok; i++)
      for (int j = 0; j < 10 && ok; j++)
        ok = p->gr[i * 10 + j] == val(i, j, salt + 3);
  CHECK(ok, "%s: igather wrong", how);
  ok = 1;
  for (int j = 0; j < 1000 && ok; j++) {
    int e = 0;
    for (int i = 0; i < s1; i++)
      e += val(i, j, salt + 1);
    ok = p->arr[j] == e;
  }
  CHECK(ok, "%s: iallreduce wrong", how);
  CHECK(mat_check(p->mr, 0, 50, 0, 0, r1 + 1), "%s: iscan wrong", how);
  ok = 1;
  for (int i = 0; i < s2 && ok; i++)
    for (int j = 0; j < 7 && ok; j++)
      ok = p->agr[i * 7 + j] == val(i, j, salt + 4);
  CHECK(ok, "%s: iallgather wrong", how);
  free(p->bc);
  free(p->ars);
  free(p->arr);
  free(p->a2as);
  free(p->a2ar);
  free(p->gs);
  free(p->gr);
  free(p->ms);
  free(p->mr);
  free(p->ags);
  free(p->agr);
}

static void t_icoll_plus(void *in, void *inout, int *len, MPI_Datatype *dt)
{
  (void)dt;
  for (int i = 0; i < *len; i++)
    ((int *)inout)[i] += ((const int *)in)[i];
}

static void t_outstanding(void)
{
  MPI_Comm dup, split;
  MPI_Request reqs[7];
  struct pending p;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_split(MPI_COMM_WORLD, wrank % 3, -wrank, &split);

  /* all on one communicator, waited for in reverse order */
  pending_post(&p, MPI_COMM_WORLD, MPI_COMM_WORLD, MPI_COMM_WORLD, reqs, 100);
  for (int i = 6; i >= 0; i--)
    CHECK(MPI_Wait(&reqs[i], MPI_STATUS_IGNORE) == MPI_SUCCESS && reqs[i] == MPI_REQUEST_NULL, "wait %d", i);
  pending_check(&p, 100, "one communicator, reverse waits");

  /* on three communicators, MPI_Waitall */
  pending_post(&p, MPI_COMM_WORLD, dup, split, reqs, 200);
  CHECK(MPI_Waitall(7, reqs, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "waitall");
  pending_check(&p, 200, "three communicators, waitall");

  /* on three communicators (other roles), polled with MPI_Testall while computing */
  pending_post(&p, split, dup, MPI_COMM_WORLD, reqs, 300);
  {
    int flag = 0;
    volatile double x = 0;
    while (!flag) {
      for (int k = 0; k < 1000; k++)
        x += k;
      CHECK(MPI_Testall(7, reqs, &flag, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "testall");
    }
  }
  pending_check(&p, 300, "three communicators, testall");

  /* 32 allreduces in flight on one communicator, with blocking collectives in the middle */
  {
    enum { N = 32, LEN = 3000 };
    int *s = malloc(sizeof(int) * N * LEN), *r = malloc(sizeof(int) * N * LEN), x = 1, y = 0;
    MPI_Request rq[N];
    for (int k = 0; k < N; k++) {
      for (int j = 0; j < LEN; j++)
        s[k * LEN + j] = val(wrank, j, k);
      MPI_Iallreduce(s + k * LEN, r + k * LEN, LEN, MPI_INT, k % 2 ? MPI_MAX : MPI_SUM, MPI_COMM_WORLD, &rq[k]);
      if (k == N / 2) {
        MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK(y == wsize, "blocking allreduce among non-blocking ones");
      }
    }
    MPI_Barrier(dup);
    CHECK(MPI_Waitall(N, rq, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "waitall 32");
    int ok = 1;
    for (int k = 0; k < N && ok; k++)
      for (int j = 0; j < LEN && ok; j++) {
        int e = 0;
        for (int i = 0; i < wsize; i++) {
          int v = val(i, j, k);
          e = k % 2 ? (i == 0 || v > e ? v : e) : e + v;
        }
        ok = r[k * LEN + j] == e;
      }
    CHECK(ok, "32 outstanding allreduces wrong");
    free(s);
    free(r);
  }
  /* communicators freed while collectives on them are pending: they complete normally (MPI-3.1 6.4.3).
   * nmad only: Open MPI 4.1.4's libnbc crashes on this (segmentation fault in mca_pml_ob1_isend). */
#ifdef NMAD_MPI
  {
    MPI_Comm tmp;
    MPI_Request q[2];
    int x = wrank, y = -1, *b = malloc(sizeof(int) * BIG);
    for (int j = 0; j < BIG; j++)
      b[j] = wrank == 0 ? val(0, j, 55) : -1;
    MPI_Comm_dup(MPI_COMM_WORLD, &tmp);
    MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, tmp, &q[0]);
    MPI_Ibcast(b, BIG, MPI_INT, 0, tmp, &q[1]);
    MPI_Comm_free(&tmp);
    CHECK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "waitall after comm_free");
    CHECK(y == wsize * (wsize - 1) / 2, "iallreduce on a freed communicator: %d", y);
    int ok = 1;
    for (int j = 0; j < BIG && ok; j++)
      ok = b[j] == val(0, j, 55);
    CHECK(ok, "ibcast on a freed communicator wrong");
    free(b);
  }
#endif
  /* a user op freed while collectives using it are pending: they complete normally (MPI-3.1 5.9.5; the MPICH
   * suite's coll/nonblocking2 does this) */
  {
    MPI_Op plus;
    MPI_Request q[2];
    int x = wrank + 1, y = -1, z = -1;
    MPI_Op_create(t_icoll_plus, 1, &plus);
    MPI_Iallreduce(&x, &y, 1, MPI_INT, plus, MPI_COMM_WORLD, &q[0]);
    MPI_Ireduce(&x, &z, 1, MPI_INT, plus, 0, dup, &q[1]);
    CHECK(MPI_Op_free(&plus) == MPI_SUCCESS && plus == MPI_OP_NULL, "op_free while pending");
    CHECK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "waitall after op_free");
    CHECK(y == wsize * (wsize + 1) / 2, "iallreduce with a freed op: %d", y);
    CHECK(wrank != 0 || z == wsize * (wsize + 1) / 2, "ireduce with a freed op: %d", z);
  }
  MPI_Comm_free(&dup);
  MPI_Comm_free(&split);
}

static void t_extra(void)
{
  t_progress();
  section("Iprogress from MPI_Test on another request");
  t_outstanding();
  section("Ioutstanding collectives on several communicators");
}
