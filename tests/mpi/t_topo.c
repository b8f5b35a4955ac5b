/* Cartesian topologies: Dims_create, Cart_create/coords/rank/shift/get/sub, Cartdim_get, Topo_test, and
 * neighbour exchanges over the grid. Any number of ranks (1..8 and more). Plain MPI: also runs with Open MPI.
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

/* Dims_create's contract: fixed entries kept, product = nnodes, free entries non-increasing. */
static void check_dims(int nnodes, int ndims, const int *in)
{
  int d[8];
  memcpy(d, in, sizeof(int) * (size_t)ndims);
  CHECK(MPI_Dims_create(nnodes, ndims, d) == MPI_SUCCESS);
  long long p = 1;
  int last = -1;
  for (int i = 0; i < ndims; i++) {
    p *= d[i];
    if (in[i])
      CHECK(d[i] == in[i]);
    else {
      CHECK(d[i] >= 1 && (last < 0 || d[i] <= last));
      last = d[i];
    }
  }
  CHECK(p == nnodes);
}

static void test_dims_create(void)
{
  int d[4];
  memset(d, 0, sizeof(d));
  MPI_Dims_create(6, 2, d);
  CHECK(d[0] == 3 && d[1] == 2);
  memset(d, 0, sizeof(d));
  MPI_Dims_create(16, 3, d);
  CHECK(d[0] == 4 && d[1] == 2 && d[2] == 2);
  memset(d, 0, sizeof(d));
  MPI_Dims_create(7, 2, d);
  CHECK(d[0] == 7 && d[1] == 1);
  memset(d, 0, sizeof(d));
  MPI_Dims_create(1, 3, d);
  CHECK(d[0] == 1 && d[1] == 1 && d[2] == 1);
  memset(d, 0, sizeof(d));
  MPI_Dims_create(12, 2, d);
  CHECK(d[0] == 4 && d[1] == 3);
  int fixed[3] = { 0, 3, 0 };
  MPI_Dims_create(12, 3, fixed);
  CHECK(fixed[0] == 2 && fixed[1] == 3 && fixed[2] == 2);
  for (int n = 1; n <= 64; n++)
    for (int nd = 1; nd <= 4; nd++) {
      int z[4] = { 0, 0, 0, 0 };
      check_dims(n, nd, z);
    }
  int f2[3] = { 2, 0, 0 };
  check_dims(24, 3, f2);
  int f3[2] = { 0, 5 };
  check_dims(10, 2, f3);
  /* nnodes not a multiple of the fixed dimensions */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int bad[2] = { 2, 0 };
  CHECK(MPI_Dims_create(7, 2, bad) != MPI_SUCCESS);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  report("topo_dims_create");
}

/* Every rank sends its rank to its +disp neighbour along dim and checks what comes from -disp. */
static void shift_exchange(MPI_Comm cart, int dim, int disp, int tag)
{
  int src, dst, out, in = -7;
  MPI_Comm_rank(cart, &out);
  MPI_Cart_shift(cart, dim, disp, &src, &dst);
  MPI_Status st;
  MPI_Sendrecv(&out, 1, MPI_INT, dst, tag, &in, 1, MPI_INT, src, tag, cart, &st);
  if (src == MPI_PROC_NULL)
    CHECK(in == -7);
  else
    CHECK(in == src && st.MPI_SOURCE == src);
}

static void test_cart_2d(void)
{
  int dims[2] = { 0, 0 }, periods[2] = { 1, 0 };
  MPI_Dims_create(size, 2, dims);
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  CHECK(cart != MPI_COMM_NULL);
  int st = -1;
  MPI_Topo_test(cart, &st);
  CHECK(st == MPI_CART);
  MPI_Topo_test(MPI_COMM_WORLD, &st);
  CHECK(st == MPI_UNDEFINED);
  int nd = -1;
  MPI_Cartdim_get(cart, &nd);
  CHECK(nd == 2);
  int me, n;
  MPI_Comm_rank(cart, &me);
  MPI_Comm_size(cart, &n);
  CHECK(n == size);
  int gd[2], gp[2], gc[2], cc[2];
  MPI_Cart_get(cart, 2, gd, gp, gc);
  CHECK(gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == 1 && gp[1] == 0);
  MPI_Cart_coords(cart, me, 2, cc);
  CHECK(cc[0] == gc[0] && cc[1] == gc[1]);
  CHECK(cc[0] == me / dims[1] && cc[1] == me % dims[1]); /* row-major */
  for (int r = 0; r < n; r++) {
    int c[2], back = -1;
    MPI_Cart_coords(cart, r, 2, c);
    MPI_Cart_rank(cart, c, &back);
    CHECK(back == r);
  }
  /* periodic dimension wraps */
  int wrap[2] = { -1, 0 }, wr = -1;
  MPI_Cart_rank(cart, wrap, &wr);
  CHECK(wr == (dims[0] - 1) * dims[1]);
  wrap[0] = dims[0];
  MPI_Cart_rank(cart, wrap, &wr);
  CHECK(wr == 0);
  /* shifts */
  int src, dst;
  MPI_Cart_shift(cart, 0, 1, &src, &dst);
  CHECK(dst == ((cc[0] + 1) % dims[0]) * dims[1] + cc[1]);
  CHECK(src == ((cc[0] - 1 + dims[0]) % dims[0]) * dims[1] + cc[1]);
  MPI_Cart_shift(cart, 1, 1, &src, &dst);
  CHECK(dst == (cc[1] + 1 < dims[1] ? me + 1 : MPI_PROC_NULL));
  CHECK(src == (cc[1] > 0 ? me - 1 : MPI_PROC_NULL));
  MPI_Cart_shift(cart, 1, -2, &src, &dst);
  CHECK(dst == (cc[1] - 2 >= 0 ? me - 2 : MPI_PROC_NULL));
  CHECK(src == (cc[1] + 2 < dims[1] ? me + 2 : MPI_PROC_NULL));
  shift_exchange(cart, 0, 1, 1);
  shift_exchange(cart, 1, 1, 2);
  shift_exchange(cart, 0, -1, 3);
  shift_exchange(cart, 1, -1, 4);
  /* errors */
  MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
  int off[2] = { 0, dims[1] };
  CHECK(MPI_Cart_rank(cart, off, &wr) != MPI_SUCCESS);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK(MPI_Cartdim_get(MPI_COMM_WORLD, &nd) != MPI_SUCCESS);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  /* the topology is kept by dup */
  MPI_Comm cd;
  MPI_Comm_dup(cart, &cd);
  MPI_Topo_test(cd, &st);
  CHECK(st == MPI_CART);
  MPI_Cart_get(cd, 2, gd, gp, gc);
  CHECK(gd[0] == dims[0] && gd[1] == dims[1] && gc[0] == cc[0] && gc[1] == cc[1]);
  MPI_Comm_free(&cd);
  /* sub-grids: rows (keep dim 1) and columns (keep dim 0) */
  int keep_row[2] = { 0, 1 }, keep_col[2] = { 1, 0 };
  MPI_Comm row, col;
  MPI_Cart_sub(cart, keep_row, &row);
  MPI_Cart_sub(cart, keep_col, &col);
  int rs, rr, cs, cr;
  MPI_Comm_size(row, &rs);
  MPI_Comm_rank(row, &rr);
  MPI_Comm_size(col, &cs);
  MPI_Comm_rank(col, &cr);
  CHECK(rs == dims[1] && rr == cc[1]);
  CHECK(cs == dims[0] && cr == cc[0]);
  MPI_Cartdim_get(row, &nd);
  CHECK(nd == 1);
  int sd[1], sp[1], sc[1];
  MPI_Cart_get(col, 1, sd, sp, sc);
  CHECK(sd[0] == dims[0] && sp[0] == 1 && sc[0] == cc[0]);
  int sum = 0, v = me;
  MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, row); /* my row: cc[0]*d1 + 0..d1-1 */
  CHECK(sum == cc[0] * dims[1] * dims[1] + dims[1] * (dims[1] - 1) / 2);
  MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, col);
  CHECK(sum == cc[1] * dims[0] + dims[1] * dims[0] * (dims[0] - 1) / 2);
  shift_exchange(col, 0, 1, 5);
  shift_exchange(row, 0, 1, 6);
  /* nothing kept: a grid of one process per communicator */
  int keep_none[2] = { 0, 0 };
  MPI_Comm pt;
  MPI_Cart_sub(cart, keep_none, &pt);
  MPI_Comm_size(pt, &rs);
  CHECK(rs == 1);
  MPI_Comm_free(&pt);
  MPI_Comm_free(&row);
  MPI_Comm_free(&col);
  MPI_Comm_free(&cart);
  report("topo_cart_2d");
}

static void test_cart_3d(void)
{
  int dims[3] = { 0, 0, 0 }, periods[3] = { 1, 1, 1 };
  MPI_Dims_create(size, 3, dims);
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 1, &cart);
  int me, c[3];
  MPI_Comm_rank(cart, &me);
  MPI_Cart_coords(cart, me, 3, c);
  CHECK(me == (c[0] * dims[1] + c[1]) * dims[2] + c[2]);
  for (int d = 0; d < 3; d++) {
    shift_exchange(cart, d, 1, 10 + d);
    shift_exchange(cart, d, 2, 20 + d);
  }
  int keep[3] = { 1, 0, 1 };
  MPI_Comm sub;
  MPI_Cart_sub(cart, keep, &sub);
  int n, r, nd, sd[3], sp[3], sc[3];
  MPI_Comm_size(sub, &n);
  MPI_Comm_rank(sub, &r);
  MPI_Cartdim_get(sub, &nd);
  CHECK(n == dims[0] * dims[2] && nd == 2);
  CHECK(r == c[0] * dims[2] + c[2]);
  MPI_Cart_get(sub, 3, sd, sp, sc);
  CHECK(sd[0] == dims[0] && sd[1] == dims[2] && sc[0] == c[0] && sc[1] == c[2]);
  shift_exchange(sub, 1, 1, 30);
  MPI_Comm_free(&sub);
  MPI_Comm_free(&cart);
  report("topo_cart_3d");
}

/* A grid smaller than the communicator: the extra ranks get MPI_COMM_NULL. */
static void test_cart_partial(void)
{
  int n = size > 1 ? size - 1 : 1;
  int dims[1] = { n }, periods[1] = { 0 };
  MPI_Comm cart;
  int mapped = -2;
  MPI_Cart_map(MPI_COMM_WORLD, 1, dims, periods, &mapped); /* the rank Cart_create gives, or MPI_UNDEFINED */
  CHECK(mapped == (rank < n ? rank : MPI_UNDEFINED));
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
  if (rank >= n) {
    CHECK(cart == MPI_COMM_NULL);
  } else {
    int me, s;
    CHECK(cart != MPI_COMM_NULL);
    MPI_Comm_rank(cart, &me);
    MPI_Comm_size(cart, &s);
    CHECK(me == rank && s == n);
    shift_exchange(cart, 0, 1, 40);
    MPI_Comm_free(&cart);
  }
  /* too many processes asked for */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int big[1] = { size + 1 };
  MPI_Comm none = MPI_COMM_NULL;
  CHECK(MPI_Cart_create(MPI_COMM_WORLD, 1, big, periods, 0, &none) != MPI_SUCCESS);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  report("topo_cart_partial");
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  test_dims_create();
  test_cart_2d();
  test_cart_3d();
  test_cart_partial();
  MPI_Finalize();
  return failed_any ? 1 : 0;
}
