/* MPI groups: every group operation, on any number of ranks (1..8 and more). Plain MPI: also runs with Open MPI.
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

/* All ranks agree on the outcome of one section. */
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

static int group_size(MPI_Group g)
{
  int s = -1;
  MPI_Group_size(g, &s);
  return s;
}

static int group_rank(MPI_Group g)
{
  int r = -2;
  MPI_Group_rank(g, &r);
  return r;
}

static int compare(MPI_Group a, MPI_Group b)
{
  int res = -1;
  MPI_Group_compare(a, b, &res);
  return res;
}

/* World ranks of a group's members, in order (translated through the world group). */
static void members(MPI_Group g, MPI_Group world, int *out)
{
  int n = group_size(g);
  int *idx = malloc(sizeof(int) * (size_t)(n + 1));
  for (int i = 0; i < n; i++)
    idx[i] = i;
  MPI_Group_translate_ranks(g, n, idx, world, out);
  free(idx);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int nevens = (size + 1) / 2, nodds = size / 2;
  int *buf = malloc(sizeof(int) * (size_t)(2 * size + 2));
  int *buf2 = malloc(sizeof(int) * (size_t)(2 * size + 2));

  MPI_Group world;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  CHECK(group_size(world) == size);
  CHECK(group_rank(world) == rank);
  CHECK(compare(world, world) == MPI_IDENT);
  report("group_size_rank");

  /* incl / excl */
  int *evenr = malloc(sizeof(int) * (size_t)(size + 1)), *oddr = malloc(sizeof(int) * (size_t)(size + 1));
  for (int i = 0; i < nevens; i++)
    evenr[i] = 2 * i;
  for (int i = 0; i < nodds; i++)
    oddr[i] = 2 * i + 1;
  MPI_Group evens, odds, odds2, rev;
  MPI_Group_incl(world, nevens, evenr, &evens);
  MPI_Group_excl(world, nevens, evenr, &odds);
  MPI_Group_incl(world, nodds, oddr, &odds2);
  CHECK(group_size(evens) == nevens);
  CHECK(group_size(odds) == nodds);
  CHECK(group_rank(evens) == (rank % 2 == 0 ? rank / 2 : MPI_UNDEFINED));
  CHECK(group_rank(odds) == (rank % 2 == 1 ? rank / 2 : MPI_UNDEFINED));
  CHECK(compare(odds, odds2) == MPI_IDENT);
  members(evens, world, buf);
  for (int i = 0; i < nevens; i++)
    CHECK(buf[i] == 2 * i);
  for (int i = 0; i < size; i++)
    buf[i] = size - 1 - i;
  MPI_Group_incl(world, size, buf, &rev);
  CHECK(group_rank(rev) == size - 1 - rank);
  CHECK(compare(rev, world) == (size == 1 ? MPI_IDENT : MPI_SIMILAR));
  CHECK(compare(evens, world) == (size == 1 ? MPI_IDENT : MPI_UNEQUAL));
  report("group_incl_excl");

  /* range_incl / range_excl, positive and negative strides */
  MPI_Group r_evens, r_odds, r_rev, r_none;
  int range[1][3] = { { 0, size - 1, 2 } };
  MPI_Group_range_incl(world, 1, range, &r_evens);
  MPI_Group_range_excl(world, 1, range, &r_odds);
  CHECK(compare(r_evens, evens) == MPI_IDENT);
  CHECK(compare(r_odds, odds) == MPI_IDENT);
  int rrange[1][3] = { { size - 1, 0, -1 } };
  MPI_Group_range_incl(world, 1, rrange, &r_rev);
  CHECK(compare(r_rev, rev) == MPI_IDENT);
  MPI_Group_range_excl(world, 1, rrange, &r_none);
  CHECK(group_size(r_none) == 0);
  CHECK(compare(r_none, MPI_GROUP_EMPTY) == MPI_IDENT);
  if (size >= 4) { /* two ranges: {3, 2} then {0} */
    int two[2][3] = { { 3, 2, -1 }, { 0, 0, 1 } };
    MPI_Group g2;
    MPI_Group_range_incl(world, 2, two, &g2);
    members(g2, world, buf);
    CHECK(group_size(g2) == 3 && buf[0] == 3 && buf[1] == 2 && buf[2] == 0);
    MPI_Group_free(&g2);
    MPI_Group_range_excl(world, 2, two, &g2);
    CHECK(group_size(g2) == size - 3);
    members(g2, world, buf);
    CHECK(buf[0] == 1);
    MPI_Group_free(&g2);
  }
  report("group_range_incl_excl");

  /* union / intersection / difference */
  MPI_Group u, in, d, d2, e;
  MPI_Group_union(evens, odds, &u);
  CHECK(group_size(u) == size);
  members(u, world, buf);
  for (int i = 0; i < size; i++)
    CHECK(buf[i] == (i < nevens ? 2 * i : 2 * (i - nevens) + 1));
  CHECK(compare(u, world) == (size <= 2 ? MPI_IDENT : MPI_SIMILAR));
  MPI_Group_union(world, evens, &e); /* union with a subset keeps group1 */
  CHECK(compare(e, world) == MPI_IDENT);
  MPI_Group_free(&e);
  MPI_Group_intersection(world, evens, &in);
  CHECK(compare(in, evens) == MPI_IDENT);
  MPI_Group_intersection(rev, evens, &e); /* group1's order: decreasing evens */
  members(e, world, buf);
  CHECK(group_size(e) == nevens);
  for (int i = 0; i + 1 < nevens; i++)
    CHECK(buf[i] > buf[i + 1]);
  MPI_Group_free(&e);
  MPI_Group_intersection(evens, odds, &e);
  CHECK(group_size(e) == 0 && compare(e, MPI_GROUP_EMPTY) == MPI_IDENT);
  MPI_Group_free(&e);
  MPI_Group_difference(world, evens, &d);
  CHECK(compare(d, odds) == MPI_IDENT);
  MPI_Group_difference(world, world, &d2);
  CHECK(group_size(d2) == 0 && group_rank(d2) == MPI_UNDEFINED);
  MPI_Group_union(MPI_GROUP_EMPTY, evens, &e);
  CHECK(compare(e, evens) == MPI_IDENT);
  MPI_Group_free(&e);
  report("group_union_intersection_difference");

  /* translate_ranks: MPI_PROC_NULL maps to itself, absent members to MPI_UNDEFINED */
  for (int i = 0; i < size; i++)
    buf[i] = i;
  buf[size] = MPI_PROC_NULL;
  MPI_Group_translate_ranks(world, size + 1, buf, evens, buf2);
  for (int i = 0; i < size; i++)
    CHECK(buf2[i] == (i % 2 == 0 ? i / 2 : MPI_UNDEFINED));
  CHECK(buf2[size] == MPI_PROC_NULL);
  MPI_Group_translate_ranks(rev, size, buf, world, buf2);
  for (int i = 0; i < size; i++)
    CHECK(buf2[i] == size - 1 - i);
  report("group_translate_ranks");

  /* the empty group */
  MPI_Group empty;
  MPI_Group_incl(world, 0, buf, &empty);
  CHECK(group_size(empty) == 0);
  CHECK(group_rank(empty) == MPI_UNDEFINED);
  CHECK(compare(empty, MPI_GROUP_EMPTY) == MPI_IDENT);
  CHECK(group_size(MPI_GROUP_EMPTY) == 0);
  CHECK(compare(MPI_GROUP_EMPTY, world) == MPI_UNEQUAL);
  MPI_Group_free(&empty);
  CHECK(empty == MPI_GROUP_NULL);
  report("group_empty");

  /* groups of communicators: a split communicator's group */
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
  MPI_Group hg;
  MPI_Comm_group(half, &hg);
  members(hg, world, buf);
  int hs = group_size(hg);
  CHECK(hs == (rank % 2 ? nodds : nevens));
  for (int i = 0; i < hs; i++) /* key -rank: decreasing world ranks of my parity */
    CHECK(buf[i] % 2 == rank % 2 && (i == 0 || buf[i] < buf[i - 1]));
  CHECK(compare(hg, rank % 2 ? odds : evens) == (hs == 1 ? MPI_IDENT : MPI_SIMILAR));
  MPI_Group_free(&hg);
  MPI_Comm_free(&half);
  report("group_of_comm");

  /* errors are returned with MPI_ERRORS_RETURN */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Group bad = MPI_GROUP_NULL;
  int badr[1] = { size };
  CHECK(MPI_Group_incl(world, 1, badr, &bad) != MPI_SUCCESS);
  CHECK(MPI_Group_size(MPI_GROUP_NULL, buf) != MPI_SUCCESS);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  report("group_errors");

  /* free */
  MPI_Group all[] = { evens, odds, odds2, rev, r_evens, r_odds, r_rev, r_none, u, in, d, d2 };
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
    MPI_Group_free(&all[i]);
    CHECK(all[i] == MPI_GROUP_NULL);
  }
  MPI_Group_free(&world);
  CHECK(world == MPI_GROUP_NULL);
  report("group_free");

  free(buf);
  free(buf2);
  free(evenr);
  free(oddr);
  MPI_Finalize();
  return failed_any ? 1 : 0;
}
