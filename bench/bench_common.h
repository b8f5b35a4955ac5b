/**
 * @file bench_common.h
 * @brief Helpers shared by the nmad benchmarks and by the plain-MPI reference (bench/ompi_pingpong.c):
 *        option parsing, the size sweep, iteration scaling, timing, statistics and buffers.
 *
 * Nothing here depends on nmad, so the Open MPI reference is built from the same file and its numbers are
 * computed exactly like nmad's (same sizes, same iteration counts, same min/median, same units).
 * No global mutable state (DESIGN.md rule 1): every function works on what it is given.
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Messages larger than this many bytes get proportionally fewer iterations (see bench_scaled_count()). */
#define BENCH_SCALE_THRESHOLD ((size_t)256 * 1024)
/** Floor of the scaled timed-iteration count. */
#define BENCH_MIN_ITERS 10
/** Floor of the scaled warm-up count. */
#define BENCH_MIN_WARMUP 2

/** Most sizes --sizes accepts. */
#define BENCH_MAX_SIZES 64

/** Options common to every benchmark (parsed by bench_parse_opts()). */
struct bench_opts {
  size_t min_size;   /**< first message size in bytes (--min) */
  size_t max_size;   /**< last message size in bytes (--max) */
  int iters;         /**< timed iterations at sizes <= BENCH_SCALE_THRESHOLD (--iters); scaled down above */
  int warmup;        /**< untimed iterations before each size (--warmup); scaled down above the threshold */
  int window;        /**< messages in flight per window, for message-rate benchmarks (--window) */
  int csv;           /**< 1: print CSV with a header line instead of the table (--csv) */
  int check;         /**< 1: fill the send buffers with a pattern and verify what arrives (--check) */
  int n_sizes;       /**< > 0: the sweep is exactly sizes[0..n_sizes) (--sizes), not min/powers of two/max */
  size_t sizes[BENCH_MAX_SIZES]; /**< --sizes, bytes, increasing */
};

/**
 * @brief Parse the common options; unknown options are an error.
 * Accepted: --min SIZE, --max SIZE (bytes, with optional K/M/G suffix = 2^10/2^20/2^30), --iters N,
 * --warmup N, --window W, --csv, --check, --help, --sizes LIST (comma-separated increasing sizes, at most
 * BENCH_MAX_SIZES: the sweep is exactly those, e.g. a 1 KiB step around a provider's inject size).
 * "--opt=value" is accepted too.
 * @param argc, argv the program arguments (argv[0] names the program in messages).
 * @param[in,out] o defaults on input (filled by the caller), parsed values on output.
 * @param description one-line description printed by --help (may be NULL).
 * @return 0 to run, 1 if --help was printed (exit 0), -1 on a bad option (a message is printed on stderr).
 */
int bench_parse_opts(int argc, char **argv, struct bench_opts *o, const char *description);

/**
 * @brief Take a program-specific option with a fixed set of values (`--bench pingpong`, `--op=iallreduce`) out of
 *        argv before bench_parse_opts(), which knows only the common options. The last occurrence wins.
 * @param[in,out] argc, argv the program arguments; the option and its value are removed, argv[*argc] = NULL.
 * @param name the option, with its dashes ("--op").
 * @param choices the accepted values, NULL-terminated.
 * @param[out] choice index in @p choices of the value given; unchanged when the option is absent.
 * @return 0, or -1 on a missing or unknown value (a message naming argv[0], the option and the accepted values is
 *         printed on stderr).
 */
int bench_take_choice(int *argc, char **argv, const char *name, const char *const *choices, int *choice);

/** @brief Print the option summary on stderr (or stdout when @p to_stdout). */
void bench_usage(const char *prog, const char *description, const struct bench_opts *defaults, int to_stdout);

/**
 * @brief Parse a size: decimal digits with an optional K, M or G suffix (binary multiples, case-insensitive,
 * optional trailing "B"/"iB"). @return 0 on success, -1 on a malformed or overflowing value.
 */
int bench_parse_size(const char *s, size_t *out);

/** @brief First size of the sweep: o->min_size, or the first of --sizes. */
size_t bench_first_size(const struct bench_opts *o);
/**
 * @brief Next size of the sweep after @p size: 0 is followed by 1, every other size by the next power of two
 * strictly above it; the sweep ends at o->max_size, which is always included even when it is not a power of two.
 * With --sizes, the next listed size.
 * @return the next size, or SIZE_MAX when the sweep is finished.
 */
size_t bench_next_size(const struct bench_opts *o, size_t size);

/**
 * @brief Iteration count for a message of @p size bytes: @p base up to BENCH_SCALE_THRESHOLD, then
 * base * BENCH_SCALE_THRESHOLD / size, never below @p floor (nor above @p base).
 * The comparison script (bench/nm_bench_compare.sh) reproduces this formula for fi_pingpong's -I.
 */
int bench_scaled_count(int base, size_t size, int floor);
/** @brief bench_scaled_count(o->iters, size, BENCH_MIN_ITERS). */
int bench_iters_for_size(const struct bench_opts *o, size_t size);
/** @brief bench_scaled_count(o->warmup, size, BENCH_MIN_WARMUP) (0 if --warmup 0). */
int bench_warmup_for_size(const struct bench_opts *o, size_t size);

/** @brief CLOCK_MONOTONIC time in nanoseconds. */
uint64_t bench_now_ns(void);

/** @brief Median of @p n values (sorts @p v in place with qsort). @return 0.0 if n == 0. */
double bench_median(double *v, int n);
/** @brief Smallest of @p n values. @return 0.0 if n == 0. */
double bench_min(const double *v, int n);
/** @brief Arithmetic mean of @p n values. @return 0.0 if n == 0. */
double bench_mean(const double *v, int n);

/**
 * @brief Allocate @p len bytes aligned on a page (at least one page, so len 0 is fine), zero-filled.
 * @return the buffer (free with bench_free()) or NULL.
 */
void *bench_alloc(size_t len);
/** @brief bench_alloc() without touching the pages: for buffers whose bytes are never read nor written (a
 *  simulation that moves only sizes, nmad-sim --fake-payload), so that they take no memory. NULL if out of memory. */
void *bench_alloc_untouched(size_t len);
/** @brief Release a buffer of bench_alloc(). */
void bench_free(void *buf);

/** @brief Fill @p len bytes with a pattern that depends on @p seed (e.g. size and iteration). */
void bench_fill(void *buf, size_t len, uint64_t seed);
/** @brief Check a buffer filled by bench_fill() with the same seed.
 *  @return -1 if it matches, else the offset of the first wrong byte. */
long bench_verify(const void *buf, size_t len, uint64_t seed);

/** @brief Bandwidth in MB/s (1 MB = 1e6 bytes) of @p size bytes moved in @p usec microseconds (0 if usec <= 0). */
double bench_mbps(size_t size, double usec);

#ifdef __cplusplus
}
#endif
#endif /* BENCH_COMMON_H */
