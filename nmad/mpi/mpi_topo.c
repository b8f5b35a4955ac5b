/**
 * @file mpi_topo.c
 * @brief Cartesian process topologies (MPI-3.1 sections 7.5.1 - 7.5.5): a communicator created by
 * MPI_Cart_create carries (ndims, dims, periods); ranks map to coordinates in row-major order (the last
 * dimension varies fastest). Reordering is not done (allowed: `reorder` is a hint), so the Cartesian rank of a
 * process is its rank in comm_old. Communicators are built with MPI_Comm_split (mpi_comm.c), which agrees on
 * the new context.
 */
#include "nm_mpi_private.h"
#include <stdlib.h>
#include <string.h>

/** A communicator with a Cartesian topology, or NULL (with *err set to the MPI error class). */
static struct nm_mpi_comm_s *nm_mpi_cart_get(MPI_Comm comm, int *err)
{
  struct nm_mpi_comm_s *c = nm_mpi_comm_get(comm);
  if (!c) {
    *err = MPI_ERR_COMM;
    return NULL;
  }
  if (c->topo != MPI_CART) {
    *err = MPI_ERR_TOPOLOGY;
    return NULL;
  }
  return c;
}

#define NM_MPI_CART_GET_OR_FAIL(c, comm)                                                                        \
  int c##_err = MPI_SUCCESS;                                                                                   \
  struct nm_mpi_comm_s *c = nm_mpi_cart_get(comm, &c##_err);                                                   \
  if (!c)                                                                                                      \
    return nm_mpi_error(c##_err == MPI_ERR_COMM ? MPI_COMM_WORLD : comm, c##_err, __func__);

/** Coordinates of @p rank in @p c's grid (row-major). */
static void nm_mpi_cart_coords_of(const struct nm_mpi_comm_s *c, int rank, int *coords)
{
  for (int i = c->ndims - 1; i >= 0; i--) {
    coords[i] = rank % c->dims[i];
    rank /= c->dims[i];
  }
}

/** Attach a Cartesian topology to @p c (arrays copied, periods normalized to 0/1). @return MPI code. */
static int nm_mpi_cart_attach(struct nm_mpi_comm_s *c, int ndims, const int *dims, const int *periods)
{
  size_t n = (size_t)(ndims > 0 ? ndims : 1);
  int *d = malloc(sizeof(int) * n), *p = malloc(sizeof(int) * n);
  if (!d || !p) {
    free(d);
    free(p);
    return MPI_ERR_NO_MEM;
  }
  for (int i = 0; i < ndims; i++) {
    d[i] = dims[i];
    p[i] = periods[i] ? 1 : 0;
  }
  free(c->dims);
  free(c->periods);
  c->dims = d;
  c->periods = p;
  c->ndims = ndims;
  c->topo = MPI_CART;
  return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- MPI_Dims_create (7.5.2) */

/** At most 30 factors of an int differ from 1: dimensions beyond this many free ones are 1. */
#define NM_MPI_DIMS_MAX 31

/** Search state: the best non-increasing factorization found so far. */
struct nm_mpi_dims_search_s {
  int k;                       /* factors to choose */
  const int *divs;             /* divisors of the number to split, decreasing */
  int ndivs;
  int cur[NM_MPI_DIMS_MAX];    /* candidate, non-increasing */
  int best[NM_MPI_DIMS_MAX];
  long long best_spread, best_sq;
};

/** 1 if b^e > limit (b >= 1, no overflow). */
static int nm_mpi_pow_gt(long long b, int e, long long limit)
{
  long long p = 1;
  for (int t = 0; t < e; t++) {
    p *= b;
    if (p > limit)
      return 1;
  }
  return 0;
}

/** Records the candidate s->cur if it beats the best: smallest spread (largest - smallest factor: "as close to
 *  each other as possible", 7.5.2), then smallest sum of squares (the most even: 5x2x2x1 rather than 5x4x1x1). */
static void nm_mpi_dims_consider(struct nm_mpi_dims_search_s *s)
{
  long long spread = (long long)s->cur[0] - s->cur[s->k - 1], sq = 0;
  for (int j = 0; j < s->k; j++)
    sq += (long long)s->cur[j] * s->cur[j];
  if (s->best_spread < 0 || spread < s->best_spread || (spread == s->best_spread && sq < s->best_sq)) {
    s->best_spread = spread;
    s->best_sq = sq;
    memcpy(s->best, s->cur, sizeof(int) * (size_t)s->k);
  }
}

/** Chooses factor @p i among the divisors divs[j0..] (so at most the previous factor) of @p rest, then the next
 *  ones (branch and bound: every factor lies within best_spread of the first one). */
static void nm_mpi_dims_search(struct nm_mpi_dims_search_s *s, int i, int rest, int j0)
{
  if (i == s->k - 1) {
    if (rest > s->divs[j0])
      return;
    s->cur[i] = rest;
    nm_mpi_dims_consider(s);
    return;
  }
  int left = s->k - i;
  for (int j = j0; j < s->ndivs; j++) {
    int d = s->divs[j];
    if (rest % d)
      continue;
    if (!nm_mpi_pow_gt(d, left, rest - 1))
      break; /* d^left < rest: the remaining factors (<= d) cannot reach rest, nor with a smaller d */
    if (s->best_spread >= 0) {
      long long lo = (i == 0 ? d : s->cur[0]) - s->best_spread; /* smallest factor still worth trying */
      if (i > 0 && d < lo)
        break;
      if (lo > 1 && nm_mpi_pow_gt(lo, left - 1, rest / d))
        continue; /* the other factors, all >= lo, would exceed what is left (a smaller d may fit) */
    }
    s->cur[i] = d;
    nm_mpi_dims_search(s, i + 1, rest / d, j);
  }
}

/** A first candidate, to bound the search: prime factors, largest first, each to the smallest dimension. */
static void nm_mpi_dims_greedy(struct nm_mpi_dims_search_s *s, int rest)
{
  int primes[32], np = 0;
  for (long long p = 2; p * p <= rest; p++)
    while (rest % p == 0) {
      primes[np++] = (int)p;
      rest /= (int)p;
    }
  if (rest > 1)
    primes[np++] = rest;
  for (int j = 0; j < s->k; j++)
    s->cur[j] = 1;
  for (int q = np - 1; q >= 0; q--) {
    int m = 0;
    for (int j = 1; j < s->k; j++)
      if (s->cur[j] < s->cur[m])
        m = j;
    s->cur[m] *= primes[q];
  }
  for (int a = 0; a < s->k; a++) /* sort, decreasing */
    for (int b = a + 1; b < s->k; b++)
      if (s->cur[b] > s->cur[a]) {
        int t = s->cur[a];
        s->cur[a] = s->cur[b];
        s->cur[b] = t;
      }
  nm_mpi_dims_consider(s);
}

NM_MPI_ALIAS(Dims_create)
int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
  NM_MPI_LOCKED();
  if (ndims < 0 || (ndims > 0 && !dims))
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_DIMS, __func__);
  if (nnodes <= 0)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  long long fixed = 1;
  int free_dims = 0;
  for (int i = 0; i < ndims; i++) {
    if (dims[i] < 0)
      return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_DIMS, __func__);
    if (dims[i] == 0)
      free_dims++;
    else
      fixed *= dims[i];
    if (fixed > nnodes)
      return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_DIMS, __func__);
  }
  if (nnodes % fixed)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_DIMS, __func__);
  int rest = (int)(nnodes / fixed);
  if (free_dims == 0)
    return rest == 1 ? MPI_SUCCESS : nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_DIMS, __func__);

  /* Divisors of rest, decreasing (at most 1536 for an int). */
  int ndivs = 0, cap = 2048;
  int *divs = malloc(sizeof(int) * (size_t)cap);
  if (!divs)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, __func__);
  int nsmall = 0;
  for (long long d = 1; d * d <= rest; d++)
    if (rest % d == 0)
      divs[nsmall++] = (int)d;
  /* divs[0..nsmall) = small divisors increasing; build the decreasing list: large ones then small ones. */
  int *sorted = malloc(sizeof(int) * (size_t)cap);
  if (!sorted) {
    free(divs);
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, __func__);
  }
  for (int i = 0; i < nsmall; i++) {
    int big = rest / divs[i];
    if (big != divs[i])
      sorted[ndivs++] = big;
  }
  for (int i = nsmall - 1; i >= 0; i--)
    sorted[ndivs++] = divs[i];
  free(divs);

  struct nm_mpi_dims_search_s s;
  s.k = free_dims < NM_MPI_DIMS_MAX ? free_dims : NM_MPI_DIMS_MAX;
  s.divs = sorted;
  s.ndivs = ndivs;
  s.best_spread = -1;
  s.best_sq = 0;
  nm_mpi_dims_greedy(&s, rest);
  nm_mpi_dims_search(&s, 0, rest, 0);
  free(sorted);
  for (int i = 0, j = 0; i < ndims; i++)
    if (dims[i] == 0) {
      dims[i] = j < s.k ? s.best[j] : 1;
      j++;
    }
  return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- creation */

/* Processes of a grid of @p dims over @p c (Cart_create, Cart_map). @return MPI_SUCCESS, MPI_ERR_DIMS (a
 * dimension <= 0) or MPI_ERR_ARG (the grid needs more processes than the communicator has). */
static int nm_mpi_cart_grid_size(const struct nm_mpi_comm_s *c, int ndims, const int dims[], long long *nnodes)
{
  *nnodes = 1;
  for (int i = 0; i < ndims; i++) {
    if (dims[i] <= 0)
      return MPI_ERR_DIMS;
    *nnodes *= dims[i];
    if (*nnodes > c->size)
      return MPI_ERR_ARG;
  }
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Cart_create)
int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
                     MPI_Comm *comm_cart)
{
  NM_MPI_LOCKED();
  (void)reorder; /* a hint; ranks are kept */
  struct nm_mpi_comm_s *c = nm_mpi_comm_get(comm_old);
  if (!c)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, __func__);
  if (c->is_inter)
    return nm_mpi_error(comm_old, MPI_ERR_COMM, __func__);
  if (ndims < 0 || (ndims > 0 && (!dims || !periods)) || !comm_cart)
    return nm_mpi_error(comm_old, MPI_ERR_ARG, __func__);
  long long nnodes;
  int err = nm_mpi_cart_grid_size(c, ndims, dims, &nnodes);
  if (err)
    return nm_mpi_error(comm_old, err, __func__);
  MPI_Comm nc = MPI_COMM_NULL;
  int rc = PMPI_Comm_split(comm_old, c->rank < nnodes ? 0 : MPI_UNDEFINED, c->rank, &nc);
  if (rc != MPI_SUCCESS)
    return rc;
  *comm_cart = nc;
  if (nc == MPI_COMM_NULL)
    return MPI_SUCCESS;
  rc = nm_mpi_cart_attach(nm_mpi_comm_get(nc), ndims, dims, periods);
  if (rc != MPI_SUCCESS) {
    PMPI_Comm_free(comm_cart);
    return nm_mpi_error(comm_old, rc, __func__);
  }
  return MPI_SUCCESS;
}

/* MPI-3.1 7.5.8: the rank the calling process would have in a Cartesian grid of dims over comm, without
 * reordering (what Cart_create does): its rank in comm if the grid holds it, else MPI_UNDEFINED. */
NM_MPI_ALIAS(Cart_map)
int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
  NM_MPI_LOCKED();
  (void)periods;
  struct nm_mpi_comm_s *c = nm_mpi_comm_get(comm);
  if (!c)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, __func__);
  if (c->is_inter)
    return nm_mpi_error(comm, MPI_ERR_COMM, __func__);
  if (ndims < 0 || (ndims > 0 && !dims) || !newrank)
    return nm_mpi_error(comm, MPI_ERR_ARG, __func__);
  long long nnodes;
  int err = nm_mpi_cart_grid_size(c, ndims, dims, &nnodes);
  if (err)
    return nm_mpi_error(comm, err, __func__);
  *newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Cart_sub)
int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
  NM_MPI_LOCKED();
  NM_MPI_CART_GET_OR_FAIL(c, comm);
  if ((c->ndims > 0 && !remain_dims) || !newcomm)
    return nm_mpi_error(comm, MPI_ERR_ARG, __func__);
  int nd = c->ndims;
  int *coords = malloc(sizeof(int) * (size_t)(nd + 1));
  int *sdims = malloc(sizeof(int) * (size_t)(nd + 1));
  int *speriods = malloc(sizeof(int) * (size_t)(nd + 1));
  if (!coords || !sdims || !speriods) {
    free(coords);
    free(sdims);
    free(speriods);
    return nm_mpi_error(comm, MPI_ERR_NO_MEM, __func__);
  }
  nm_mpi_cart_coords_of(c, c->rank, coords);
  /* color: position in the grid of the dropped dimensions; key: position in the kept ones (row-major). */
  int color = 0, key = 0, k = 0;
  for (int i = 0; i < nd; i++) {
    if (remain_dims[i]) {
      key = key * c->dims[i] + coords[i];
      sdims[k] = c->dims[i];
      speriods[k] = c->periods[i];
      k++;
    } else {
      color = color * c->dims[i] + coords[i];
    }
  }
  MPI_Comm sub = MPI_COMM_NULL;
  int rc = PMPI_Comm_split(comm, color, key, &sub);
  if (rc == MPI_SUCCESS) {
    rc = nm_mpi_cart_attach(nm_mpi_comm_get(sub), k, sdims, speriods);
    if (rc != MPI_SUCCESS) {
      PMPI_Comm_free(&sub);
      rc = nm_mpi_error(comm, rc, __func__);
    } else {
      *newcomm = sub;
    }
  }
  free(coords);
  free(sdims);
  free(speriods);
  return rc;
}

/* ---------------------------------------------------------------- queries */

NM_MPI_ALIAS(Topo_test)
int PMPI_Topo_test(MPI_Comm comm, int *status)
{
  NM_MPI_LOCKED();
  struct nm_mpi_comm_s *c = nm_mpi_comm_get(comm);
  if (!c)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, __func__);
  if (!status)
    return nm_mpi_error(comm, MPI_ERR_ARG, __func__);
  *status = c->topo == MPI_CART ? MPI_CART : MPI_UNDEFINED;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Cartdim_get)
int PMPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
  NM_MPI_LOCKED();
  NM_MPI_CART_GET_OR_FAIL(c, comm);
  if (!ndims)
    return nm_mpi_error(comm, MPI_ERR_ARG, __func__);
  *ndims = c->ndims;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Cart_get)
int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
  NM_MPI_LOCKED();
  NM_MPI_CART_GET_OR_FAIL(c, comm);
  if (maxdims < c->ndims || (c->ndims > 0 && (!dims || !periods || !coords)))
    return nm_mpi_error(comm, MPI_ERR_ARG, __func__);
  if (c->ndims > 0) {
    memcpy(dims, c->dims, sizeof(int) * (size_t)c->ndims);
    memcpy(periods, c->periods, sizeof(int) * (size_t)c->ndims);
    nm_mpi_cart_coords_of(c, c->rank, coords);
  }
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Cart_coords)
int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
  NM_MPI_LOCKED();
  NM_MPI_CART_GET_OR_FAIL(c, comm);
  if (rank < 0 || rank >= c->size)
    return nm_mpi_error(comm, MPI_ERR_RANK, __func__);
  if (maxdims < c->ndims || (c->ndims > 0 && !coords))
    return nm_mpi_error(comm, MPI_ERR_ARG, __func__);
  nm_mpi_cart_coords_of(c, rank, coords);
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Cart_rank)
int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
  NM_MPI_LOCKED();
  NM_MPI_CART_GET_OR_FAIL(c, comm);
  if ((c->ndims > 0 && !coords) || !rank)
    return nm_mpi_error(comm, MPI_ERR_ARG, __func__);
  int r = 0;
  for (int i = 0; i < c->ndims; i++) {
    int x = coords[i], d = c->dims[i];
    if (c->periods[i])
      x = ((x % d) + d) % d; /* periodic: wraps around, either way */
    else if (x < 0 || x >= d)
      return nm_mpi_error(comm, MPI_ERR_ARG, __func__);
    r = r * d + x;
  }
  *rank = r;
  return MPI_SUCCESS;
}

/** Rank at coordinate @p x along dimension @p dim from @p coords, or MPI_PROC_NULL off a non-periodic edge. */
static int nm_mpi_cart_neighbor(const struct nm_mpi_comm_s *c, int *coords, int dim, long long x)
{
  long long d = c->dims[dim];
  if (c->periods[dim])
    x = ((x % d) + d) % d;
  else if (x < 0 || x >= d)
    return MPI_PROC_NULL;
  int saved = coords[dim], r = 0;
  coords[dim] = (int)x;
  for (int i = 0; i < c->ndims; i++)
    r = r * c->dims[i] + coords[i];
  coords[dim] = saved;
  return r;
}

NM_MPI_ALIAS(Cart_shift)
int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
  NM_MPI_LOCKED();
  NM_MPI_CART_GET_OR_FAIL(c, comm);
  if (direction < 0 || direction >= c->ndims)
    return nm_mpi_error(comm, MPI_ERR_DIMS, __func__);
  if (!rank_source || !rank_dest)
    return nm_mpi_error(comm, MPI_ERR_ARG, __func__);
  int *coords = malloc(sizeof(int) * (size_t)c->ndims);
  if (!coords)
    return nm_mpi_error(comm, MPI_ERR_NO_MEM, __func__);
  nm_mpi_cart_coords_of(c, c->rank, coords);
  long long x = coords[direction];
  *rank_dest = nm_mpi_cart_neighbor(c, coords, direction, x + disp);
  *rank_source = nm_mpi_cart_neighbor(c, coords, direction, x - disp);
  free(coords);
  return MPI_SUCCESS;
}
