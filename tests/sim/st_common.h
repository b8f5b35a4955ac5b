/**
 * @file st_common.h
 * @brief What the simulator tests share. These programs run under nmad-sim, where every rank is a SimGrid actor
 *        of one process: like the library they keep no global or static state (DESIGN.md rule 1); a failed check
 *        prints its rank and line and makes main() return 1 (never exit(), which would end every rank at once).
 */
#ifndef ST_COMMON_H
#define ST_COMMON_H

#include <nmad/nm_core.h>
#include <nmad/nm_errno.h>
#include <nmad/nm_launcher.h>
#include <nmad/nm_sendrecv.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/** One rank's test state. */
struct st_ctx {
  nm_launcher_t launcher;
  nm_core_t core;
  nm_session_t session;
  int rank, size;
  int failures;
};

/** Record a failed check (once per line and rank) and go on: the peers may wait for this rank's messages. */
#define ST_CHECK(c, cond, ...)                                                                                 \
  do {                                                                                                         \
    if (!(cond)) {                                                                                             \
      fprintf(stderr, "rank %d: %s:%d: check failed: %s: ", (c)->rank, __FILE__, __LINE__, #cond);            \
      fprintf(stderr, __VA_ARGS__);                                                                            \
      fprintf(stderr, "\n");                                                                                   \
      (c)->failures++;                                                                                         \
    }                                                                                                          \
  } while (0)

/** nm_launcher_init + session "st". @return 0 or an nmad error (printed). */
static inline int st_init(struct st_ctx *c, int *argc, char ***argv)
{
  int rc = nm_launcher_init(&c->launcher, argc, argv);
  if (rc) {
    fprintf(stderr, "nm_launcher_init: %s\n", nm_strerror(rc));
    return rc;
  }
  nm_launcher_get_rank(c->launcher, &c->rank);
  nm_launcher_get_size(c->launcher, &c->size);
  c->core = nm_launcher_get_core(c->launcher);
  c->failures = 0;
  rc = nm_session_open(c->core, "st", &c->session);
  if (rc)
    fprintf(stderr, "rank %d: nm_session_open: %s\n", c->rank, nm_strerror(rc));
  return rc;
}

/** Close and exit the launcher. @return main()'s status: 0 when every check passed. */
static inline int st_fini(struct st_ctx *c)
{
  int rc = nm_session_close(c->session);
  ST_CHECK(c, rc == 0, "nm_session_close: %s", nm_strerror(rc));
  rc = nm_launcher_exit(c->launcher);
  ST_CHECK(c, rc == 0, "nm_launcher_exit: %s", nm_strerror(rc));
  return c->failures ? 1 : 0;
}

static inline nm_gate_t st_gate(struct st_ctx *c, int rank) { return nm_launcher_gate_of(c->launcher, rank); }

/* it_common.h's reproducible data (fill(), verify()), without its CHECK, which exits. */
#include "tests/it_common.h"

/** The seed of message (src, dst, seq): a swapped, stale or misrouted message is detected. */
static inline uint64_t st_seed(int src, int dst, int seq)
{
  return ((uint64_t)(uint32_t)src << 40) ^ ((uint64_t)(uint32_t)dst << 20) ^ (uint64_t)(uint32_t)seq;
}

static inline void st_fill(uint8_t *buf, size_t len, int src, int dst, int seq)
{
  fill(buf, len, st_seed(src, dst, seq));
}

/** @return the first wrong offset, or -1 when buf holds message (src, dst, seq). */
static inline long st_verify(const uint8_t *buf, size_t len, int src, int dst, int seq)
{
  return verify(buf, len, st_seed(src, dst, seq));
}

#endif /* ST_COMMON_H */
