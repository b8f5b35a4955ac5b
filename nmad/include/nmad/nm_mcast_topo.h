/**
 * @file nm_mcast_topo.h
 * @brief Topology-ID multicast (Song, Dongarra, Moore 2009, "A Scalable Non-blocking Multicast Scheme for
 * Distributed DAG Scheduling", sections 4-7; issue 19, deliverable 1).
 *
 * Every rank gets a **topology ID**: r digits in base 2^b, read most significant first; a longer common prefix
 * means closer ranks (paper section 4). IDs are made from a block hierarchy: the job is cut into groups of
 * fanout[0] x fanout[1] x ... consecutive ranks (e.g. {16, 2}: switches of 16 hosts of 2 ranks), the outermost
 * level taking what is left; rank r's coordinate at each level is written in ceil(log_{2^b}(level size)) digits
 * (at least one), the coordinates concatenated outermost first. Every rank computes every other rank's ID from
 * its rank alone (no exchange, no O(N) array): the construction is deterministic and the same on every rank as
 * long as every rank is given the same description (same API parameters or the same NMAD_MCAST_TOPO). IDs are
 * unique, and ID order is rank order, so the ranks under any ID prefix form one contiguous rank interval.
 *
 * Each rank builds at creation its **compact routing table** T of r rows and 2^b columns (paper section 5):
 * T[i][j] is a rank y whose ID shares the first i digits of this rank's ID and has digit j at position i
 * (conditions (1) and (2)); when no rank qualifies the entry stays **empty** (-1) instead of Plaxton's fill
 * rule (section 5), and column j = own digit i is empty too. Among several candidates the choice is random
 * (seeded, deterministic: paper section 6.1 found it slightly better on Myrinet) or nearest (the candidate whose
 * later digits match this rank's longest). Memory: r x 2^b ints, O(log N) for a fixed b. Building scans the N
 * ranks once (paper fig. 3), O(N r) time.
 *
 * **Forwarding** (section 6.2): a message reaches a rank at stage s (s = 0 at the root, else 1 + the longest
 * common prefix of sender and receiver); the rank delivers it if it is a destination, then for every level
 * i >= s and every digit j != its own digit i with a destination under prefix (its first i digits, j), sends it
 * to T[i][j] at stage i + 1 with the destinations under that prefix. T[i][j] may be a non-recipient: it is then
 * a **virtual master** that relays only. Every destination is reached exactly once, in at most r steps
 * (Theorem 1), and the forwarding graph has no cycle (Theorem 2): the stage grows at every hop.
 *
 * Destination sets: a rank interval [lo, hi) (the whole job is [0, N)) or an explicit list (a group). The part
 * of a set under a prefix is again an interval, or the trimmed list: a forwarded header never carries an O(N)
 * list for an interval (doc/protocol.md, "Topology-ID multicast").
 *
 * Two ways to use it:
 *  - as a tree kind of the dynamic broadcast: nm_mcast_isend(..., NM_MCAST_TREE_TOPO_ID, ...) (nm_mcast.h).
 *    Receivers post plain nm_sr_irecv(); every hop groups its destination list by (longest common prefix, next
 *    digit) and sends each group to one of its members (the lowest ID): no virtual master, because a rank that
 *    did not post a receive must not be handed the data;
 *  - standalone: nm_mcast_topo_isend() routes through the routing table, virtual masters included, with the
 *    compact destination encoding; receivers get the data through a handler (nm_mcast_topo_handler_t).
 *
 * Thread-safety: a topology (nm_mcast_topo_t) is read-only after creation and may be shared by threads; the
 * standalone service is like the core (one thread at a time per core).
 */
#ifndef NM_MCAST_TOPO_H
#define NM_MCAST_TOPO_H

#include <nmad/nm_types.h>
#include <nmad/nm_errno.h>
#include <nmad/nm_sendrecv.h>
#include <nmad/nm_mcast.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Largest number of explicit hierarchy levels (fanouts) of a topology description. */
#define NM_MCAST_TOPO_MAX_LEVELS 8

/** How a routing table entry is chosen among its candidates (paper section 6.1). */
enum nm_mcast_topo_choice_e {
  NM_MCAST_TOPO_RANDOM = 0, /**< a candidate drawn with a seeded generator (default; deterministic) */
  NM_MCAST_TOPO_NEAREST = 1 /**< the candidate whose later digits match this rank's ID longest (lowest ID on ties) */
};

/** Bits of nm_mcast_topo_params_s.field_mask. */
#define NM_MCAST_TOPO_PARAM_BASE_BITS 0x1u
#define NM_MCAST_TOPO_PARAM_LEVELS 0x2u
#define NM_MCAST_TOPO_PARAM_CHOICE 0x4u
#define NM_MCAST_TOPO_PARAM_SEED 0x8u

/** Description of a topology. Set in field_mask the bit of every field you fill; the others keep their defaults
 *  (those of NMAD_MCAST_TOPO when set, see nm_mcast_topo_from_env(), else b = 1, no level, random, seed 0). */
struct nm_mcast_topo_params_s {
  uint64_t field_mask;
  /** b: digits are in base 2^b, 1 <= b <= 4 (paper section 5: base 2^b). Default 1 (binary IDs, as fig. 2). */
  int base_bits;
  /** Number of explicit levels in fanout[] (0..NM_MCAST_TOPO_MAX_LEVELS); default 0 (one level: the rank). */
  int nlevels;
  /** Sizes of the levels below the outermost one, outermost first: {16, 2} = groups of 16 hosts of 2 ranks
   *  each (ranks 2h and 2h+1 share host h, as nmad-sim --ranks-per-host 2 and block placement). Each >= 1. */
  int fanout[NM_MCAST_TOPO_MAX_LEVELS];
  enum nm_mcast_topo_choice_e choice; /**< routing table entry choice (default NM_MCAST_TOPO_RANDOM) */
  uint64_t seed;                      /**< seed of the random choice (default 0); the same on every rank */
};

typedef struct nm_mcast_topo_s *nm_mcast_topo_t; /**< a topology and this rank's routing table */

/**
 * @brief Make the topology IDs of a job of @p size ranks and the routing table of rank @p self.
 * @param size job size N >= 1; @param self this rank, 0 <= self < N; @param params NULL for the defaults.
 * @param[out] out the topology (nm_mcast_topo_destroy()).
 * @return 0, -NM_EINVAL (bad size/self, unknown field_mask bit, base_bits not in 1..4, nlevels out of range, a
 * fanout < 1, or IDs longer than 64 bits), -NM_ENOMEM. Thread-safety: reentrant (no shared state).
 */
int nm_mcast_topo_create(int size, int self, const struct nm_mcast_topo_params_s *params, nm_mcast_topo_t *out);

/**
 * @brief nm_mcast_topo_create() from the environment: NMAD_MCAST_TOPO="F1xF2x...[:b=B][:nearest|:random]
 * [:seed=S]" (fanouts outermost first, e.g. "2" = two ranks per host, "16x2" = switches of 16 hosts of 2 ranks;
 * unset or empty: one level), or "hwloc[:...]": one level of this host's cores per package from hwloc (where
 * nmad-run --bind-to core places ranks; the same on every rank of one host). A bad value returns -NM_EINVAL and prints a message naming the variable and the
 * accepted form. @return as nm_mcast_topo_create().
 */
int nm_mcast_topo_from_env(int size, int self, nm_mcast_topo_t *out);

/** @brief Free a topology (NULL is ignored). */
void nm_mcast_topo_destroy(nm_mcast_topo_t topo);

/** @brief Number of digits r of every ID. */
int nm_mcast_topo_ndigits(const struct nm_mcast_topo_s *topo);
/** @brief Digit base bits b. */
int nm_mcast_topo_base_bits(const struct nm_mcast_topo_s *topo);
/** @brief Job size N. */
int nm_mcast_topo_size(const struct nm_mcast_topo_s *topo);
/** @brief This rank (the owner of the routing table). */
int nm_mcast_topo_self(const struct nm_mcast_topo_s *topo);
/** @brief ID of @p rank (0 <= rank < N), digits packed most significant first in the low r x b bits: comparing
 *  IDs as integers is comparing them digit by digit. */
uint64_t nm_mcast_topo_id(const struct nm_mcast_topo_s *topo, int rank);
/** @brief Digit @p i (0 <= i < r) of the ID of @p rank. */
int nm_mcast_topo_digit(const struct nm_mcast_topo_s *topo, int rank, int i);
/** @brief Longest common prefix, in digits, of the IDs of ranks @p a and @p b (r when a == b). */
int nm_mcast_topo_lcp(const struct nm_mcast_topo_s *topo, int a, int b);
/** @brief Routing table entry T[i][j] (0 <= i < r, 0 <= j < 2^b): a rank, or -1 when empty. */
int nm_mcast_topo_entry(const struct nm_mcast_topo_s *topo, int i, int j);
/** @brief Ranks whose ID starts with the first @p len digits of @p rank's ID followed, when @p next >= 0, by the
 *  digit @p next: the interval [*lo, *hi) (empty when *lo == *hi). */
void nm_mcast_topo_prefix_range(const struct nm_mcast_topo_s *topo, int rank, int len, int next, int *lo, int *hi);

/** A destination set: the ranks of [lo, hi) when list is NULL, else the n ranks of list[] (no duplicates). */
struct nm_mcast_topo_set_s {
  int lo, hi;      /**< interval form: ranks lo..hi-1 */
  const int *list; /**< list form (NULL for the interval form) */
  int n;           /**< entries in list */
};

/** One forwarding step computed by nm_mcast_topo_route(). */
struct nm_mcast_topo_hop_s {
  int rank;  /**< next hop (the routing table entry) */
  int stage; /**< its stage: level + 1 */
  int lo, hi; /**< the destinations it takes over: set members in rank interval [lo, hi) */
  int count; /**< how many destinations that is (> 0) */
  int relay; /**< 1 when rank is not itself a destination (virtual master) */
};

/**
 * @brief The forwarding rule of Song 2009, section 6.2 (fig. 3), at this rank: the next hops for the part of
 * @p set this rank is responsible for at stage @p stage.
 * @param stage 0 at the root, else (1 + longest common prefix with the sender), 0 <= stage <= r.
 * @param hops array of at least r x (2^b - 1) entries; filled farthest level first.
 * @return number of hops, or -NM_EINVAL (bad stage or set). Every member of @p set under this rank's stage
 * prefix, except this rank, falls in exactly one hop's [lo, hi). Thread-safety: reentrant.
 */
int nm_mcast_topo_route(const struct nm_mcast_topo_s *topo, int stage, const struct nm_mcast_topo_set_s *set,
                        struct nm_mcast_topo_hop_s *hops);

/** @brief Whether @p rank is in @p set. */
int nm_mcast_topo_set_has(const struct nm_mcast_topo_set_s *set, int rank);

/**
 * @brief Tree of the NM_MCAST_TREE_TOPO_ID kind of the dynamic broadcast, at one hop (private use of mcast.c,
 * public for tests): @p ranks[0..m) are the hop's destinations (list positions 1..m), the hop being @p self.
 * Consecutive destinations with the same (longest common prefix with self, next digit) form a group; its first
 * member is the child, the others its subtree. @p child, @p end as nm_mcast_tree_children() (arrays of >= m
 * entries), farthest level first. @return the number of children. Any list gives a valid partition; a list in ID
 * order (nm_mcast_topo_sort()) gives the topology tree.
 */
int nm_mcast_topo_children(const struct nm_mcast_topo_s *topo, int self, const int *ranks, int m, int *child,
                           int *end);
/** @brief Sort @p ranks[0..n) by topology ID (the root's placement of NM_MCAST_TREE_TOPO_ID). */
void nm_mcast_topo_sort(const struct nm_mcast_topo_s *topo, int *ranks, int n);

/**
 * @brief Use @p topo for the NM_MCAST_TREE_TOPO_ID broadcasts of @p service (replacing the one made from
 * NMAD_MCAST_TOPO at the first such broadcast). The service does not take ownership; @p topo must outlive it.
 * Every rank must describe the same topology. @return 0 or -NM_EINVAL (NULL, or a topology of another job size).
 */
int nm_mcast_set_topo(nm_mcast_service_t service, nm_mcast_topo_t topo);

/* ---- standalone non-blocking multicast ---- */

typedef struct nm_mcast_topo_service_s *nm_mcast_topo_service_t; /**< the standalone multicast of a session */

/** rpc tag of standalone topology-ID multicast messages (do not register rpc services over it). */
#define NM_MCAST_TOPO_RPC_TAG ((nm_tag_t)0x6e6d746f706f6d01ULL)

/** @brief Delivery at a destination: @p data (@p len bytes, valid during the call only) multicast by @p root
 *  with @p tag. Runs inside progress: it may post sends and receives, never wait. */
typedef void (*nm_mcast_topo_handler_t)(int root, nm_tag_t tag, const void *data, nm_len_t len, void *ref);

/**
 * @brief Start the standalone multicast on @p session with topology @p topo (not owned; outlives the service).
 * Every rank that may receive or relay calls it (a relay can be any rank: virtual masters).
 * @param max_len largest multicast accepted in bytes: a relay or destination allocates at most this per message
 *        in flight; a longer announced length fails the sender's gate (-NM_EPROTO).
 * @return 0, -NM_EINVAL, -NM_ENOMEM. Thread-safety: like the core.
 */
int nm_mcast_topo_init(nm_session_t session, nm_mcast_topo_t topo, nm_len_t max_len, nm_mcast_topo_handler_t handler,
                       void *ref, nm_mcast_topo_service_t *out);
/** @brief Stop the service. @return 0, or -NM_EBUSY while messages are being relayed. */
int nm_mcast_topo_finalize(nm_mcast_topo_service_t service);

/** Send request of a standalone multicast (caller-owned, in place until completion). */
typedef struct nm_mcast_topo_req_s {
  struct nm_req_s *reqs; /* one rpc send per first hop */
  int n, n_done;
  int status;
  volatile int completed;
  void *priv;
} nm_mcast_topo_req_t;

/**
 * @brief Root side of a standalone topology-ID multicast (Song 2009, section 6.2): @p len bytes of @p data to
 * every rank of @p set other than the root, through the routing table (non-recipients relay as virtual masters).
 * Interval sets travel as two integers; list sets as the list trimmed at every hop.
 * @return 0, -NM_EINVAL (bad set: out of range, or a list with duplicates; len > the service's max_len),
 * -NM_ENOMEM. Thread-safety: like the core.
 */
int nm_mcast_topo_isend(nm_mcast_topo_service_t service, const struct nm_mcast_topo_set_s *set, nm_tag_t tag,
                        const void *data, nm_len_t len, nm_mcast_topo_req_t *req);
/** @brief Wait for the root's sends. @return 0 or the first error. */
int nm_mcast_topo_wait(nm_mcast_topo_service_t service, nm_mcast_topo_req_t *req);
/** @brief Messages being relayed or delivered here (0 when idle). */
int nm_mcast_topo_pending(nm_mcast_topo_service_t service);

#ifdef __cplusplus
}
#endif
#endif /* NM_MCAST_TOPO_H */
