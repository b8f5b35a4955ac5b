/* Shared by the multi-process test programs: failure checks and reproducible data.
 * The including file defines `static int rank;` (printed by CHECK). */
#ifndef NM_IT_COMMON_H
#define NM_IT_COMMON_H

#include <nmad/nm_errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/** Fail the test (exit 1) with a message naming the rank and line when @p cond is false. */
#define CHECK(cond, ...)                                                                                           \
  do {                                                                                                             \
    if (!(cond)) {                                                                                                 \
      fprintf(stderr, "FAIL rank %d line %d: ", rank, __LINE__);                                                   \
      fprintf(stderr, __VA_ARGS__);                                                                                \
      fprintf(stderr, "\n");                                                                                       \
      fflush(stdout);                                                                                              \
      exit(1);                                                                                                     \
    }                                                                                                              \
  } while (0)
#define CHECK_RC(rc, what) CHECK((rc) == 0, "%s: %d (%s)", what, (int)(rc), nm_strerror(rc))

/** A 64-bit mixing function (splitmix64 finalizer): reproducible pseudo-random data from a seed. */
static inline uint64_t mix(uint64_t x)
{
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

/** Fill @p len bytes from @p seed (every rank can regenerate what another one sent). */
static inline void fill(uint8_t *buf, size_t len, uint64_t seed)
{
  uint64_t s = mix(seed + 1);
  for (size_t i = 0; i < len; i++) {
    if ((i & 7) == 0)
      s = mix(s);
    buf[i] = (uint8_t)(s >> (8 * (i & 7)));
  }
}

/** Offset of the first byte that differs from fill(seed), or -1. */
static inline long verify(const uint8_t *buf, size_t len, uint64_t seed)
{
  uint64_t s = mix(seed + 1);
  for (size_t i = 0; i < len; i++) {
    if ((i & 7) == 0)
      s = mix(s);
    if (buf[i] != (uint8_t)(s >> (8 * (i & 7))))
      return (long)i;
  }
  return -1;
}

#endif
