/* nm_bench_topo_cross: count the messages that cross an inter-host link (issue 19, benchmark 6a, "topology-aware
 * trees cross the inter-host links fewer times than rank-order binomial (counted)").
 *
 * Usage: nm_bench_topo_cross [--ppn K] [--topo SPEC] [--sets S] N...
 *   K ranks per host, block placement (ranks hK..hK+K-1 on host h, as nmad-sim --ranks-per-host K); SPEC the
 *   NMAD_MCAST_TOPO description of that machine (default "K"); S random destination sets per N (default 100).
 * For each job size N and root 0, three destination sets: everybody, a random half, a random eighth. Trees:
 *  - binomial: the rank-order binomial tree of nm_coll_bcast (vrank v = rank (v + root) mod N) for "everybody",
 *    and the dynamic broadcast's binomial over the destination list in rank order for subsets;
 *  - topo: the NM_MCAST_TREE_TOPO_ID tree (nm_mcast_topo_children() at every hop, list in ID order);
 *  - song: the standalone multicast through the routing tables (nm_mcast_topo_route(), virtual masters counted
 *    as the extra messages they cost).
 * Prints N, set, mean messages, mean crossings of each tree, and the depth (steps) of the deepest destination.
 * Pure computation, no network: the counts are exact and deterministic (fixed seeds). */
#include <nmad/nm_mcast_topo.h>
#include "collectives/nm_coll_tree.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct count_s {
  long msgs, cross;
  int depth;
};

static int ppn = 2;
static int host_of(int r) { return r / ppn; }

static void edge(struct count_s *c, int from, int to, int depth)
{
  c->msgs++;
  c->cross += host_of(from) != host_of(to);
  if (depth > c->depth)
    c->depth = depth;
}

/* rank-order binomial over list[0..m) below @p self (list positions 1..m), the dynamic broadcast's binomial */
static void binomial_list(struct count_s *c, int self, const int *list, int m, int depth)
{
  struct nm_coll_tree_s t;
  if (m <= 0 || nm_coll_tree_init(&t, NM_COLL_TREE_BINOMIAL, m + 1, 0) != 0)
    return;
  struct nm_coll_tree_node_s root;
  nm_coll_tree_node(&t, 0, &root);
  for (int i = 0; i < root.n_children; i++) {
    int hi, ch = nm_coll_tree_child(&t, &root, i, &hi);
    edge(c, self, list[ch - 1], depth + 1);
    binomial_list(c, list[ch - 1], list + ch, hi - 1 - ch, depth + 1);
  }
}

static void topo_list(struct count_s *c, nm_mcast_topo_t t, int self, const int *list, int m, int depth)
{
  int *child = malloc(sizeof(int) * (size_t)(m ? m : 1)), *end = malloc(sizeof(int) * (size_t)(m ? m : 1));
  int nc = nm_mcast_topo_children(t, self, list, m, child, end);
  for (int k = 0; k < nc; k++) {
    int ch = child[k];
    edge(c, self, list[ch - 1], depth + 1);
    topo_list(c, t, list[ch - 1], list + ch, end[k] - ch, depth + 1);
  }
  free(child);
  free(end);
}

/* Song's forwarding through each rank's own routing table (tables built on demand, cached per rank). */
static void song(struct count_s *c, nm_mcast_topo_t *tabs, const struct nm_mcast_topo_params_s *p, int n, int self,
                 int stage, const struct nm_mcast_topo_set_s *set, int depth)
{
  if (tabs[self] == NULL && nm_mcast_topo_from_env(n, self, &tabs[self]) != 0)
    exit(2);
  struct nm_mcast_topo_hop_s hops[64 * 15];
  int nh = nm_mcast_topo_route(tabs[self], stage, set, hops);
  for (int h = 0; h < nh; h++) {
    edge(c, self, hops[h].rank, depth + 1);
    int *sub = NULL;
    struct nm_mcast_topo_set_s s2 = *set;
    if (set->list) {
      sub = malloc(sizeof(int) * (size_t)hops[h].count);
      s2.n = 0;
      for (int k = 0; k < set->n; k++)
        if (set->list[k] >= hops[h].lo && set->list[k] < hops[h].hi)
          sub[s2.n++] = set->list[k];
      s2.list = sub;
    } else {
      s2.lo = hops[h].lo;
      s2.hi = hops[h].hi;
    }
    song(c, tabs, p, n, hops[h].rank, hops[h].stage, &s2, depth + 1);
    free(sub);
  }
}

static uint64_t rng(uint64_t *s)
{
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

int main(int argc, char **argv)
{
  const char *spec = NULL;
  int sets = 100, first = 1;
  char buf[64];
  while (first < argc && argv[first][0] == '-') {
    if (strcmp(argv[first], "--ppn") == 0 && first + 1 < argc)
      ppn = atoi(argv[++first]);
    else if (strcmp(argv[first], "--topo") == 0 && first + 1 < argc)
      spec = argv[++first];
    else if (strcmp(argv[first], "--sets") == 0 && first + 1 < argc)
      sets = atoi(argv[++first]);
    else {
      fprintf(stderr, "usage: %s [--ppn K] [--topo SPEC] [--sets S] N...\n", argv[0]);
      return 2;
    }
    first++;
  }
  if (ppn < 1 || sets < 1 || first >= argc) {
    fprintf(stderr, "usage: %s [--ppn K] [--topo SPEC] [--sets S] N...\n", argv[0]);
    return 2;
  }
  if (spec == NULL) {
    snprintf(buf, sizeof(buf), "%d", ppn);
    spec = buf;
  }
  setenv("NMAD_MCAST_TOPO", spec, 1);
  printf("# ppn %d, NMAD_MCAST_TOPO=%s, root 0; mean over %d random sets for the subsets\n", ppn, spec, sets);
  printf("%6s %9s %9s %10s %10s %10s %8s %8s %8s %9s\n", "N", "set", "dests", "bin_cross", "topo_cross",
         "song_cross", "bin_dep", "topo_dep", "song_dep", "song_msgs");
  for (int a = first; a < argc; a++) {
    int n = atoi(argv[a]);
    if (n < 2)
      continue;
    nm_mcast_topo_t t0;
    if (nm_mcast_topo_from_env(n, 0, &t0) != 0)
      return 2;
    struct nm_mcast_topo_params_s p; /* the same description, for every rank's table */
    nm_mcast_topo_t *tabs = calloc((size_t)n, sizeof(*tabs));
    int *list = malloc(sizeof(int) * (size_t)n);
    static const char *names[3] = {"all", "half", "eighth"};
    for (int kind = 0; kind < 3; kind++) {
      struct count_s b = {0}, tp = {0}, sg = {0};
      double dests = 0;
      int reps = kind == 0 ? 1 : sets;
      uint64_t s = 0x1234567ULL + (uint64_t)n * 31 + (uint64_t)kind;
      for (int rep = 0; rep < reps; rep++) {
        int m = 0;
        for (int r = 1; r < n; r++)
          if (kind == 0 || rng(&s) % (kind == 1 ? 2 : 8) == 0)
            list[m++] = r;
        dests += m;
        binomial_list(&b, 0, list, m, 0);
        topo_list(&tp, t0, 0, list, m, 0);
        struct nm_mcast_topo_set_s set = kind == 0 ? (struct nm_mcast_topo_set_s){.lo = 0, .hi = n}
                                                   : (struct nm_mcast_topo_set_s){.list = list, .n = m};
        (void)p;
        song(&sg, tabs, NULL, n, 0, 0, &set, 0);
      }
      printf("%6d %9s %9.1f %10.1f %10.1f %10.1f %8d %8d %8d %9.1f\n", n, names[kind], dests / reps,
             (double)b.cross / reps, (double)tp.cross / reps, (double)sg.cross / reps, b.depth, tp.depth, sg.depth,
             (double)sg.msgs / reps);
    }
    for (int r = 0; r < n; r++)
      nm_mcast_topo_destroy(tabs[r]);
    free(tabs);
    free(list);
    nm_mcast_topo_destroy(t0);
  }
  return 0;
}
