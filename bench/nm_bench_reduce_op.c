/**
 * @file nm_bench_reduce_op.c
 * @brief Speed of the MPI shim's reduction kernels (issue 18 deliverable 2, "operators at memory speed"):
 * MPI_Reduce_local with MPI_SUM and MPI_MAX on MPI_DOUBLE, MPI_INT and MPI_FLOAT vectors of 64 KiB to 16 MiB,
 * beside memcpy and a plain `a[i] += b[i]` loop on the same vectors, in one process (a singleton MPI job).
 *
 * Rate = vector bytes / time, in GB/s (10^9 bytes/s): a reduction reads two vectors and writes one, memcpy reads
 * one and writes one, so at memory speed the kernel reaches about 2/3 of memcpy's figure and the plain loop's.
 * Each point is the median of --reps timings of a batch of calls long enough (>= 2 ms) for the clock, timed
 * with the thread's CPU clock (as nm_bench_selfcost): on a host shared with other jobs, wall-clock rates
 * measured how often this process ran, not the kernel.
 * The plain loop is compiled here with restrict and GCC's dynamic vectoriser cost model, like the kernels.
 *
 * Usage: nm_bench_reduce_op [--reps N] [--csv]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__GNUC__) && !defined(__clang__)
#define BENCH_VEC __attribute__((optimize("tree-vectorize", "vect-cost-model=dynamic"), noinline))
#else
#define BENCH_VEC __attribute__((noinline))
#endif

static double bench_now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); /* CPU time: immune to descheduling on a shared host */
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

BENCH_VEC static void plain_add_double(const double *restrict b, double *restrict a, size_t n)
{
  for (size_t i = 0; i < n; i++)
    a[i] += b[i];
}
BENCH_VEC static void plain_add_int(const int *restrict b, int *restrict a, size_t n)
{
  for (size_t i = 0; i < n; i++)
    a[i] = (int)((unsigned)a[i] + (unsigned)b[i]);
}
BENCH_VEC static void plain_add_float(const float *restrict b, float *restrict a, size_t n)
{
  for (size_t i = 0; i < n; i++)
    a[i] += b[i];
}

/** What one point measures. */
enum { K_REDUCE, K_MEMCPY, K_PLAIN };

struct point {
  int kind;
  MPI_Op op;
  MPI_Datatype dt;
  size_t esize;
};

static void run_once(const struct point *pt, const void *in, void *inout, size_t bytes)
{
  size_t n = bytes / pt->esize;
  if (pt->kind == K_MEMCPY)
    memcpy(inout, in, bytes);
  else if (pt->kind == K_REDUCE)
    MPI_Reduce_local(in, inout, (int)n, pt->dt, pt->op);
  else if (pt->dt == MPI_DOUBLE)
    plain_add_double(in, inout, n);
  else if (pt->dt == MPI_INT)
    plain_add_int(in, inout, n);
  else
    plain_add_float(in, inout, n);
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/** Median GB/s of @p reps batches. */
static double measure(const struct point *pt, const void *in, void *inout, size_t bytes, int reps)
{
  int batch = 1;
  double t0 = bench_now();
  run_once(pt, in, inout, bytes); /* warm-up, and the batch size for >= 2 ms */
  double one = bench_now() - t0;
  if (one < 2e-3)
    batch = (int)(2e-3 / (one > 1e-9 ? one : 1e-9)) + 1;
  double *rate = malloc(sizeof(double) * (size_t)reps);
  if (!rate)
    return 0;
  for (int r = 0; r < reps; r++) {
    t0 = bench_now();
    for (int b = 0; b < batch; b++)
      run_once(pt, in, inout, bytes);
    rate[r] = (double)bytes * batch / (bench_now() - t0) / 1e9;
  }
  qsort(rate, (size_t)reps, sizeof(double), cmp_double);
  double med = rate[reps / 2];
  free(rate);
  return med;
}

int main(int argc, char **argv)
{
  int reps = 11, csv = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
      reps = atoi(argv[++i]);
    else if (strcmp(argv[i], "--csv") == 0)
      csv = 1;
    else {
      fprintf(stderr, "usage: %s [--reps N] [--csv]\n", argv[0]);
      return 2;
    }
  }
  if (reps < 1)
    reps = 1;
  MPI_Init(&argc, &argv);
  const size_t max = (size_t)16 << 20;
  char *in = aligned_alloc(64, max), *inout = aligned_alloc(64, max);
  if (!in || !inout)
    return 1;
  /* small values: no overflow or NaN/infinity, whatever the number of repetitions */
  for (size_t i = 0; i < max / sizeof(int); i++) {
    ((int *)in)[i] = (int)(i % 7);
    ((int *)inout)[i] = (int)(i % 5);
  }
  const struct point pts[] = {
    {K_MEMCPY, MPI_OP_NULL, MPI_BYTE, 1},      {K_PLAIN, MPI_OP_NULL, MPI_DOUBLE, sizeof(double)},
    {K_REDUCE, MPI_SUM, MPI_DOUBLE, sizeof(double)}, {K_REDUCE, MPI_MAX, MPI_DOUBLE, sizeof(double)},
    {K_PLAIN, MPI_OP_NULL, MPI_INT, sizeof(int)},    {K_REDUCE, MPI_SUM, MPI_INT, sizeof(int)},
    {K_REDUCE, MPI_MAX, MPI_INT, sizeof(int)},       {K_PLAIN, MPI_OP_NULL, MPI_FLOAT, sizeof(float)},
    {K_REDUCE, MPI_SUM, MPI_FLOAT, sizeof(float)},   {K_REDUCE, MPI_MAX, MPI_FLOAT, sizeof(float)},
  };
  const char *names[] = {"memcpy",  "plain_add_double", "SUM_double", "MAX_double", "plain_add_int",
                         "SUM_int", "MAX_int",          "plain_add_float", "SUM_float", "MAX_float"};
  const int npts = (int)(sizeof(pts) / sizeof(pts[0]));
  if (csv)
    printf("bytes,kernel,GBps\n");
  else {
    printf("%-10s", "bytes");
    for (int k = 0; k < npts; k++)
      printf(" %16s", names[k]);
    printf("\n");
  }
  for (size_t bytes = 64 << 10; bytes <= max; bytes *= 4) {
    if (!csv)
      printf("%-10zu", bytes);
    for (int k = 0; k < npts; k++) {
      double g = measure(&pts[k], in, inout, bytes, reps);
      if (csv)
        printf("%zu,%s,%.2f\n", bytes, names[k], g);
      else
        printf(" %16.2f", g);
    }
    if (!csv)
      printf("\n");
    fflush(stdout);
  }
  free(in);
  free(inout);
  MPI_Finalize();
  return 0;
}
