/**
 * @file split_model.c
 * @brief The model of the split tree, Denis et al. 2019, section 6.2, eqs. 3-9 (nm_coll_split.h), and the
 * choice of S it makes.
 *
 * Two corrections to the equations as printed, both needed to reproduce the paper's own figures (the switch
 * points 52, 58 and 62 of sections 6.2 and 7, tests/test_split_model.c):
 *  - eq. 4 prints C(N) = (N / N_proc) C(N_proc), computation that *shrinks* with fewer ranks; section 7 says the
 *    opposite ("when we have less MPI tasks, the duration of computation increases"), and only the strong-scaling
 *    form C(N) = (N_proc / N) C(N_proc) gives a minimum at S = 0 near N = 51 as section 6.2 reports. We use it;
 *    with the printed form the switches fall at 43, 51, 54 (back to S = 1), 57, 61.
 *  - eq. 5, F(N, i) = ceil(N / 2^i + 1/2), counts one edge too many when N / 2^i is a half-integer or close
 *    (N = 57, i = 1: 29, the tree has 28). With it the second switch falls at 57 instead of 58; with the exact
 *    count of the tree's edges all three are the paper's. The exact count is the default, eq. 5 is selectable.
 */
#include <nmad/nm_coll_split.h>
#include <unistd.h>

int nm_coll_split_depth(int n)
{
  int h = 0;
  while (h < 30 && (1 << h) < n)
    h++;
  return h;
}

struct nm_coll_split_model_s nm_coll_split_model_paper(int n_proc, int n, int variable)
{
  struct nm_coll_split_model_s m = {n_proc, n, -1, -1.0, variable, 0};
  return m;
}

struct nm_coll_split_model_s nm_coll_split_model_host(int n, int variable)
{
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  return nm_coll_split_model_paper(online > 0 ? (int)online : 1, n, variable);
}

static int nm_split_model_ok(const struct nm_coll_split_model_s *m)
{
  return m && m->n >= 1 && m->n_proc >= 1;
}

static int nm_split_P(const struct nm_coll_split_model_s *m)
{
  return m->comm_cores >= 0 ? m->comm_cores : m->n_proc - m->n;
}

int nm_coll_split_model_level(const struct nm_coll_split_model_s *m, int i)
{
  int n = m->n;
  if (i < 1 || i > nm_coll_split_depth(n))
    return 0;
  long long half = 1LL << (i - 1), step = 1LL << i;
  if (m->eq5_as_printed) /* ceil(N / 2^i + 1/2) = ceil((2N + 2^i) / 2^(i+1)) in integers */
    return (int)((2LL * n + step + 2 * step - 1) / (2 * step));
  /* parents v = 0, 2^i, 2 2^i, ... with a child v + 2^(i-1) < N */
  return n > half ? (int)((n - half + step - 1) / step) : 0;
}

/* Weight of level i: 1, or 2^(i-1) when the data doubles at each level (eqs. 8-9). */
static double nm_split_weight(const struct nm_coll_split_model_s *m, int i)
{
  return m->variable ? (double)(1LL << (i - 1)) : 1.0;
}

/* The blocking time: H (eq. 3), or W_H(N) = sum of the weights (eq. 8's first term at S = H). */
static double nm_split_blocking(const struct nm_coll_split_model_s *m, int n)
{
  int h = nm_coll_split_depth(n);
  double w = 0;
  for (int i = 1; i <= h; i++)
    w += m->variable ? (double)(1LL << (i - 1)) : 1.0;
  return w;
}

double nm_coll_split_model_compute(const struct nm_coll_split_model_s *m)
{
  if (!nm_split_model_ok(m))
    return 0;
  if (m->compute >= 0)
    return m->compute;
  return (double)m->n_proc / m->n * nm_split_blocking(m, m->n_proc); /* eq. 4, strong scaling */
}

/* The two parts of eqs. 6-9: the S levels on the application cores, the others folded on the P cores. */
static void nm_split_parts(const struct nm_coll_split_model_s *m, int S, double *app, double *folded)
{
  int h = nm_coll_split_depth(m->n), P = nm_split_P(m);
  if (S < 0)
    S = 0;
  if (S > h)
    S = h;
  *app = *folded = 0;
  for (int i = 1; i <= h; i++) {
    if (i <= S)
      *app += nm_split_weight(m, i); /* min(W(N, S), W_H(N)): the clamp above */
    else
      *folded += (double)((nm_coll_split_model_level(m, i) + P - 1) / P) * nm_split_weight(m, i);
  }
}

double nm_coll_split_model_nonblocking(const struct nm_coll_split_model_s *m, int S)
{
  if (!nm_split_model_ok(m))
    return 0;
  if (nm_split_P(m) <= 0)
    return nm_split_blocking(m, m->n);
  double app, folded;
  nm_split_parts(m, S, &app, &folded);
  return app + folded; /* eq. 6 / eq. 8 */
}

double nm_coll_split_model_overlapped(const struct nm_coll_split_model_s *m, int S)
{
  if (!nm_split_model_ok(m))
    return 0;
  double c = nm_coll_split_model_compute(m);
  if (nm_split_P(m) <= 0)
    return c + nm_split_blocking(m, m->n); /* the threads share the application's cores: no overlap */
  double app, folded;
  nm_split_parts(m, S, &app, &folded);
  return app + (c > folded ? c : folded); /* eq. 7 / eq. 9 */
}

int nm_coll_split_model_best(const struct nm_coll_split_model_s *m)
{
  if (!nm_split_model_ok(m))
    return -NM_EINVAL;
  int h = nm_coll_split_depth(m->n);
  /* No idle core (P <= 0): the model prices every S the same (nothing overlaps), so the tie rule answers S = 0,
   * where the paper keeps the blocking behaviour, S = H (section 7). nmad's progress thread blocks in the drivers
   * when it has nothing to do, so on a time-sliced core it takes CPU only for the work it is given, and the levels
   * it holds move during the computation, where S = H leaves them all to the wait. Measured on this project's
   * 2-core host (2 and 4 ranks, sm and tcp, every NMAD_BIND policy: doc/split-tree.md), S = 0 was within 1.1x of
   * the best S in 72 of 72 cases (worst 1.09x) and S = H up to 1.30x slower. */
  int best = 0;
  double tbest = nm_coll_split_model_overlapped(m, 0);
  for (int S = 1; S <= h; S++) {
    double t = nm_coll_split_model_overlapped(m, S);
    if (t < tbest - 1e-9) {
      tbest = t;
      best = S;
    }
  }
  return best;
}
