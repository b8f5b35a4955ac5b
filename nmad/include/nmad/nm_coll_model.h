/**
 * @file nm_coll_model.h
 * @brief Cost models of the broadcast algorithms of Hasanov & Lastovetsky 2015 ("Topology-oblivious
 * optimization of MPI broadcast algorithms on extreme-scale platforms"), flat (section 2.1.1-2.1.8) and
 * hierarchical with G groups (section 3.1-3.7), and the model-driven choice of algorithm, number of groups and
 * segment size (issue 17, deliverable 4). doc/collectives.md gives the rule and the model's choice table.
 *
 * The paper's costs are in the Hockney model: sending m bytes costs alpha + m * beta, with alpha the one-way
 * latency in seconds and beta the inverse bandwidth in seconds per byte; the functions taking (alpha, beta) give
 * them exactly. The functions ending in _logp take a LogP-style split of alpha (Culler et al. 1993, "LogP:
 * towards a realistic model of parallel computation"; struct nm_coll_model_net_s): L, the wire latency, paid
 * once per hop along a path, and o, the sender's time per message, paid for every message sent; a message of
 * m bytes also holds its sender's link for m * beta. Hasanov's formulas are the case L = 0, o = alpha
 * (nm_coll_model_net_hockney()); the automatic choice (nm_coll_bcast_auto()) uses the LogP form with the
 * drivers' figures (issue 17; doc/collectives.md, "The model in LogP form"). Every function here is pure (no
 * state, no allocation, no lock): thread-safe, callable from any rank or coroutine.
 */
#ifndef NM_COLL_MODEL_H
#define NM_COLL_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <nmad/nm_coll_bcast.h>

#ifdef __cplusplus
extern "C" {
#endif

/** One broadcast configuration: what the chooser returns and what an expert's override names. */
struct nm_coll_bcast_choice_s {
  enum nm_coll_bcast_algo_e algo; /**< the algorithm (at both levels when hierarchical, as in the paper) */
  int hierarchical;               /**< 1: paper section 3's transformation with @c groups groups; 0: flat */
  int groups;                     /**< G, number of groups (1 when not hierarchical); 0 in a parsed override
                                       means "let the model choose G" */
  size_t segment;                 /**< segment size in bytes for the pipelined chain (m / X rounded up);
                                       0: whole message (other algorithms), or, in a parsed override of the
                                       pipelined chain, "let the model choose" */
  double predicted_s;             /**< the model's time in seconds; 0 in a parsed override */
};

/** The network in LogP form (seconds): Hasanov's alpha split into a wire latency and a per-message sender cost. */
struct nm_coll_model_net_s {
  double L;    /**< wire latency in s, paid once per hop along a path (LogP's L); >= 0 */
  double o;    /**< sender's time per message sent in s (LogP's o, or its gap g when larger: a broadcast's
                    senders send back to back); >= 0 */
  double beta; /**< inverse bandwidth in s/byte: a message of m bytes holds its sender's link m * beta; >= 0 */
  double burst;   /**< messages a sender posts back to back after a pause (it received, or had nothing to
                       send) before o applies: a send queue that takes a burst; 0 (Hockney, most drivers): every
                       message holds its sender o; >= 0 */
  double o_burst; /**< s per message within the burst (the sender's own overhead, LogP's o proper); >= 0 */
};

/** @brief The paper's Hockney model as a LogP network: L = 0, o = alpha (every alpha of Hasanov 2015, section
 *  2.1, is one message sent on the critical path). @param alpha s; @param beta s/byte; @param[out] net (NULL:
 *  nothing done). Pure, thread-safe. */
void nm_coll_model_net_hockney(double alpha, double beta, struct nm_coll_model_net_s *net);

/** @brief LogP parameters from a driver's nominal figures (struct nm_drv_props_s through
 *  nm_core_network_logp()): L = latency_ns - overhead_ns (a lone message pays o + L; 0 when the overhead is the
 *  whole latency), o = max(overhead_ns, gap_ns) (senders of a broadcast send back to back, one message per gap),
 *  beta = 1 / bandwidth; the first gap_free messages a sender posts after a pause hold it only overhead_ns each
 *  (burst, o_burst: a send queue that takes them at once, as nmad-sim's NIC does).
 *  @param latency_ns one-way latency of a lone small message, ns; @param overhead_ns the sender's CPU time per
 *         message, ns, part of latency_ns; @param gap_ns least interval between two messages of one sender, ns
 *         (0: the overhead); @param gap_free messages a sender posts back to back before the gap applies (0:
 *         none); @param bandwidth_MBps 10^6 bytes/s (> 0); @param[out] net
 *  @return 0, or -NM_EINVAL if bandwidth_MBps is 0 or net is NULL. Pure, thread-safe. */
int nm_coll_model_logp(uint32_t latency_ns, uint32_t overhead_ns, uint32_t gap_ns, uint32_t gap_free,
                       uint32_t bandwidth_MBps, struct nm_coll_model_net_s *net);

/** @brief Hockney parameters from a driver's nominal figures (struct nm_drv_props_s, issue 15).
 *  @param latency_ns one-way latency in ns; @param bandwidth_MBps bandwidth in 10^6 bytes/s (> 0)
 *  @param[out] alpha seconds; @param[out] beta seconds per byte
 *  @return 0, or -NM_EINVAL if bandwidth_MBps is 0 or a pointer is NULL. Pure, thread-safe. */
int nm_coll_model_hockney(uint32_t latency_ns, uint32_t bandwidth_MBps, double *alpha, double *beta);

/** @brief The paper's name of an algorithm, as the override accepts it ("flat", "chain", "pipelined_chain",
 *  "binary", "split_binary", "binomial", "scatter_ring", "scatter_rd").
 *  @return a constant string, or NULL for a value out of range. Pure, thread-safe. */
const char *nm_coll_model_algo_name(enum nm_coll_bcast_algo_e algo);

/** @brief Time of a flat (non-hierarchical) broadcast, Hasanov 2015 section 2.1.1-2.1.8.
 *  @param algo the algorithm; @param p number of processes (>= 1); @param m message size in bytes
 *  @param alpha latency in s (>= 0); @param beta inverse bandwidth in s/byte (>= 0)
 *  @param segments X, the number of segments, used by the pipelined chain only (1 <= X; X > m is priced as
 *         X = max(m, 1)); ignored by the other algorithms
 *  @param[out] time_s the predicted time in seconds (0 when p = 1)
 *  @return 0, or -NM_EINVAL on a bad argument. Pure, thread-safe.
 *  For p outside the paper's assumption (a power of two, or 2^k - 1 for the binary trees) the log2 terms are
 *  rounded up to whole steps of the real tree: doc/collectives.md, "Values the paper does not cover". */
int nm_coll_model_bcast_time(enum nm_coll_bcast_algo_e algo, int p, size_t m, double alpha, double beta,
                             size_t segments, double *time_s);

/** @brief nm_coll_model_bcast_time() in LogP form: each formula of Hasanov 2015 section 2.1.1-2.1.8 with its
 *  critical path's messages charged o + (bytes) beta each and its hops L each (collectives/nm_coll_model.c gives
 *  the formula of each algorithm next to the paper's); with L = 0, o = alpha it is nm_coll_model_bcast_time().
 *  The pipelined chain's period holds a round trip (2L: its segments are sent synchronously).
 *  @param net the network (L, o, beta >= 0, finite); other parameters as nm_coll_model_bcast_time()
 *  @return 0, or -NM_EINVAL on a bad argument. Pure, thread-safe. */
int nm_coll_model_bcast_time_logp(enum nm_coll_bcast_algo_e algo, int p, size_t m,
                                  const struct nm_coll_model_net_s *net, size_t segments, double *time_s);

/** @brief Time of the hierarchical transformation, Hasanov 2015 section 3 (Algorithm 1): the algorithm among
 *  G group leaders, then inside each group, the two added (sections 3.1-3.6 are exactly that sum). Groups are
 *  ceil(p / G) processes at most; the largest sets the inner time (the paper assumes G divides p).
 *  @param groups G, 1 <= G <= p (G = 1 and G = p are the flat algorithm)
 *  @param segments X for the pipelined chain, the same at both levels; other parameters as
 *         nm_coll_model_bcast_time()
 *  @return 0, or -NM_EINVAL on a bad argument. Pure, thread-safe. */
int nm_coll_model_bcast_hier_time(enum nm_coll_bcast_algo_e algo, int p, int groups, size_t m, double alpha,
                                  double beta, size_t segments, double *time_s);

/** @brief nm_coll_model_bcast_hier_time() in LogP form (section 3's sum of the two levels, each priced by
 *  nm_coll_model_bcast_time_logp()). @return 0, or -NM_EINVAL on a bad argument. Pure, thread-safe. */
int nm_coll_model_bcast_hier_time_logp(enum nm_coll_bcast_algo_e algo, int p, int groups, size_t m,
                                       const struct nm_coll_model_net_s *net, size_t segments, double *time_s);

/** @brief Best segment count X of the pipelined chain, flat (groups = 1) or hierarchical: the root of the
 *  derivative of section 2.1.3's (X + p - 2)(alpha + m beta / X), X* = sqrt((p - 2) m beta / alpha), and of
 *  section 3.2's eq. (3), X* = sqrt((G + p/G - 4) m beta / (2 alpha)); the better of the two neighbouring
 *  integers, clamped to [1, max(m, 1)].
 *  @return X >= 1 (1 for bad arguments, p <= 2 or m = 0). Pure, thread-safe. */
size_t nm_coll_model_best_segments(int p, int groups, size_t m, double alpha, double beta);

/** @brief nm_coll_model_best_segments() in LogP form: X* = sqrt(S m beta / (k (o + 2L))), S the sum of
 *  (n - 2) over the k levels of n >= 2 processes (alpha of sections 2.1.3 and 3.2 reads o + 2L: a segment's
 *  period holds its synchronous send's round trip); the better neighbouring integer, clamped to [1, max(m, 1)].
 *  @return X >= 1 (1 for bad arguments, p <= 2 or m = 0). Pure, thread-safe. */
size_t nm_coll_model_best_segments_logp(int p, int groups, size_t m, const struct nm_coll_model_net_s *net);

/** @brief Best number of groups G of the hierarchical transformation of @p algo, from the paper's closed
 *  forms: G = sqrt(p) for flat, chain and pipelined chain (section 3.1-3.2); for scatter-ring-allgather
 *  G = sqrt(p) when alpha / beta > 2 m / p (eq. (6)), else 1 (section 3.4); 1 for binary, split-binary,
 *  binomial and scatter-recursive-doubling, whose hierarchy gains nothing (sections 3.3, 3.5, 3.6). Where
 *  the closed form says sqrt(p), every integer G from sqrt(p) / 2 to 2 sqrt(p) is priced with
 *  nm_coll_model_bcast_hier_time() and the cheapest kept: groups of ceil(p / G) move the integer minimum to a
 *  nearby divisor of p (about 1.5 sqrt(p) evaluations).
 *  @return G in [1, p] (1 on bad arguments). Pure, thread-safe. */
int nm_coll_model_best_groups(enum nm_coll_bcast_algo_e algo, int p, size_t m, double alpha, double beta);

/** @brief nm_coll_model_best_groups() in LogP form (eq. (6) reads (o + L) / beta > 2 m / p).
 *  @return G in [1, p] (1 on bad arguments). Pure, thread-safe. */
int nm_coll_model_best_groups_logp(enum nm_coll_bcast_algo_e algo, int p, size_t m,
                                   const struct nm_coll_model_net_s *net);

/** @brief The model's choice for a broadcast of @p m bytes among @p p processes: every algorithm, flat and
 *  (for the four whose hierarchy pays, section 3.7) hierarchical with its best G, the pipelined chain with its
 *  best X; the cheapest predicted time wins (ties: any flat algorithm before a hierarchical one, then the
 *  enum's order).
 *  @param p processes (>= 1); @param m bytes; @param alpha s; @param beta s/byte
 *  @param[out] out the choice, with its predicted time
 *  @return 0, or -NM_EINVAL on a bad argument. Pure, thread-safe (Hasanov 2015 sections 2.1, 3). */
int nm_coll_bcast_choose(int p, size_t m, double alpha, double beta, struct nm_coll_bcast_choice_s *out);

/** @brief nm_coll_bcast_choose() in LogP form: the same candidates and ties, priced by
 *  nm_coll_model_bcast_hier_time_logp() (what nm_coll_bcast_auto() uses).
 *  @param net the network; @return 0, or -NM_EINVAL on a bad argument. Pure, thread-safe. */
int nm_coll_bcast_choose_logp(int p, size_t m, const struct nm_coll_model_net_s *net,
                              struct nm_coll_bcast_choice_s *out);

/** @brief Fills in what a parsed override left to the model (groups = 0, segment = 0 of a pipelined chain)
 *  and its predicted time, for p processes and m bytes. A forced G above p is clamped to p.
 *  @param forced a choice from nm_coll_bcast_choice_parse(); @param[out] out may be @p forced
 *  @return 0, or -NM_EINVAL on a bad argument. Pure, thread-safe. */
int nm_coll_bcast_choice_complete(const struct nm_coll_bcast_choice_s *forced, int p, size_t m, double alpha,
                                  double beta, struct nm_coll_bcast_choice_s *out);

/** @brief nm_coll_bcast_choice_complete() in LogP form. @return 0, or -NM_EINVAL. Pure, thread-safe. */
int nm_coll_bcast_choice_complete_logp(const struct nm_coll_bcast_choice_s *forced, int p, size_t m,
                                       const struct nm_coll_model_net_s *net, struct nm_coll_bcast_choice_s *out);

/** @brief Parses an expert's override (the value of NMAD_BCAST_ALGO, which the caller reads):
 *  `[hier:]ALGO[:groups=G][:segment=SIZE]`, ALGO one of nm_coll_model_algo_name()'s names, G >= 1 (implies
 *  hier), SIZE > 0 bytes with an optional K, M or G suffix (powers of 1024). Examples: "scatter_ring",
 *  "pipelined_chain:segment=64K", "hier:scatter_ring:groups=64", "hier:chain" (G by the model).
 *  @param spec NUL-terminated string; @param[out] out the forced choice (predicted_s = 0; groups = 1 when flat,
 *         0 when hierarchical without groups=; segment 0 when not given)
 *  @return 0, or -NM_EINVAL with a message on stderr naming the bad part and the accepted forms (out is then
 *          untouched). Thread-safe (writes only to stderr on error). */
int nm_coll_bcast_choice_parse(const char *spec, struct nm_coll_bcast_choice_s *out);

/**
 * @brief The automatic choice of a broadcast of @p len bytes among @p p members on @p session (issue 17,
 * deliverable 4; collectives/bcast_auto.c): NMAD_BCAST_ALGO when set (nm_coll_bcast_choice_parse(), completed by
 * nm_coll_bcast_choice_complete_logp()), else nm_coll_bcast_choose_logp(), with L, o and beta from the network's
 * nominal figures (nm_core_network_logp() through nm_coll_model_logp()); on a job with more ranks than cores on its
 * one host (nm_core_job_oversubscribed()), the flat tree (measured fastest there, doc/collectives.md), except over
 * a network driver (nominal latency >= NM_COLL_NET_LAT_NS: tcp) above
 * NM_COLL_BCAST_OVERSUB_FLAT_UPTO bytes: the split-binary tree up to NM_COLL_BCAST_OVERSUB_SPLIT_UPTO, the model's
 * choice above. The same on every member of a job for the same (p, len): the members of a broadcast agree without
 * talking.
 * @param[out] choice the algorithm, hierarchy, G, segment and predicted time.
 * @return 0, or -NM_EINVAL for a bad argument or an invalid NMAD_BCAST_ALGO (message on stderr).
 * Thread-safety: any thread (reads the environment).
 */
int nm_coll_bcast_auto(nm_session_t session, int p, nm_len_t len, struct nm_coll_bcast_choice_s *choice);

/** Oversubscribed job over a network driver (nm_coll_bcast_auto()): the flat tree up to this many bytes (measured,
 *  4 and 8 ranks on 2 cores over tcp: flat fastest or level to 512 KiB; doc/performance.md, "Bcast and Allgather
 *  over tcp on an oversubscribed host"), */
#define NM_COLL_BCAST_OVERSUB_FLAT_UPTO (512u * 1024u)
/** ... the split-binary tree up to this many (1.4-1.9x faster than flat at 1 and 2 MiB), the model above; over a
 *  network of nominal latency >= NM_COLL_NET_LAT_NS (tcp), not shared memory, whose receivers pull their copies
 *  from the root (the flat tree's strength). */
#define NM_COLL_BCAST_OVERSUB_SPLIT_UPTO (2u * 1024u * 1024u)

/** @brief The options of nm_coll_bcast() that run @p choice. Pure. */
void nm_coll_bcast_opts_of_choice(const struct nm_coll_bcast_choice_s *choice, struct nm_coll_bcast_opts_s *opts);

/** Entries of a struct nm_coll_bcast_memo_s. */
#define NM_COLL_BCAST_MEMO 8

/** The model's broadcast choices remembered by (members, length), direct-mapped by length: one choice costs
 *  0.3-7.5 us from 8 to 6,144 members (doc/performance.md), as much as a small broadcast, and depends only on
 *  the member count, the length and the job's fixed figures. Owned by the caller, zero-initialised = empty: the
 *  MPI shim keeps one per communicator, a native group may point to one (nm_coll_group_s.bcast_memo). */
struct nm_coll_bcast_memo_s {
  struct nm_coll_bcast_memo_entry_s {
    int p; /**< members; 0: empty entry */
    nm_len_t len;
    struct nm_coll_bcast_opts_s opts;
  } entry[NM_COLL_BCAST_MEMO];
};

/**
 * @brief nm_coll_bcast_auto() as nm_coll_bcast() options, remembered in @p memo (collectives/bcast_auto.c). The
 * model's choice is looked up and stored per (p, len); NMAD_BCAST_ALGO, when set, is read at every call and its
 * choice is never stored nor served from the memo.
 * @param session the network's session; @param memo NULL (no memo: the model prices every call) or the group's
 *        memo; @param p members (>= 1); @param len bytes; @param[out] opts the options that run the choice
 * @return 0, or -NM_EINVAL as nm_coll_bcast_auto() (opts and memo then untouched).
 * Thread-safety: any thread; a memo is written without a lock, so one memo must not be used by two threads at
 * once (the MPI shim's is used under its lock; a native group shared by threads should carry none).
 */
int nm_coll_bcast_auto_opts(nm_session_t session, struct nm_coll_bcast_memo_s *memo, int p, nm_len_t len,
                            struct nm_coll_bcast_opts_s *opts);

/** @brief nm_coll_bcast_auto_opts() with the override's value given (@p env: NULL or "" for none, else as
 *  NMAD_BCAST_ALGO), for an owner that read it once (struct nm_coll_overrides_s; the MPI shim at MPI_Init) instead
 *  of scanning the environment at every call (~500 instructions, a third of an 8 B MPI_Bcast's at a non-root).
 *  Same results, errors and thread-safety. */
int nm_coll_bcast_auto_opts_env(nm_session_t session, struct nm_coll_bcast_memo_s *memo, int p, nm_len_t len,
                                const char *env, struct nm_coll_bcast_opts_s *opts);

#ifdef __cplusplus
}
#endif
#endif /* NM_COLL_MODEL_H */
