/* nm_coll_model_table: prints the broadcast model's choice (nm_coll_bcast_choose, Hasanov 2015 sections 2.1
 * and 3) for a grid of process counts and message sizes, on the platforms of doc/platforms/ or on given
 * Hockney parameters; and, with --groups, the time of a hierarchical algorithm against its number of groups
 * (the theoretical curves of the paper's fig. 6). The table of doc/collectives.md is this program's output.
 *
 *   nm_coll_model_table [--platform inti|graphene|torus|torus-hw|shm|tcp|all] [--alpha S --bandwidth B/s]
 *                       [--p 4,8,...] [--m 8,64K,...] [--csv] [--hier] [--cost]
 * (all: inti, graphene, torus; --hier: for chain, pipelined chain and scatter-ring-allgather, the best G and
 * the flat / hierarchical time ratio instead of the choice; --cost: the wall-clock cost of one choice, with --logp
 * of the one the library makes)
 *   nm_coll_model_table --logp [--platform NAME | --L S --o S --bandwidth B/s] [--p LIST] [--m LIST] [--csv]
 * (--logp: the choice the library makes, nm_coll_bcast_choose_logp(), with the platform's LogP split of alpha:
 * wire latency L, sender's overhead o per message; doc/collectives.md "The model in LogP form")
 *   nm_coll_model_table --groups ALGO --p P --m M [--platform NAME | --alpha S --bandwidth B/s]
 */
#include <nmad/nm_coll_model.h>
#include <nmad/nm_errno.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Hockney figures of doc/platforms/README.md (CM02: the simulated alpha and beta are the nominal ones). */
struct platform_s {
  const char *name;
  double alpha;     /* s */
  double bandwidth; /* bytes/s */
  const char *what;
  double L, o;      /* the LogP split nm_coll_bcast_auto() sees (s): wire latency, sender's time per message */
  const char *what_logp;
  double burst, o_burst; /* messages a sender posts after a pause before o applies, and their cost (s) */
};
static const struct platform_s platforms[] = {
  /* under nmad-sim (defaults: --send-overhead 0, --poll-cost 1000): L = the route's latency, o = 1 us, the
   * simulated cost of the progress pass each packet of a burst waits for, once the first 17 of the burst left at
   * the send overhead (drivers/sim/nm_sim.cpp, gap_free) */
  {"inti", 1.4e-6, 3.3e9, "inti-ib-qdr-100.xml: 1.4 us, 3.3 GB/s", 1.4e-6, 1e-6,
   "inti-ib-qdr-100.xml under nmad-sim: L = 1.4 us, o = 1 us after a burst of 17 at 0 us, 3.3 GB/s", 17, 0},
  {"graphene", 48e-6, 117.7e6, "graphene-gige-128.xml: 48 us, 117.7 MB/s", 48e-6, 1e-6,
   "graphene-gige-128.xml under nmad-sim: L = 48 us, o = 1 us after a burst of 17 at 0 us, 117.7 MB/s", 17, 0},
  {"torus", 3e-6, 425e6, "bgp-torus-6144.xml + BG/P MPI software latency: 3 us, 425 MB/s", 0.119e-6, 4e-6,
   "bgp-torus-6144.xml under nmad-sim --send-overhead 3000 (--poll-cost 1000: o = 4 us after a burst of 17 at "
   "3 us): L = 0.119 us, 425 MB/s", 17, 3e-6},
  {"torus-hw", 0.119e-6, 425e6, "bgp-torus-6144.xml, hardware only (1 hop): 0.119 us, 425 MB/s", 0.119e-6, 1e-6,
   "bgp-torus-6144.xml under nmad-sim: L = 0.119 us, o = 1 us after a burst of 17 at 0 us, 425 MB/s", 17, 0},
  /* the libfabric driver's nominal figures (drivers/ofi/nm_ofi_quirks.c), what MPI_Bcast sees on this host */
  {"shm", 1.1e-6, 18000e6, "NMAD_DRIVER=shm nominal: 1.1 us, 18 GB/s", 0.55e-6, 0.55e-6,
   "NMAD_DRIVER=shm nominal: L = 0.55 us, o = 0.55 us, 18 GB/s", 0, 0},
  {"tcp", 11e-6, 3100e6, "NMAD_DRIVER=tcp nominal: 11 us, 3.1 GB/s", 5.5e-6, 5.5e-6,
   "NMAD_DRIVER=tcp nominal: L = 5.5 us, o = 5.5 us, 3.1 GB/s", 0, 0},
};
#define NPLATFORMS (sizeof(platforms) / sizeof(platforms[0]))

#define MAXLIST 64

static size_t parse_size(const char *s)
{
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  switch (*end) {
  case 'k': case 'K': v <<= 10; break;
  case 'm': case 'M': v <<= 20; break;
  case 'g': case 'G': v <<= 30; break;
  default: break;
  }
  return (size_t)v;
}

static int parse_list(const char *s, size_t *out)
{
  int n = 0;
  char buf[512];
  snprintf(buf, sizeof(buf), "%s", s);
  char *save = NULL;
  for (char *t = strtok_r(buf, ",", &save); t && n < MAXLIST; t = strtok_r(NULL, ",", &save))
    out[n++] = parse_size(t);
  return n;
}

static const char *human(size_t m, char *buf, size_t len)
{
  if (m >= (1u << 20) && m % (1u << 20) == 0)
    snprintf(buf, len, "%zu MiB", m >> 20);
  else if (m >= 1024 && m % 1024 == 0)
    snprintf(buf, len, "%zu KiB", m >> 10);
  else
    snprintf(buf, len, "%zu B", m);
  return buf;
}

static void describe(const struct nm_coll_bcast_choice_s *c, char *buf, size_t len)
{
  int n = snprintf(buf, len, "%s%s", c->hierarchical ? "hier:" : "", nm_coll_model_algo_name(c->algo));
  if (c->hierarchical)
    n += snprintf(buf + n, len - (size_t)n, ":groups=%d", c->groups);
  if (c->algo == NM_COLL_BCAST_PIPELINED_CHAIN && c->segment)
    snprintf(buf + n, len - (size_t)n, ":segment=%zu", c->segment);
}

static void table(const struct platform_s *pl, const size_t *ps, int np, const size_t *ms, int nm, int csv,
                  int logp)
{
  double alpha = pl->alpha, beta = 1.0 / pl->bandwidth;
  struct nm_coll_model_net_s net = {.L = pl->L, .o = pl->o, .beta = beta, .burst = pl->burst, .o_burst = pl->o_burst};
  if (!csv)
    printf("\n### %s (%s)\n\n| p | m | model's choice | predicted | binomial | binomial / choice |\n"
           "|---:|---:|---|---:|---:|---:|\n", pl->name, logp ? pl->what_logp : pl->what);
  for (int i = 0; i < np; i++)
    for (int j = 0; j < nm; j++) {
      struct nm_coll_bcast_choice_s c;
      double tb;
      int rc = logp ? nm_coll_bcast_choose_logp((int)ps[i], ms[j], &net, &c) ||
                          nm_coll_model_bcast_time_logp(NM_COLL_BCAST_BINOMIAL, (int)ps[i], ms[j], &net, 1, &tb)
                    : nm_coll_bcast_choose((int)ps[i], ms[j], alpha, beta, &c) ||
                          nm_coll_model_bcast_time(NM_COLL_BCAST_BINOMIAL, (int)ps[i], ms[j], alpha, beta, 1, &tb);
      if (rc) {
        fprintf(stderr, "nm_coll_model_table: bad parameters p=%zu m=%zu\n", ps[i], ms[j]);
        exit(1);
      }
      char d[128], h[32];
      describe(&c, d, sizeof(d));
      if (csv)
        printf("%s,%zu,%zu,%s,%d,%d,%zu,%.9g,%.9g\n", pl->name, ps[i], ms[j], nm_coll_model_algo_name(c.algo),
               c.hierarchical, c.groups, c.segment, c.predicted_s, tb);
      else
        printf("| %zu | %s | %s | %.4g ms | %.4g ms | %.2f |\n", ps[i], human(ms[j], h, sizeof(h)), d,
               c.predicted_s * 1e3, tb * 1e3, c.predicted_s > 0 ? tb / c.predicted_s : 1.0);
    }
}

/* For each algorithm whose hierarchy pays (section 3.7), its best G and the flat / hierarchical ratio. */
static void hier_table(const struct platform_s *pl, const size_t *ps, int np, const size_t *ms, int nm)
{
  static const enum nm_coll_bcast_algo_e algos[] = {NM_COLL_BCAST_CHAIN, NM_COLL_BCAST_PIPELINED_CHAIN,
                                                    NM_COLL_BCAST_SCATTER_RING};
  double alpha = pl->alpha, beta = 1.0 / pl->bandwidth;
  printf("\n### %s (%s): best G, flat / hierarchical\n\n| p | m | chain | pipelined_chain | scatter_ring |\n"
         "|---:|---:|---|---|---|\n", pl->name, pl->what);
  for (int i = 0; i < np; i++)
    for (int j = 0; j < nm; j++) {
      char h[32];
      printf("| %zu | %s |", ps[i], human(ms[j], h, sizeof(h)));
      for (size_t k = 0; k < sizeof(algos) / sizeof(algos[0]); k++) {
        struct nm_coll_bcast_choice_s f = {.algo = algos[k], .groups = 1}, flat, hier;
        nm_coll_bcast_choice_complete(&f, (int)ps[i], ms[j], alpha, beta, &flat);
        f.hierarchical = 1;
        f.groups = nm_coll_model_best_groups(algos[k], (int)ps[i], ms[j], alpha, beta);
        nm_coll_bcast_choice_complete(&f, (int)ps[i], ms[j], alpha, beta, &hier);
        printf(" G = %d, %.2fx |", hier.groups, flat.predicted_s / hier.predicted_s);
      }
      printf("\n");
    }
}

/* Wall-clock cost of one nm_coll_bcast_choose() call, or with @p logp of nm_coll_bcast_choose_logp() (the one
 * nm_coll_bcast_auto() makes): what a caller that does not cache the choice pays per broadcast; the mean over
 * enough calls to last about 0.2 s, per (p, m). */
static void choose_cost(const struct platform_s *pl, const size_t *ps, int np, const size_t *ms, int nm, int logp)
{
  struct nm_coll_model_net_s net = {.L = pl->L, .o = pl->o, .beta = 1.0 / pl->bandwidth, .burst = pl->burst,
                                    .o_burst = pl->o_burst};
  printf("# nm_coll_bcast_choose%s() wall-clock cost, %s\n# p  m  calls  us_per_call\n", logp ? "_logp" : "",
         logp ? pl->what_logp : pl->what);
  for (int i = 0; i < np; i++)
    for (int j = 0; j < nm; j++) {
      struct timespec t0, t1;
      struct nm_coll_bcast_choice_s c;
      long calls = 0;
      double el = 0;
      clock_gettime(CLOCK_MONOTONIC, &t0);
      do {
        for (int k = 0; k < 100; k++, calls++)
          if (logp)
            nm_coll_bcast_choose_logp((int)ps[i], ms[j] + (size_t)(k & 1), &net, &c);
          else
            nm_coll_bcast_choose((int)ps[i], ms[j] + (size_t)(k & 1), pl->alpha, 1.0 / pl->bandwidth, &c);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        el = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
      } while (el < 0.2);
      printf("%zu  %zu  %ld  %.2f\n", ps[i], ms[j], calls, el / (double)calls * 1e6);
    }
}

/* Time against G for one algorithm, with the flat time for comparison (fig. 6 of the paper, theoretical). */
static int groups_sweep(const char *algo_name, int p, size_t m, const struct platform_s *pl, int csv)
{
  struct nm_coll_bcast_choice_s forced;
  if (nm_coll_bcast_choice_parse(algo_name, &forced))
    return 1;
  double alpha = pl->alpha, beta = 1.0 / pl->bandwidth;
  struct nm_coll_bcast_choice_s flat;
  const size_t segment = forced.segment; /* a forced segment size holds at both levels */
  forced.hierarchical = 0;
  nm_coll_bcast_choice_complete(&forced, p, m, alpha, beta, &flat);
  printf(csv ? "groups,time_s,flat_s,speedup\n" : "# %s, p = %d, m = %zu B, %s\n# groups  time_s  flat_s  speedup\n",
         algo_name, p, m, pl->what);
  for (int g = 1; g <= p; g++) {
    if (p % g && g * g != p && !(g > 1 && (g & (g - 1)) == 0)) /* divisors and powers of two, as the paper */
      continue;
    forced.hierarchical = 1;
    forced.groups = g;
    forced.segment = segment;
    struct nm_coll_bcast_choice_s c;
    nm_coll_bcast_choice_complete(&forced, p, m, alpha, beta, &c);
    printf(csv ? "%d,%.9g,%.9g,%.3f\n" : "%8d  %.6g  %.6g  %.3f\n", g, c.predicted_s, flat.predicted_s,
           flat.predicted_s / c.predicted_s);
  }
  return 0;
}

int main(int argc, char **argv)
{
  size_t ps[MAXLIST] = {4, 8, 16, 64, 128, 1024, 2048, 6142};
  size_t ms[MAXLIST] = {8, 64 << 10, 512 << 10, 2 << 20, 16 << 20};
  int np = 8, nm = 5, csv = 0, hier = 0, cost = 0, logp = 0;
  const char *plat = "all", *sweep = NULL;
  struct platform_s custom = {"custom", -1, -1, "given alpha and bandwidth", -1, -1, "given L, o and bandwidth", 0, 0};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--csv"))
      csv = 1;
    else if (!strcmp(a, "--platform") && v)
      plat = argv[++i];
    else if (!strcmp(a, "--alpha") && v)
      custom.alpha = atof(argv[++i]);
    else if (!strcmp(a, "--bandwidth") && v)
      custom.bandwidth = atof(argv[++i]);
    else if (!strcmp(a, "--p") && v)
      np = parse_list(argv[++i], ps);
    else if (!strcmp(a, "--m") && v)
      nm = parse_list(argv[++i], ms);
    else if (!strcmp(a, "--groups") && v)
      sweep = argv[++i];
    else if (!strcmp(a, "--hier"))
      hier = 1;
    else if (!strcmp(a, "--cost"))
      cost = 1;
    else if (!strcmp(a, "--logp"))
      logp = 1;
    else if (!strcmp(a, "--L") && v)
      custom.L = atof(argv[++i]);
    else if (!strcmp(a, "--o") && v)
      custom.o = atof(argv[++i]);
    else {
      fprintf(stderr, "usage: %s [--platform inti|graphene|torus|torus-hw|shm|tcp|all] [--alpha S --bandwidth B/s] "
                      "[--p LIST] [--m LIST] [--csv] [--hier] [--cost] [--groups ALGO] [--logp [--L S --o S]]\n", argv[0]);
      return 2;
    }
  }
  const struct platform_s *sel[NPLATFORMS + 1];
  int nsel = 0;
  if (custom.L >= 0 && custom.o >= 0 && custom.alpha < 0)
    custom.alpha = custom.L + custom.o;
  if (custom.alpha >= 0 && custom.bandwidth > 0) {
    if (custom.L < 0 || custom.o < 0) { /* only alpha given: the paper's split */
      custom.L = 0;
      custom.o = custom.alpha;
    }
    sel[nsel++] = &custom;
  }
  else
    for (size_t k = 0; k < NPLATFORMS; k++)
      if ((!strcmp(plat, "all") && k < 3) || !strcmp(plat, platforms[k].name))
        sel[nsel++] = &platforms[k];
  if (!nsel || np < 1 || nm < 1) {
    fprintf(stderr, "nm_coll_model_table: unknown platform '%s' (inti, graphene, torus, torus-hw, shm, tcp, all) or empty "
                    "list\n", plat);
    return 2;
  }
  if (sweep)
    return groups_sweep(sweep, (int)ps[0], ms[0], sel[0], csv);
  if (cost) {
    choose_cost(sel[0], ps, np, ms, nm, logp);
    return 0;
  }
  if (csv)
    printf("platform,p,m,algo,hierarchical,groups,segment,predicted_s,binomial_s\n");
  for (int k = 0; k < nsel; k++) {
    if (hier)
      hier_table(sel[k], ps, np, ms, nm);
    else
      table(sel[k], ps, np, ms, nm, csv, logp);
  }
  return 0;
}
