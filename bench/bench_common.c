/**
 * @file bench_common.c
 * @brief Option parsing, size sweep, timing and statistics shared by the benchmarks (see bench_common.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

int bench_parse_size(const char *s, size_t *out)
{
  char *end = NULL;
  unsigned long long v;
  unsigned shift = 0;

  if (s == NULL || *s < '0' || *s > '9')
    return -1;
  errno = 0;
  v = strtoull(s, &end, 10);
  if (errno != 0)
    return -1;
  switch (*end) {
  case 'k': case 'K': shift = 10; end++; break;
  case 'm': case 'M': shift = 20; end++; break;
  case 'g': case 'G': shift = 30; end++; break;
  default: break;
  }
  /* Accept "4M", "4MB", "4MiB" and "4B" alike: all mean binary multiples of bytes. */
  if (shift != 0 && (*end == 'i' || *end == 'I'))
    end++;
  if (*end == 'b' || *end == 'B')
    end++;
  if (*end != '\0')
    return -1;
  if (shift != 0 && v > (SIZE_MAX >> shift))
    return -1;
  if (v > SIZE_MAX)
    return -1;
  *out = (size_t)v << shift;
  return 0;
}

static int parse_int(const char *s, int min, int *out)
{
  char *end = NULL;
  long v;

  if (s == NULL || *s == '\0')
    return -1;
  errno = 0;
  v = strtol(s, &end, 10);
  if (errno != 0 || *end != '\0' || v < min || v > 1000000000L)
    return -1;
  *out = (int)v;
  return 0;
}

/* "3K,4K,5K" -> o->sizes (increasing), o->n_sizes. @return 0 or -1. */
static int parse_sizes(const char *val, struct bench_opts *o)
{
  char item[32];
  int n = 0;
  while (*val) {
    size_t len = strcspn(val, ",");
    if (len == 0 || len >= sizeof(item) || n == BENCH_MAX_SIZES)
      return -1;
    memcpy(item, val, len);
    item[len] = '\0';
    if (bench_parse_size(item, &o->sizes[n]) != 0 || (n > 0 && o->sizes[n] <= o->sizes[n - 1]))
      return -1;
    n++;
    val += len;
    if (*val == ',')
      val++;
  }
  if (n == 0)
    return -1;
  o->n_sizes = n;
  o->min_size = o->sizes[0];
  o->max_size = o->sizes[n - 1];
  return 0;
}

void bench_usage(const char *prog, const char *description, const struct bench_opts *d, int to_stdout)
{
  FILE *f = to_stdout ? stdout : stderr;

  fprintf(f, "usage: %s [--min SIZE] [--max SIZE] [--sizes LIST] [--iters N] [--warmup N] [--window W] [--csv] [--check]\n",
          prog);
  if (description != NULL)
    fprintf(f, "%s\n", description);
  fprintf(f,
          "  --min SIZE    first message size in bytes, suffix K/M/G allowed (default %zu)\n"
          "  --max SIZE    last message size in bytes (default %zu); sizes are min, then powers of two, then max\n"
          "  --sizes LIST  exactly these sizes, comma-separated and increasing (e.g. 3K,4K,5K), instead of min..max\n"
          "  --iters N     timed iterations per size (default %d); above %zu KiB scaled by %zu KiB/size, >= %d\n"
          "  --warmup N    untimed iterations before each size (default %d), scaled likewise (>= %d)\n"
          "  --window W    messages in flight per window, message-rate benchmarks only (default %d)\n"
          "  --csv         print CSV (with a header line) instead of a table\n"
          "  --check       fill send buffers with a pattern and verify every received message\n",
          d->min_size, d->max_size, d->iters, BENCH_SCALE_THRESHOLD / 1024, BENCH_SCALE_THRESHOLD / 1024,
          BENCH_MIN_ITERS, d->warmup, BENCH_MIN_WARMUP, d->window);
}

int bench_parse_opts(int argc, char **argv, struct bench_opts *o, const char *description)
{
  const struct bench_opts defaults = *o;
  const char *prog = (argc > 0 && argv != NULL && argv[0] != NULL) ? argv[0] : "bench";
  int i;

  for (i = 1; i < argc; i++) {
    const char *arg = argv[i];
    const char *val = NULL;
    char name[32];
    const char *eq;

    if (strncmp(arg, "--", 2) != 0) {
      fprintf(stderr, "%s: unexpected argument '%s'\n", prog, arg);
      bench_usage(prog, description, &defaults, 0);
      return -1;
    }
    /* Split "--name=value"; otherwise the value (if the option takes one) is the next argument. */
    eq = strchr(arg, '=');
    if (eq != NULL) {
      size_t n = (size_t)(eq - arg);
      if (n >= sizeof(name))
        n = sizeof(name) - 1;
      memcpy(name, arg, n);
      name[n] = '\0';
      val = eq + 1;
    } else {
      snprintf(name, sizeof(name), "%s", arg);
    }

    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
      bench_usage(prog, description, &defaults, 1);
      return 1;
    }
    if (strcmp(name, "--csv") == 0 || strcmp(name, "--check") == 0) {
      if (val != NULL) {
        fprintf(stderr, "%s: %s takes no value\n", prog, name);
        return -1;
      }
      if (strcmp(name, "--csv") == 0)
        o->csv = 1;
      else
        o->check = 1;
      continue;
    }
    if (strcmp(name, "--min") != 0 && strcmp(name, "--max") != 0 && strcmp(name, "--sizes") != 0 &&
        strcmp(name, "--iters") != 0 &&
        strcmp(name, "--warmup") != 0 && strcmp(name, "--window") != 0) {
      fprintf(stderr, "%s: unknown option '%s'\n", prog, arg);
      bench_usage(prog, description, &defaults, 0);
      return -1;
    }
    if (val == NULL) {
      if (i + 1 >= argc) {
        fprintf(stderr, "%s: option %s needs a value\n", prog, name);
        return -1;
      }
      val = argv[++i];
    }
    if (strcmp(name, "--sizes") == 0) {
      if (parse_sizes(val, o) != 0) {
        fprintf(stderr, "%s: bad --sizes '%s' (expected increasing sizes such as 3K,4K,5K, at most %d)\n", prog,
                val, BENCH_MAX_SIZES);
        return -1;
      }
    } else if (strcmp(name, "--min") == 0 || strcmp(name, "--max") == 0) {
      size_t sz;
      if (bench_parse_size(val, &sz) != 0) {
        fprintf(stderr, "%s: bad size '%s' for %s (expected e.g. 8, 64K, 4M)\n", prog, val, name);
        return -1;
      }
      if (strcmp(name, "--min") == 0)
        o->min_size = sz;
      else
        o->max_size = sz;
    } else {
      int v;
      int min = strcmp(name, "--warmup") == 0 ? 0 : 1;
      if (parse_int(val, min, &v) != 0) {
        fprintf(stderr, "%s: bad value '%s' for %s (integer >= %d expected)\n", prog, val, name, min);
        return -1;
      }
      if (strcmp(name, "--iters") == 0)
        o->iters = v;
      else if (strcmp(name, "--warmup") == 0)
        o->warmup = v;
      else
        o->window = v;
    }
  }
  if (o->min_size > o->max_size) {
    fprintf(stderr, "%s: --min (%zu) is larger than --max (%zu)\n", prog, o->min_size, o->max_size);
    return -1;
  }
  return 0;
}

size_t bench_first_size(const struct bench_opts *o)
{
  return o->n_sizes ? o->sizes[0] : o->min_size;
}

size_t bench_next_size(const struct bench_opts *o, size_t size)
{
  size_t next;

  if (size >= o->max_size)
    return SIZE_MAX;
  for (int i = 0; i < o->n_sizes; i++)
    if (o->sizes[i] > size)
      return o->sizes[i];
  if (size == 0) {
    next = 1;
  } else {
    next = 1;
    while (next <= size) {
      if (next > SIZE_MAX / 2)
        return o->max_size; /* no larger power of two: finish on max */
      next <<= 1;
    }
  }
  return next > o->max_size ? o->max_size : next;
}

int bench_scaled_count(int base, size_t size, int floor)
{
  double scaled;

  if (base <= 0)
    return 0;
  if (size <= BENCH_SCALE_THRESHOLD)
    return base;
  scaled = (double)base * (double)BENCH_SCALE_THRESHOLD / (double)size;
  if (scaled < floor)
    scaled = floor;
  if (scaled > base)
    scaled = base;
  return (int)scaled;
}

int bench_iters_for_size(const struct bench_opts *o, size_t size)
{
  return bench_scaled_count(o->iters, size, BENCH_MIN_ITERS);
}

int bench_warmup_for_size(const struct bench_opts *o, size_t size)
{
  return bench_scaled_count(o->warmup, size, BENCH_MIN_WARMUP);
}

uint64_t bench_now_ns(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;

  return (x > y) - (x < y);
}

double bench_median(double *v, int n)
{
  if (n <= 0)
    return 0.0;
  qsort(v, (size_t)n, sizeof(*v), cmp_double);
  if (n % 2 == 1)
    return v[n / 2];
  return 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double bench_min(const double *v, int n)
{
  double m;
  int i;

  if (n <= 0)
    return 0.0;
  m = v[0];
  for (i = 1; i < n; i++)
    if (v[i] < m)
      m = v[i];
  return m;
}

double bench_mean(const double *v, int n)
{
  double s = 0.0;
  int i;

  if (n <= 0)
    return 0.0;
  for (i = 0; i < n; i++)
    s += v[i];
  return s / n;
}

void *bench_alloc_untouched(size_t len)
{
  long page = sysconf(_SC_PAGESIZE);
  size_t align = page > 0 ? (size_t)page : 4096;
  void *p = NULL;

  if (posix_memalign(&p, align, len ? len : align) != 0)
    return NULL;
  return p;
}

void *bench_alloc(size_t len)
{
  void *p = bench_alloc_untouched(len);

  /* Touch every page now so that first-touch page faults are not timed. */
  if (p != NULL)
    memset(p, 0, len);
  return p;
}

void bench_free(void *buf)
{
  free(buf);
}

/* A cheap position- and seed-dependent byte: a swapped or stale block is detected, not only a missing one. */
static inline unsigned char pattern_byte(size_t i, uint64_t seed)
{
  uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull + seed * 0xC2B2AE3D27D4EB4Full;

  return (unsigned char)((x >> 56) ^ (x >> 24) ^ i);
}

void bench_fill(void *buf, size_t len, uint64_t seed)
{
  unsigned char *p = buf;
  size_t i;

  for (i = 0; i < len; i++)
    p[i] = pattern_byte(i, seed);
}

long bench_verify(const void *buf, size_t len, uint64_t seed)
{
  const unsigned char *p = buf;
  size_t i;

  for (i = 0; i < len; i++)
    if (p[i] != pattern_byte(i, seed))
      return (long)i;
  return -1;
}

double bench_mbps(size_t size, double usec)
{
  if (usec <= 0.0)
    return 0.0;
  return (double)size / usec; /* bytes per microsecond == 1e6 bytes per second */
}

int bench_take_choice(int *argc, char **argv, const char *name, const char *const *choices, int *choice)
{
  size_t nlen = strlen(name);
  int out = 1;
  for (int i = 1; i < *argc; i++) {
    const char *v;
    if (strcmp(argv[i], name) == 0) {
      if (i + 1 >= *argc) {
        fprintf(stderr, "%s: option %s needs a value\n", argv[0], name);
        return -1;
      }
      v = argv[++i];
    } else if (strncmp(argv[i], name, nlen) == 0 && argv[i][nlen] == '=') {
      v = argv[i] + nlen + 1;
    } else {
      argv[out++] = argv[i];
      continue;
    }
    int k = 0;
    while (choices[k] && strcmp(choices[k], v) != 0)
      k++;
    if (!choices[k]) {
      fprintf(stderr, "%s: %s %s: expected", argv[0], name, v);
      for (k = 0; choices[k]; k++)
        fprintf(stderr, "%s %s", k ? (choices[k + 1] ? "," : " or") : "", choices[k]);
      fputc('\n', stderr);
      return -1;
    }
    *choice = k;
  }
  argv[out] = NULL;
  *argc = out;
  return 0;
}
