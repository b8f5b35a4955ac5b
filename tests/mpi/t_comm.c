/* MPI communicators: dup/idup/split/split_type/create/create_group/compare/free, point-to-point on the new
 * communicators and isolation between them, intercommunicators (create, merge, dup, split, p2p), attributes and
 * their callbacks, names. Any number of ranks (1..8 and more). Plain MPI: also runs with Open MPI.
 * Prints "PASS <what>" / "FAIL <what>" (rank 0, after agreeing over all ranks); exit status 1 on any failure. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, failed_any, failed_here;

#define CHECK(cond)                                                                                            \
  do {                                                                                                         \
    if (!(cond)) {                                                                                             \
      fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", rank, __FILE__, __LINE__, #cond);                  \
      failed_here = 1;                                                                                         \
    }                                                                                                          \
  } while (0)

static void report(const char *what)
{
  int any = 0;
  MPI_Allreduce(&failed_here, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0)
    printf("%s %s\n", any ? "FAIL" : "PASS", what);
  fflush(stdout);
  failed_any |= any;
  failed_here = 0;
}

static int csize(MPI_Comm c)
{
  int s = -1;
  MPI_Comm_size(c, &s);
  return s;
}

static int crank(MPI_Comm c)
{
  int r = -1;
  MPI_Comm_rank(c, &r);
  return r;
}

static int ccompare(MPI_Comm a, MPI_Comm b)
{
  int r = -1;
  MPI_Comm_compare(a, b, &r);
  return r;
}

/* World rank of rank r of c (local group). */
static int world_of(MPI_Comm c, int r)
{
  MPI_Group g, w;
  int out = -1;
  MPI_Comm_group(c, &g);
  MPI_Comm_group(MPI_COMM_WORLD, &w);
  MPI_Group_translate_ranks(g, 1, &r, w, &out);
  MPI_Group_free(&g);
  MPI_Group_free(&w);
  return out;
}

/* A ring exchange on an intracommunicator: each rank sends its world rank to the next and checks what the
 * previous one sent, once with a named source and once with MPI_ANY_SOURCE. */
static void ring(MPI_Comm c, int tag)
{
  int n = csize(c), me = crank(c);
  int next = (me + 1) % n, prev = (me + n - 1) % n;
  int out = rank, in = -1;
  MPI_Status st;
  MPI_Sendrecv(&out, 1, MPI_INT, next, tag, &in, 1, MPI_INT, prev, tag, c, &st);
  CHECK(in == world_of(c, prev));
  CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == tag);
  MPI_Request rq;
  in = -1;
  MPI_Isend(&out, 1, MPI_INT, next, tag + 1, c, &rq);
  MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, c, &st);
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
  CHECK(in == world_of(c, prev));
  CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == tag + 1);
}

/* ---------------------------------------------------------------- sections */

static void test_world_self(void)
{
  CHECK(csize(MPI_COMM_SELF) == 1 && crank(MPI_COMM_SELF) == 0);
  CHECK(ccompare(MPI_COMM_WORLD, MPI_COMM_WORLD) == MPI_IDENT);
  CHECK(ccompare(MPI_COMM_SELF, MPI_COMM_WORLD) == (size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL));
  int flag = -1;
  MPI_Comm_test_inter(MPI_COMM_WORLD, &flag);
  CHECK(flag == 0);
  int v = rank, in = -1;
  MPI_Sendrecv(&v, 1, MPI_INT, 0, 3, &in, 1, MPI_INT, 0, 3, MPI_COMM_SELF, MPI_STATUS_IGNORE);
  CHECK(in == rank);
  report("comm_world_self");
}

static void test_dup_isolation(void)
{
  MPI_Comm d1, d2, d3;
  MPI_Comm_dup(MPI_COMM_WORLD, &d1);
  MPI_Comm_dup(d1, &d2);
  MPI_Comm_dup(MPI_COMM_WORLD, &d3);
  CHECK(csize(d1) == size && crank(d1) == rank);
  CHECK(ccompare(d1, MPI_COMM_WORLD) == MPI_CONGRUENT);
  CHECK(ccompare(d1, d2) == MPI_CONGRUENT);
  ring(d1, 10);
  /* Same tag, same peers, four communicators: sent in one order, received in the reverse one. */
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  MPI_Comm cs[4] = { MPI_COMM_WORLD, d1, d2, d3 };
  int out[4], in[4];
  MPI_Request rq[4];
  for (int i = 0; i < 4; i++) {
    out[i] = 100 * i + rank;
    MPI_Isend(&out[i], 1, MPI_INT, next, 42, cs[i], &rq[i]);
  }
  for (int i = 3; i >= 0; i--)
    MPI_Recv(&in[i], 1, MPI_INT, MPI_ANY_SOURCE, 42, cs[i], MPI_STATUS_IGNORE);
  MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
  for (int i = 0; i < 4; i++)
    CHECK(in[i] == 100 * i + prev);
  MPI_Comm_free(&d2);
  CHECK(d2 == MPI_COMM_NULL);
  MPI_Comm_free(&d1);
  MPI_Comm_free(&d3);
  /* idup */
  MPI_Request r;
  MPI_Comm di;
  MPI_Comm_idup(MPI_COMM_WORLD, &di, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  CHECK(r == MPI_REQUEST_NULL);
  CHECK(ccompare(di, MPI_COMM_WORLD) == MPI_CONGRUENT);
  ring(di, 11);
  MPI_Comm_free(&di);
  report("comm_dup_isolation");
}

/* Comm_idup of overlapping communicators, started in different orders: rank r idups the pair {r, r+1} first and
 * the pair {r-1, r} second, so each pair is idup'ed first by one member and second by the other, around the ring.
 * A dup that waited for the other members would deadlock; the idups complete, and their communicators are
 * isolated from their parents and from each other. Then an idup of an idup'ed communicator and more idups of one
 * communicator than the shim has idup contexts for it (its fallback, doc/mpi.md), in the same order everywhere. */
static void test_idup_overlap(void)
{
  if (size < 2) {
    report("comm_idup_overlap");
    return;
  }
  MPI_Comm pair[2] = { MPI_COMM_NULL, MPI_COMM_NULL }, dup[2], tmp;
  for (int i = 0; i < size; i++) { /* pair[0] = {rank, rank+1}, pair[1] = {rank-1, rank} */
    int in_pair = rank == i || rank == (i + 1) % size;
    MPI_Comm_split(MPI_COMM_WORLD, in_pair ? 0 : MPI_UNDEFINED, rank == i ? 0 : 1, &tmp);
    if (rank == i)
      pair[0] = tmp;
    else if (rank == (i + 1) % size)
      pair[1] = tmp;
  }
  MPI_Request rq[2];
  MPI_Comm_idup(pair[0], &dup[0], &rq[0]);
  MPI_Comm_idup(pair[1], &dup[1], &rq[1]);
  MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
  for (int k = 0; k < 2; k++) {
    CHECK(ccompare(dup[k], pair[k]) == MPI_CONGRUENT);
    CHECK(crank(dup[k]) == k); /* first in pair[0] (key 0), second in pair[1] */
  }
  /* Isolation: the same tag to the same partner on each pair and on its duplicate. The duplicate's receive is
   * posted first and the pair's message sent first: were their contexts alike, it would take that message. */
  int out[2][2], in[2][2];
  MPI_Request q[8];
  for (int k = 0; k < 2; k++) {
    int partner = 1 - k; /* rank in pair[k] and dup[k]: 0 in pair[0] (key 0), 1 in pair[1] */
    in[k][0] = in[k][1] = -1;
    out[k][0] = 10 * rank + 1;
    out[k][1] = 10 * rank + 2;
    MPI_Irecv(&in[k][1], 1, MPI_INT, MPI_ANY_SOURCE, 7, dup[k], &q[4 * k]);
    MPI_Irecv(&in[k][0], 1, MPI_INT, MPI_ANY_SOURCE, 7, pair[k], &q[4 * k + 1]);
    MPI_Isend(&out[k][0], 1, MPI_INT, partner, 7, pair[k], &q[4 * k + 2]);
    MPI_Isend(&out[k][1], 1, MPI_INT, partner, 7, dup[k], &q[4 * k + 3]);
  }
  MPI_Waitall(8, q, MPI_STATUSES_IGNORE);
  for (int k = 0; k < 2; k++) {
    int who = world_of(pair[k], 1 - k);
    CHECK(in[k][0] == 10 * who + 1 && in[k][1] == 10 * who + 2);
  }
  /* An idup of an idup'ed communicator (WORLD's, which every rank idups in the same order) */
  MPI_Comm w1, dd;
  MPI_Request r;
  MPI_Comm_idup(MPI_COMM_WORLD, &w1, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  MPI_Comm_idup(w1, &dd, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  CHECK(ccompare(dd, MPI_COMM_WORLD) == MPI_CONGRUENT);
  ring(dd, 9);
  MPI_Comm_free(&dd);
  MPI_Comm_free(&w1);
  for (int i = 0; i < 1100; i++) {
    MPI_Comm w;
    MPI_Comm_idup(MPI_COMM_WORLD, &w, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    if (i % 100 == 0 || i >= 1020)
      ring(w, 30 + i % 7);
    MPI_Comm_free(&w);
  }
  for (int k = 0; k < 2; k++) {
    MPI_Comm_free(&dup[k]);
    MPI_Comm_free(&pair[k]);
  }
  report("comm_idup_overlap");
}

static void test_split(void)
{
  /* Two colors, ranks reversed by the key. */
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half);
  int n = rank % 2 ? size / 2 : (size + 1) / 2;
  CHECK(csize(half) == n);
  /* my parity's ranks in decreasing order: the largest is rank 0 */
  int top = (size - 1) % 2 == rank % 2 ? size - 1 : size - 2;
  CHECK(crank(half) == (top - rank) / 2);
  CHECK(ccompare(half, MPI_COMM_WORLD) == (size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL));
  ring(half, 20);
  /* Same key everywhere: parent order. */
  MPI_Comm same;
  MPI_Comm_split(MPI_COMM_WORLD, 0, 7, &same);
  CHECK(crank(same) == rank && ccompare(same, MPI_COMM_WORLD) == MPI_CONGRUENT);
  /* One color, reversed: similar. */
  MPI_Comm revc;
  MPI_Comm_split(MPI_COMM_WORLD, 5, -rank, &revc);
  CHECK(crank(revc) == size - 1 - rank);
  CHECK(ccompare(revc, MPI_COMM_WORLD) == (size == 1 ? MPI_CONGRUENT : MPI_SIMILAR));
  ring(revc, 21);
  /* MPI_UNDEFINED gives MPI_COMM_NULL. */
  MPI_Comm some;
  MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 1, 0, &some);
  if (rank == 0)
    CHECK(some == MPI_COMM_NULL);
  else {
    CHECK(some != MPI_COMM_NULL && csize(some) == size - 1 && crank(some) == rank - 1);
    ring(some, 22);
  }
  /* Split of a split: a communicator per rank. */
  MPI_Comm single;
  MPI_Comm_split(half, crank(half), 0, &single);
  CHECK(csize(single) == 1 && crank(single) == 0);
  CHECK(ccompare(single, MPI_COMM_SELF) == MPI_CONGRUENT);
  ring(single, 23);
  /* Isolation: the same tag on half and WORLD. */
  int hn = csize(half), hr = crank(half);
  int a = 1000 + rank, b = 2000 + rank, ia = -1, ib = -1;
  MPI_Request rq[2];
  MPI_Isend(&a, 1, MPI_INT, (hr + 1) % hn, 5, half, &rq[0]);
  MPI_Isend(&b, 1, MPI_INT, (rank + 1) % size, 5, MPI_COMM_WORLD, &rq[1]);
  MPI_Recv(&ib, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Recv(&ia, 1, MPI_INT, MPI_ANY_SOURCE, 5, half, MPI_STATUS_IGNORE);
  MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
  CHECK(ib == 2000 + (rank + size - 1) % size);
  CHECK(ia == 1000 + world_of(half, (hr + hn - 1) % hn));
  MPI_Comm_free(&single);
  if (some != MPI_COMM_NULL)
    MPI_Comm_free(&some);
  MPI_Comm_free(&revc);
  MPI_Comm_free(&same);
  MPI_Comm_free(&half);
  report("comm_split");
}

static void test_split_type(void)
{
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, -rank, MPI_INFO_NULL, &node);
  CHECK(node != MPI_COMM_NULL);
  /* every rank of these tests runs on this host */
  CHECK(csize(node) == size && crank(node) == size - 1 - rank);
  ring(node, 30);
  MPI_Comm none;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &none);
  CHECK(none == MPI_COMM_NULL);
  MPI_Comm_free(&node);
  report("comm_split_type");
}

static void test_create(void)
{
  MPI_Group world, evens, rev;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int ne = (size + 1) / 2;
  int *r = malloc(sizeof(int) * (size_t)size);
  for (int i = 0; i < ne; i++)
    r[i] = 2 * i;
  MPI_Group_incl(world, ne, r, &evens);
  for (int i = 0; i < size; i++)
    r[i] = size - 1 - i;
  MPI_Group_incl(world, size, r, &rev);
  MPI_Comm ce, cr;
  MPI_Comm_create(MPI_COMM_WORLD, evens, &ce);
  MPI_Comm_create(MPI_COMM_WORLD, rev, &cr);
  if (rank % 2) {
    CHECK(ce == MPI_COMM_NULL);
  } else {
    CHECK(ce != MPI_COMM_NULL && csize(ce) == ne && crank(ce) == rank / 2);
    ring(ce, 40);
  }
  CHECK(crank(cr) == size - 1 - rank);
  CHECK(ccompare(cr, MPI_COMM_WORLD) == (size == 1 ? MPI_CONGRUENT : MPI_SIMILAR));
  ring(cr, 41);
  /* create_group: only the members call; evens and odds at the same time with different tags */
  MPI_Group mine, other;
  int no = size / 2;
  for (int i = 0; i < no; i++)
    r[i] = 2 * i + 1;
  MPI_Group odds;
  MPI_Group_incl(world, no, r, &odds);
  mine = rank % 2 ? odds : evens;
  other = rank % 2 ? evens : odds;
  (void)other;
  MPI_Comm cg;
  MPI_Comm_create_group(MPI_COMM_WORLD, mine, rank % 2 ? 8 : 7, &cg);
  CHECK(cg != MPI_COMM_NULL && crank(cg) == rank / 2 && csize(cg) == (rank % 2 ? no : ne));
  ring(cg, 42);
  /* create_group of a subgroup of a derived communicator */
  MPI_Comm cg2 = MPI_COMM_NULL;
  if (rank % 2 == 0) {
    MPI_Group eg, first;
    MPI_Comm_group(ce, &eg);
    int k = (ne + 1) / 2;
    int range[1][3] = { { 0, k - 1, 1 } };
    MPI_Group_range_incl(eg, 1, range, &first);
    if (crank(ce) < k) {
      MPI_Comm_create_group(ce, first, 0, &cg2);
      CHECK(cg2 != MPI_COMM_NULL && csize(cg2) == k && crank(cg2) == crank(ce));
      ring(cg2, 43);
    }
    MPI_Group_free(&eg);
    MPI_Group_free(&first);
  }
  if (cg2 != MPI_COMM_NULL)
    MPI_Comm_free(&cg2);
  MPI_Comm_free(&cg);
  if (ce != MPI_COMM_NULL)
    MPI_Comm_free(&ce);
  MPI_Comm_free(&cr);
  MPI_Group_free(&odds);
  MPI_Group_free(&evens);
  MPI_Group_free(&rev);
  MPI_Group_free(&world);
  free(r);
  report("comm_create_create_group");
}

/* Intercommunicator between the even and the odd ranks of WORLD (size >= 2). */
static void test_intercomm(void)
{
  if (size < 2) {
    report("comm_intercomm (skipped: 1 rank)");
    return;
  }
  int color = rank % 2;
  MPI_Comm local, inter;
  MPI_Comm_split(MPI_COMM_WORLD, color, rank, &local);
  /* leaders: local rank 0 (world 0 and world 1) */
  MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color ? 0 : 1, 77, &inter);
  int flag = 0, rsize = -1;
  MPI_Comm_test_inter(inter, &flag);
  MPI_Comm_remote_size(inter, &rsize);
  int ne = (size + 1) / 2, no = size / 2;
  CHECK(flag == 1);
  CHECK(csize(inter) == (color ? no : ne) && crank(inter) == rank / 2);
  CHECK(rsize == (color ? ne : no));
  MPI_Group rg, wg;
  MPI_Comm_remote_group(inter, &rg);
  MPI_Comm_group(MPI_COMM_WORLD, &wg);
  int zero = 0, w0 = -1;
  MPI_Group_translate_ranks(rg, 1, &zero, wg, &w0);
  CHECK(w0 == 1 - color);
  MPI_Group_free(&rg);
  MPI_Group_free(&wg);

  /* p2p: local rank i sends to remote rank i % rsize; each receives from all who target it. */
  int me = crank(inter), lsize = csize(inter);
  int out = rank;
  MPI_Request rq;
  MPI_Isend(&out, 1, MPI_INT, me % rsize, 9, inter, &rq);
  int expect = 0;
  for (int j = 0; j < rsize; j++)
    if (j % lsize == me)
      expect++;
  for (int k = 0; k < expect; k++) {
    int in = -1;
    MPI_Status st;
    MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, 9, inter, &st);
    CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < rsize && st.MPI_SOURCE % lsize == me);
    CHECK(in == 2 * st.MPI_SOURCE + (1 - color)); /* remote rank j is world rank 2j (+1) */
  }
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
  /* named source, same tag, also on the local communicator: no mixing */
  if (me < rsize) {
    int a = 5000 + rank, b = 6000 + rank, ia = -1, ib = -1;
    MPI_Request q[2];
    MPI_Isend(&a, 1, MPI_INT, me, 19, inter, &q[0]);
    MPI_Isend(&b, 1, MPI_INT, (me + 1) % lsize, 19, local, &q[1]);
    MPI_Recv(&ib, 1, MPI_INT, (me + lsize - 1) % lsize, 19, local, MPI_STATUS_IGNORE);
    MPI_Recv(&ia, 1, MPI_INT, me, 19, inter, MPI_STATUS_IGNORE);
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    CHECK(ia == 5000 + 2 * me + (1 - color));
    CHECK(ib == 6000 + world_of(local, (me + lsize - 1) % lsize));
  } else { /* keep the local ring complete */
    int b = 6000 + rank, ib = -1;
    MPI_Request q;
    MPI_Isend(&b, 1, MPI_INT, (me + 1) % lsize, 19, local, &q);
    MPI_Recv(&ib, 1, MPI_INT, (me + lsize - 1) % lsize, 19, local, MPI_STATUS_IGNORE);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    CHECK(ib == 6000 + world_of(local, (me + lsize - 1) % lsize));
  }

  /* dup of the intercommunicator */
  MPI_Comm idup;
  MPI_Comm_dup(inter, &idup);
  MPI_Comm_test_inter(idup, &flag);
  CHECK(flag == 1 && ccompare(idup, inter) == MPI_CONGRUENT);
  if (me == 0) {
    int v = rank, in = -1;
    MPI_Sendrecv(&v, 1, MPI_INT, 0, 1, &in, 1, MPI_INT, 0, 1, idup, MPI_STATUS_IGNORE);
    CHECK(in == 1 - color);
  }

  /* merge: evens low, odds high -> evens first */
  MPI_Comm merged;
  MPI_Intercomm_merge(inter, color, &merged);
  MPI_Comm_test_inter(merged, &flag);
  CHECK(flag == 0 && csize(merged) == size);
  CHECK(crank(merged) == (color ? ne + rank / 2 : rank / 2));
  ring(merged, 50);
  int sum = 0;
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, merged);
  CHECK(sum == size * (size - 1) / 2);
  /* merge with the other order: odds first */
  MPI_Comm merged2;
  MPI_Intercomm_merge(idup, !color, &merged2);
  CHECK(crank(merged2) == (color ? rank / 2 : no + rank / 2));
  ring(merged2, 51);

  /* split of the intercommunicator: local rank 0 of each side in one, others in another */
  MPI_Comm isplit;
  MPI_Comm_split(inter, me == 0 ? 0 : 1, 0, &isplit);
  int rs2 = -1;
  if (isplit != MPI_COMM_NULL) {
    MPI_Comm_test_inter(isplit, &flag);
    MPI_Comm_remote_size(isplit, &rs2);
    CHECK(flag == 1);
    if (me == 0)
      CHECK(csize(isplit) == 1 && rs2 == 1);
  } else {
    CHECK(me != 0); /* only when the other side has no member of this color */
  }
  if (me == 0) {
    int v = rank, in = -1;
    MPI_Sendrecv(&v, 1, MPI_INT, 0, 2, &in, 1, MPI_INT, 0, 2, isplit, MPI_STATUS_IGNORE);
    CHECK(in == 1 - color);
  }

  if (isplit != MPI_COMM_NULL)
    MPI_Comm_free(&isplit);
  MPI_Comm_free(&merged2);
  MPI_Comm_free(&merged);
  MPI_Comm_free(&idup);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
  CHECK(inter == MPI_COMM_NULL);
  report("comm_intercomm");
}

/* Uneven groups (rank 0 alone against the others, or 1/3 - 2/3), leaders that are not local rank 0, a dup of
 * WORLD as the peer communicator, and MPI_Comm_create on the intercommunicator. */
static void test_intercomm2(void)
{
  if (size < 2) {
    report("comm_intercomm_uneven (skipped: 1 rank)");
    return;
  }
  int k = size >= 3 ? size / 3 : 1; /* low group: world ranks [0, k) */
  int low = rank < k;
  MPI_Comm local, peer, inter;
  MPI_Comm_dup(MPI_COMM_WORLD, &peer);
  MPI_Comm_split(MPI_COMM_WORLD, low, rank, &local);
  int lsize = csize(local), me = crank(local);
  /* leaders: the last rank of each group (world k-1 and world size-1) */
  MPI_Intercomm_create(local, lsize - 1, peer, low ? size - 1 : k - 1, 1234, &inter);
  int rsize = -1;
  MPI_Comm_remote_size(inter, &rsize);
  CHECK(rsize == (low ? size - k : k));
  CHECK(crank(inter) == me && csize(inter) == lsize);
  /* everyone sends to remote rank 0 and remote rank 0 receives from everyone */
  int v = rank;
  MPI_Request rq;
  MPI_Isend(&v, 1, MPI_INT, 0, 3, inter, &rq);
  if (me == 0) {
    int seen = 0;
    for (int i = 0; i < rsize; i++) {
      int in = -1;
      MPI_Status st;
      MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, 3, inter, &st);
      CHECK(in == (low ? k + st.MPI_SOURCE : st.MPI_SOURCE));
      seen += in;
    }
    int expect = low ? (size * (size - 1) - k * (k - 1)) / 2 : k * (k - 1) / 2;
    CHECK(seen == expect);
  }
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
  /* Comm_create on the intercommunicator: the first half (rounded up) of each side */
  MPI_Group lg, half;
  MPI_Comm_group(inter, &lg);
  int range[1][3] = { { 0, (lsize + 1) / 2 - 1, 1 } };
  MPI_Group_range_incl(lg, 1, range, &half);
  MPI_Comm sub;
  MPI_Comm_create(inter, half, &sub);
  if (me < (lsize + 1) / 2) {
    int flag = 0, rs = -1;
    CHECK(sub != MPI_COMM_NULL);
    MPI_Comm_test_inter(sub, &flag);
    MPI_Comm_remote_size(sub, &rs);
    CHECK(flag == 1 && csize(sub) == (lsize + 1) / 2 && crank(sub) == me && rs == (rsize + 1) / 2);
    if (me < rs) {
      int in = -1;
      MPI_Sendrecv(&v, 1, MPI_INT, me, 4, &in, 1, MPI_INT, me, 4, sub, MPI_STATUS_IGNORE);
      CHECK(in == (low ? k + me : me));
    }
    MPI_Comm_free(&sub);
  } else {
    CHECK(sub == MPI_COMM_NULL);
  }
  MPI_Group_free(&half);
  MPI_Group_free(&lg);
  /* merge: both sides pass the same value; the order is the implementation's, but consistent */
  MPI_Comm m;
  MPI_Intercomm_merge(inter, 0, &m);
  CHECK(csize(m) == size);
  int mr = crank(m), *all = malloc(sizeof(int) * (size_t)size);
  MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, m);
  CHECK(all[mr] == rank);
  long long sum = 0;
  for (int i = 0; i < size; i++)
    sum += all[i];
  CHECK(sum == (long long)size * (size - 1) / 2);
  CHECK(all[0] == 0 || all[0] == k); /* one group, then the other */
  free(all);
  ring(m, 60);
  MPI_Comm_free(&m);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
  MPI_Comm_free(&peer);
  report("comm_intercomm_uneven");
}

/* ---- attributes */
static int copies, deletes;
static int copy_plus_one(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
  (void)oldcomm;
  (void)keyval;
  CHECK(extra == (void *)&copies);
  copies++;
  *(void **)out = (void *)((char *)in + 1);
  *flag = 1;
  return MPI_SUCCESS;
}
static int count_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
  (void)comm;
  (void)keyval;
  (void)val;
  (void)extra;
  deletes++;
  return MPI_SUCCESS;
}

static void test_attributes(void)
{
  int *tag_ub = NULL, flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
  CHECK(flag && tag_ub && *tag_ub >= 32767);
  int *wg = NULL;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &wg, &flag);
  CHECK(!flag || (wg && (*wg == 0 || *wg == 1)));
  int *us = NULL; /* Open MPI gives the number of slots, which may be less than the processes */
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &us, &flag);
  CHECK(!flag || (us && *us >= 1));

  int kplus, kdup, knull;
  MPI_Comm_create_keyval(copy_plus_one, count_delete, &kplus, &copies);
  MPI_Comm_create_keyval(MPI_COMM_DUP_FN, count_delete, &kdup, NULL);
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &knull, NULL);
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  char base[8];
  void *v = NULL;
  MPI_Comm_get_attr(c, kplus, &v, &flag);
  CHECK(flag == 0);
  MPI_Comm_set_attr(c, kplus, base);
  MPI_Comm_set_attr(c, kdup, base + 2);
  MPI_Comm_set_attr(c, knull, base + 3);
  MPI_Comm_get_attr(c, kplus, &v, &flag);
  CHECK(flag == 1 && v == base);
  /* replacing a value deletes the old one */
  deletes = 0;
  MPI_Comm_set_attr(c, kdup, base + 1);
  CHECK(deletes == 1);
  MPI_Comm_get_attr(c, kdup, &v, &flag);
  CHECK(flag == 1 && v == base + 1);
  /* dup: copy callbacks */
  MPI_Comm c2;
  copies = 0;
  MPI_Comm_dup(c, &c2);
  CHECK(copies == 1);
  MPI_Comm_get_attr(c2, kplus, &v, &flag);
  CHECK(flag == 1 && v == base + 1);
  MPI_Comm_get_attr(c2, kdup, &v, &flag);
  CHECK(flag == 1 && v == base + 1);
  MPI_Comm_get_attr(c2, knull, &v, &flag);
  CHECK(flag == 0);
  /* split does not copy attributes */
  MPI_Comm c3;
  MPI_Comm_split(c, 0, rank, &c3);
  MPI_Comm_get_attr(c3, kplus, &v, &flag);
  CHECK(flag == 0);
  MPI_Comm_free(&c3);
  /* delete_attr calls the delete callback */
  deletes = 0;
  MPI_Comm_delete_attr(c2, kdup);
  CHECK(deletes == 1);
  MPI_Comm_get_attr(c2, kdup, &v, &flag);
  CHECK(flag == 0);
  /* a freed keyval stays usable by the attributes that hold it: read and delete through the old handle, and
   * a second free of it is harmless (the MPICH suite's fkeyval and keyval_double_free do this) */
  int kdup_handle = kdup;
  MPI_Comm_free_keyval(&kdup);
  CHECK(kdup == MPI_KEYVAL_INVALID);
  MPI_Comm_get_attr(c, kdup_handle, &v, &flag);
  CHECK(flag == 1 && v == base + 1);
  int kdup_again = kdup_handle;
  CHECK(MPI_Comm_free_keyval(&kdup_again) == MPI_SUCCESS && kdup_again == MPI_KEYVAL_INVALID);
  deletes = 0;
  MPI_Comm_free(&c); /* kplus and kdup: two deletes (knull has none) */
  CHECK(deletes == 2);
  deletes = 0;
  MPI_Comm_free(&c2); /* kplus */
  CHECK(deletes == 1);
  MPI_Comm_free_keyval(&kplus);
  MPI_Comm_free_keyval(&knull);
  /* attributes on WORLD and SELF */
  int kw;
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &kw, NULL);
  MPI_Comm_set_attr(MPI_COMM_WORLD, kw, base + 4);
  MPI_Comm_set_attr(MPI_COMM_SELF, kw, base + 5);
  MPI_Comm_get_attr(MPI_COMM_WORLD, kw, &v, &flag);
  CHECK(flag && v == base + 4);
  MPI_Comm_get_attr(MPI_COMM_SELF, kw, &v, &flag);
  CHECK(flag && v == base + 5);
  MPI_Comm_delete_attr(MPI_COMM_WORLD, kw);
  MPI_Comm_delete_attr(MPI_COMM_SELF, kw);
  MPI_Comm_free_keyval(&kw);
  report("comm_attributes");
}

static void test_names(void)
{
  char name[MPI_MAX_OBJECT_NAME];
  int len = -1;
  MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
  CHECK(!strcmp(name, "MPI_COMM_WORLD") && len == (int)strlen("MPI_COMM_WORLD"));
  MPI_Comm_get_name(MPI_COMM_SELF, name, &len);
  CHECK(!strcmp(name, "MPI_COMM_SELF"));
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_name(c, "my communicator");
  MPI_Comm_get_name(c, name, &len);
  CHECK(!strcmp(name, "my communicator") && len == 15);
  MPI_Comm_free(&c);
  report("comm_names");
}

static void test_errors(void)
{
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int x = 0;
  CHECK(MPI_Comm_size(MPI_COMM_NULL, &x) != MPI_SUCCESS);
  CHECK(MPI_Send(&x, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD) != MPI_SUCCESS);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  /* the error handler is inherited by new communicators */
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  MPI_Comm d;
  MPI_Comm_split(c, 0, 0, &d);
  MPI_Errhandler eh;
  MPI_Comm_get_errhandler(d, &eh);
  CHECK(eh == MPI_ERRORS_RETURN);
  MPI_Errhandler_free(&eh);
  CHECK(MPI_Send(&x, 1, MPI_INT, size + 5, 0, d) != MPI_SUCCESS);
  MPI_Comm_free(&d);
  MPI_Comm_free(&c);
  report("comm_errors");
}

/* Many communicators alive at once, freed in a different order, and created again. */
static void test_many(void)
{
  enum { N = 20 };
  MPI_Comm cs[N];
  for (int i = 0; i < N; i++)
    MPI_Comm_split(i == 0 ? MPI_COMM_WORLD : cs[i - 1], 0, (i % 2) ? -rank : rank, &cs[i]);
  for (int i = 0; i < N; i += 2)
    MPI_Comm_free(&cs[i]);
  for (int i = 0; i < N; i += 2)
    MPI_Comm_dup(MPI_COMM_WORLD, &cs[i]);
  int out[N], in[N];
  MPI_Request rq[N];
  for (int i = 0; i < N; i++) {
    out[i] = i * 1000 + rank;
    int r = crank(cs[i]), n = csize(cs[i]);
    MPI_Isend(&out[i], 1, MPI_INT, (r + 1) % n, 0, cs[i], &rq[i]);
  }
  for (int i = N - 1; i >= 0; i--) {
    int r = crank(cs[i]), n = csize(cs[i]);
    MPI_Recv(&in[i], 1, MPI_INT, (r + n - 1) % n, 0, cs[i], MPI_STATUS_IGNORE);
    CHECK(in[i] == i * 1000 + world_of(cs[i], (r + n - 1) % n));
  }
  MPI_Waitall(N, rq, MPI_STATUSES_IGNORE);
  for (int i = 0; i < N; i++)
    MPI_Comm_free(&cs[i]);
  report("comm_many");
}

#ifdef NMAD_MPI
/* nmad extension: the session and gates behind a communicator (the same gate whatever the communicator). */
static void test_mpix_get_nmad(void)
{
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
  int n = csize(half);
  for (int r = 0; r < n; r++) {
    void *s1 = NULL, *g1 = NULL, *s2 = NULL, *g2 = NULL;
    CHECK(MPIX_Comm_get_nmad(half, r, &s1, &g1) == MPI_SUCCESS);
    CHECK(MPIX_Comm_get_nmad(MPI_COMM_WORLD, world_of(half, r), &s2, &g2) == MPI_SUCCESS);
    CHECK(s1 && s1 == s2 && g1 && g1 == g2);
  }
  MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN);
  void *s, *g;
  CHECK(MPIX_Comm_get_nmad(half, n, &s, &g) != MPI_SUCCESS);
  MPI_Comm_free(&half);
  report("comm_mpix_get_nmad");
}
#endif

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  test_world_self();
  test_dup_isolation();
  test_idup_overlap();
  test_split();
  test_split_type();
  test_create();
  test_intercomm();
  test_intercomm2();
  test_attributes();
  test_names();
  test_errors();
  test_many();
#ifdef NMAD_MPI
  test_mpix_get_nmad();
#endif
  MPI_Finalize();
  return failed_any ? 1 : 0;
}
