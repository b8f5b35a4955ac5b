/**
 * @file mcast_topo_id.c
 * @brief Topology IDs, the compact routing table and the forwarding rule of Song, Dongarra, Moore 2009
 * (sections 4-7); issue 19, deliverable 1. nm_mcast_topo.h documents the model. The network side of the
 * standalone multicast is mcast_topo_send.c; the dynamic broadcast's tree kind calls nm_mcast_topo_children().
 *
 * IDs are never stored: rank -> mixed-radix coordinates -> digits, O(levels) per call. That keeps the state
 * of a rank O(r x 2^b) (DESIGN.md rule 8) and makes every rank agree on every ID without an exchange.
 */
#include <nmad/nm_mcast_topo.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct nm_mcast_topo_s {
  int size, self;
  int b, r;     /* base bits, digits per ID */
  int nlev;     /* levels, outermost included */
  int lsize[NM_MCAST_TOPO_MAX_LEVELS + 1]; /* coordinate range of each level, outermost first */
  int ldig[NM_MCAST_TOPO_MAX_LEVELS + 1];  /* digits of each level */
  enum nm_mcast_topo_choice_e choice;
  uint64_t seed;
  uint64_t self_id;
  int table[]; /* r rows x 2^b columns, -1 = empty */
};

#define NM_TOPO_KNOWN_BITS                                                                                        \
  (NM_MCAST_TOPO_PARAM_BASE_BITS | NM_MCAST_TOPO_PARAM_LEVELS | NM_MCAST_TOPO_PARAM_CHOICE |                     \
   NM_MCAST_TOPO_PARAM_SEED)

/* splitmix64: the seeded choice among candidates; a pure function, so every run draws the same table. */
static uint64_t nm_topo_mix(uint64_t x)
{
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/* Digits needed to write 0..n-1 in base 2^b (at least one, so that every level shows in the ID). */
static int nm_topo_digits_for(int n, int b)
{
  int d = 1;
  while (d * b < 62 && ((uint64_t)1 << (d * b)) < (uint64_t)n)
    d++;
  return d;
}

uint64_t nm_mcast_topo_id(const struct nm_mcast_topo_s *t, int rank)
{
  int coord[NM_MCAST_TOPO_MAX_LEVELS + 1];
  for (int l = t->nlev - 1; l > 0; l--) {
    coord[l] = rank % t->lsize[l];
    rank /= t->lsize[l];
  }
  coord[0] = rank;
  uint64_t id = 0;
  for (int l = 0; l < t->nlev; l++)
    id = (id << (t->b * t->ldig[l])) | (uint64_t)coord[l];
  return id;
}

int nm_mcast_topo_digit(const struct nm_mcast_topo_s *t, int rank, int i)
{
  return (int)((nm_mcast_topo_id(t, rank) >> (t->b * (t->r - 1 - i))) & ((1u << t->b) - 1));
}

static int nm_topo_lcp_ids(const struct nm_mcast_topo_s *t, uint64_t x, uint64_t y)
{
  uint64_t d = x ^ y;
  if (d == 0)
    return t->r;
  int hb = 63 - __builtin_clzll(d);
  return (t->r * t->b - 1 - hb) / t->b;
}

int nm_mcast_topo_lcp(const struct nm_mcast_topo_s *t, int a, int b)
{
  return nm_topo_lcp_ids(t, nm_mcast_topo_id(t, a), nm_mcast_topo_id(t, b));
}

int nm_mcast_topo_ndigits(const struct nm_mcast_topo_s *t) { return t->r; }
int nm_mcast_topo_base_bits(const struct nm_mcast_topo_s *t) { return t->b; }
int nm_mcast_topo_size(const struct nm_mcast_topo_s *t) { return t->size; }
int nm_mcast_topo_self(const struct nm_mcast_topo_s *t) { return t->self; }

int nm_mcast_topo_entry(const struct nm_mcast_topo_s *t, int i, int j)
{
  if (i < 0 || i >= t->r || j < 0 || j >= (1 << t->b))
    return -1;
  return t->table[i * (1 << t->b) + j];
}

/* First rank whose ID is >= @p id: IDs grow with the rank (mixed radix, outermost first), so a binary search. */
static int nm_topo_first_at_least(const struct nm_mcast_topo_s *t, uint64_t id)
{
  int lo = 0, hi = t->size;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (nm_mcast_topo_id(t, mid) < id)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

void nm_mcast_topo_prefix_range(const struct nm_mcast_topo_s *t, int rank, int len, int next, int *lo, int *hi)
{
  uint64_t p = len > 0 ? nm_mcast_topo_id(t, rank) >> (t->b * (t->r - len)) : 0;
  if (next >= 0) {
    p = (p << t->b) | (uint64_t)next;
    len++;
  }
  int free_bits = t->b * (t->r - len);
  if (free_bits >= 64) { /* the empty prefix: everybody */
    *lo = 0;
    *hi = t->size;
    return;
  }
  uint64_t first = p << free_bits, last = first | (free_bits ? (((uint64_t)1 << free_bits) - 1) : 0);
  *lo = nm_topo_first_at_least(t, first);
  *hi = last == UINT64_MAX ? t->size : nm_topo_first_at_least(t, last + 1);
}

/* Fill the routing table by one scan of the job (paper fig. 3, left): rank p goes to row lcp(self, p), column
 * its digit there. Entries nobody qualifies for stay empty (section 5: no Plaxton fill rule). */
static void nm_topo_build_table(struct nm_mcast_topo_s *t)
{
  const int cols = 1 << t->b, cells = t->r * cols;
  uint32_t count[64 * 16]; /* candidates seen per cell (r x 2^b <= 64 x 16) */
  int best[64 * 16];       /* nearest: score of the entry */
  for (int c = 0; c < cells; c++) {
    t->table[c] = -1;
    count[c] = 0;
    best[c] = -1;
  }
  for (int p = 0; p < t->size; p++) {
    if (p == t->self)
      continue;
    uint64_t id = nm_mcast_topo_id(t, p);
    int i = nm_topo_lcp_ids(t, t->self_id, id);
    int j = (int)((id >> (t->b * (t->r - 1 - i))) & (uint64_t)(cols - 1));
    int c = i * cols + j;
    count[c]++;
    if (t->choice == NM_MCAST_TOPO_NEAREST) {
      /* Closest: the candidate that continues like us after digit i (scan in ID order: lowest ID on ties). */
      uint64_t like_me = (t->self_id & ~((uint64_t)(cols - 1) << (t->b * (t->r - 1 - i)))) |
                         ((uint64_t)j << (t->b * (t->r - 1 - i)));
      int score = nm_topo_lcp_ids(t, like_me, id);
      if (score > best[c]) {
        best[c] = score;
        t->table[c] = p;
      }
    } else { /* reservoir sampling: each of the k candidates seen so far is kept with probability 1/k */
      uint64_t h = nm_topo_mix(t->seed ^ nm_topo_mix(((uint64_t)t->self << 32) ^ ((uint64_t)c << 20) ^ count[c]));
      if (h % count[c] == 0)
        t->table[c] = p;
    }
  }
}

int nm_mcast_topo_create(int size, int self, const struct nm_mcast_topo_params_s *params, nm_mcast_topo_t *out)
{
  struct nm_mcast_topo_params_s p = {.base_bits = 1, .choice = NM_MCAST_TOPO_RANDOM};
  if (out == NULL || size < 1 || self < 0 || self >= size)
    return -NM_EINVAL;
  if (params) {
    if (params->field_mask & ~(uint64_t)NM_TOPO_KNOWN_BITS)
      return -NM_EINVAL;
    if (params->field_mask & NM_MCAST_TOPO_PARAM_BASE_BITS)
      p.base_bits = params->base_bits;
    if (params->field_mask & NM_MCAST_TOPO_PARAM_LEVELS) {
      p.nlevels = params->nlevels;
      if (p.nlevels < 0 || p.nlevels > NM_MCAST_TOPO_MAX_LEVELS)
        return -NM_EINVAL;
      memcpy(p.fanout, params->fanout, sizeof(int) * (size_t)p.nlevels);
    }
    if (params->field_mask & NM_MCAST_TOPO_PARAM_CHOICE)
      p.choice = params->choice;
    if (params->field_mask & NM_MCAST_TOPO_PARAM_SEED)
      p.seed = params->seed;
  }
  if (p.base_bits < 1 || p.base_bits > 4 || (p.choice != NM_MCAST_TOPO_RANDOM && p.choice != NM_MCAST_TOPO_NEAREST))
    return -NM_EINVAL;
  long inner = 1;
  for (int l = 0; l < p.nlevels; l++) {
    if (p.fanout[l] < 1 || p.fanout[l] > size)
      return -NM_EINVAL;
    inner *= p.fanout[l];
    if (inner > (long)size * size)
      return -NM_EINVAL;
  }
  int lsize[NM_MCAST_TOPO_MAX_LEVELS + 1], ldig[NM_MCAST_TOPO_MAX_LEVELS + 1], r = 0;
  lsize[0] = (int)((size + inner - 1) / inner);
  for (int l = 0; l < p.nlevels; l++)
    lsize[l + 1] = p.fanout[l];
  for (int l = 0; l <= p.nlevels; l++) {
    ldig[l] = nm_topo_digits_for(lsize[l], p.base_bits);
    r += ldig[l];
  }
  if (r * p.base_bits > 64 || r > 64)
    return -NM_EINVAL;
  struct nm_mcast_topo_s *t = malloc(sizeof(*t) + sizeof(int) * (size_t)r * (1u << p.base_bits));
  if (t == NULL)
    return -NM_ENOMEM;
  t->size = size;
  t->self = self;
  t->b = p.base_bits;
  t->r = r;
  t->nlev = p.nlevels + 1;
  memcpy(t->lsize, lsize, sizeof(lsize));
  memcpy(t->ldig, ldig, sizeof(ldig));
  t->choice = p.choice;
  t->seed = p.seed;
  t->self_id = nm_mcast_topo_id(t, self);
  nm_topo_build_table(t);
  *out = t;
  return NM_ESUCCESS;
}

/* Level sizes of this host from hwloc: cores per package (nmad-run --bind-to core puts rank r on core r mod cores,
 * in hwloc's logical order, which is package-major). Every rank of the host reads the same machine, so every rank
 * computes the same IDs. @return 0, or -1 when the topology cannot be read or packages differ in size. */
static int nm_topo_hwloc_levels(struct nm_mcast_topo_params_s *p, int size)
{
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0)
    return -1;
  int err = hwloc_topology_load(topo) == 0 ? 0 : -1;
  int pkgs = err ? 0 : hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
  int cores = err ? 0 : hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  hwloc_topology_destroy(topo);
  if (err || pkgs < 1 || cores < pkgs || cores % pkgs)
    return -1;
  p->fanout[p->nlevels++] = cores / pkgs < size ? cores / pkgs : size; /* a small job fits in one package */
  return 0;
}

/* NMAD_MCAST_TOPO="F1xF2x...[:b=B][:nearest|:random][:seed=S]", or "hwloc[:...]" */
int nm_mcast_topo_from_env(int size, int self, nm_mcast_topo_t *out)
{
  struct nm_mcast_topo_params_s p = {.field_mask = 0};
  const char *v = getenv("NMAD_MCAST_TOPO");
  int bad = 0;
  if (v && *v) {
    const char *s = v;
    char *e;
    p.field_mask |= NM_MCAST_TOPO_PARAM_LEVELS;
    if (strncmp(s, "hwloc", 5) == 0 && (s[5] == '\0' || s[5] == ':')) {
      bad = nm_topo_hwloc_levels(&p, size) != 0;
      s += 5;
    }
    while (!bad && *s && *s != ':') {
      long f = strtol(s, &e, 10);
      if (e == s || f < 1 || f > size || p.nlevels == NM_MCAST_TOPO_MAX_LEVELS || (*e && *e != 'x' && *e != ':') ||
          (*e == 'x' && !(e[1] >= '0' && e[1] <= '9'))) {
        bad = 1;
        break;
      }
      p.fanout[p.nlevels++] = (int)f;
      s = *e == 'x' ? e + 1 : e;
    }
    while (!bad && *s == ':') {
      s++;
      if (strncmp(s, "b=", 2) == 0) {
        p.base_bits = (int)strtol(s + 2, &e, 10);
        p.field_mask |= NM_MCAST_TOPO_PARAM_BASE_BITS;
        bad = e == s + 2;
        s = e;
      } else if (strncmp(s, "seed=", 5) == 0) {
        p.seed = strtoull(s + 5, &e, 10);
        p.field_mask |= NM_MCAST_TOPO_PARAM_SEED;
        bad = e == s + 5;
        s = e;
      } else if (strncmp(s, "nearest", 7) == 0 || strncmp(s, "random", 6) == 0) {
        p.choice = s[0] == 'n' ? NM_MCAST_TOPO_NEAREST : NM_MCAST_TOPO_RANDOM;
        p.field_mask |= NM_MCAST_TOPO_PARAM_CHOICE;
        s += s[0] == 'n' ? 7 : 6;
      } else {
        bad = 1;
      }
    }
    bad |= *s != '\0';
  }
  int err = bad ? -NM_EINVAL : nm_mcast_topo_create(size, self, &p, out);
  if (err == -NM_EINVAL && v)
    fprintf(stderr, "nmad: NMAD_MCAST_TOPO='%s' is invalid; accepted: level sizes outermost first joined by 'x' "
                    "(each 1..job size) or 'hwloc' (cores per package of this host), then optional ':b=1..4', "
                    "':random' or ':nearest', ':seed=N' (e.g. '16x2:b=2:nearest')\n", v);
  return err;
}

void nm_mcast_topo_destroy(nm_mcast_topo_t t) { free(t); }

int nm_mcast_topo_set_has(const struct nm_mcast_topo_set_s *set, int rank)
{
  if (set->list == NULL)
    return rank >= set->lo && rank < set->hi;
  for (int k = 0; k < set->n; k++)
    if (set->list[k] == rank)
      return 1;
  return 0;
}

static int nm_topo_count_in(const struct nm_mcast_topo_set_s *set, int lo, int hi)
{
  if (set->list == NULL) {
    int a = set->lo > lo ? set->lo : lo, z = set->hi < hi ? set->hi : hi;
    return z > a ? z - a : 0;
  }
  int c = 0;
  for (int k = 0; k < set->n; k++)
    c += set->list[k] >= lo && set->list[k] < hi;
  return c;
}

int nm_mcast_topo_route(const struct nm_mcast_topo_s *t, int stage, const struct nm_mcast_topo_set_s *set,
                        struct nm_mcast_topo_hop_s *hops)
{
  if (stage < 0 || stage > t->r || set == NULL || (set->list && set->n < 0) ||
      (!set->list && (set->lo < 0 || set->hi > t->size)))
    return -NM_EINVAL;
  const int cols = 1 << t->b;
  int n = 0;
  /* Farthest level first: its subtrees are the largest and the deepest (paper fig. 3 sends in table order). */
  for (int i = stage; i < t->r; i++) {
    int mine = (int)((t->self_id >> (t->b * (t->r - 1 - i))) & (uint64_t)(cols - 1));
    for (int j = 0; j < cols; j++) {
      int y = t->table[i * cols + j];
      if (j == mine || y < 0)
        continue; /* an empty entry: no rank, hence no destination, under that prefix (Lemma 1) */
      int lo, hi;
      nm_mcast_topo_prefix_range(t, t->self, i, j, &lo, &hi);
      int count = nm_topo_count_in(set, lo, hi);
      if (count == 0)
        continue;
      if (!set->list) { /* the interval form stays an interval: what the next header carries */
        lo = set->lo > lo ? set->lo : lo;
        hi = set->hi < hi ? set->hi : hi;
      }
      hops[n++] = (struct nm_mcast_topo_hop_s){.rank = y, .stage = i + 1, .lo = lo, .hi = hi, .count = count,
                                               .relay = !nm_mcast_topo_set_has(set, y)};
    }
  }
  return n;
}

/* ---- the NM_MCAST_TREE_TOPO_ID tree of the dynamic broadcast ---- */

struct nm_topo_run_s {
  int child, end, level, size;
};

static int nm_topo_run_cmp(const void *a, const void *b)
{
  const struct nm_topo_run_s *x = a, *y = b;
  if (x->level != y->level)
    return x->level - y->level; /* farthest first */
  if (x->size != y->size)
    return y->size - x->size; /* then the largest subtree */
  return x->child - y->child;
}

/* Group key of a destination seen from @p self: (longest common prefix, next digit). */
static int nm_topo_key(const struct nm_mcast_topo_s *t, uint64_t self_id, int rank, int *level)
{
  if (rank < 0 || rank >= t->size) { /* validated by the caller; a stray value only makes a group of its own */
    *level = t->r;
    return -1;
  }
  uint64_t id = nm_mcast_topo_id(t, rank);
  *level = nm_topo_lcp_ids(t, self_id, id);
  return *level < t->r ? (int)((id >> (t->b * (t->r - 1 - *level))) & ((1u << t->b) - 1)) : -1;
}

int nm_mcast_topo_children(const struct nm_mcast_topo_s *t, int self, const int *ranks, int m, int *child, int *end)
{
  if (m <= 0)
    return 0;
  struct nm_topo_run_s *run = malloc(sizeof(*run) * (size_t)m);
  if (run == NULL)
    return -NM_ENOMEM;
  uint64_t self_id = self >= 0 && self < t->size ? nm_mcast_topo_id(t, self) : 0;
  int nr = 0, prev_key = 0, prev_level = -1;
  for (int k = 0; k < m; k++) {
    int level, key = nm_topo_key(t, self_id, ranks[k], &level);
    if (nr > 0 && level == prev_level && key == prev_key) {
      run[nr - 1].end = k + 1;
      run[nr - 1].size++;
    } else {
      run[nr++] = (struct nm_topo_run_s){.child = k + 1, .end = k + 1, .level = level, .size = 1};
    }
    prev_level = level;
    prev_key = key;
  }
  qsort(run, (size_t)nr, sizeof(*run), nm_topo_run_cmp);
  for (int k = 0; k < nr; k++) {
    child[k] = run[k].child;
    end[k] = run[k].end;
  }
  free(run);
  return nr;
}

static int nm_topo_int_cmp(const void *a, const void *b)
{
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

void nm_mcast_topo_sort(const struct nm_mcast_topo_s *t, int *ranks, int n)
{
  (void)t; /* ID order is rank order (mixed radix outermost first): sorting ranks sorts IDs */
  qsort(ranks, (size_t)n, sizeof(int), nm_topo_int_cmp);
}
