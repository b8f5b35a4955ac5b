/**
 * @file nm_match_hash.h
 * @brief Private: the hash tables that make tag matching constant-time (issue 15, part 5; the model is UCX's
 * expected/unexpected tag matching, src/ucp/tag/tag_match.h). Included by nm_core_private.h.
 *
 * - Per session, one bucket per (gate, tag) holds the exact receives posted for it (post order) and the unexpected
 *   messages that arrived with it (arrival order). Receives that are any-source or have a tag mask sit in one
 *   wildcard list, in post order. Every posted receive carries a post number (in req->cookie while posted): an
 *   arrival takes the earlier of its bucket's first receive and the first matching wildcard receive (MPI: among
 *   matching posted receives the first posted wins).
 * - Per gate, the messages held back (out-of-order arrivals, tombstones of withdrawn sends) are a set keyed by
 *   (session, tag, seq): the release of a successor is one lookup, not a rescan.
 * - Per gate, the sends waiting for an RTR or ACK (rdv_sends) are indexed by cookie.
 *
 * All tables are uthash built with HASH_NONFATAL_OOM: an allocation failure is returned as -NM_ENOMEM, never
 * exit(). Thread-safety: none of their own; the core lock covers them (DESIGN.md rule 3).
 */
#ifndef NM_MATCH_HASH_H
#define NM_MATCH_HASH_H

/** Key of a matching bucket: an exact (source gate, full tag) pair. */
struct nm_match_key_s {
  struct nm_gate_s *gate;
  nm_tag_t tag;
};

/** Empty buckets kept per session for reuse (a window of receives re-posted on the same tags makes no table
 *  insertion nor removal); beyond this, the least recently emptied is freed: memory stays bounded by what is
 *  pending plus this many buckets. */
#define NM_MATCH_EMPTY_KEEP 256
/** Entries of the cache of recent buckets (a power of 2). */
#define NM_MATCH_RECENT 16

/** Posted exact receives and unexpected messages of one (gate, tag) of a session. Once both are empty it waits in
 *  the session's list of empty buckets, and is freed when NM_MATCH_EMPTY_KEEP more recent ones are there. */
struct nm_match_bucket_s {
  struct nm_match_key_s key;
  struct nm_req_list_s posted;                /* exact receives, post order */
  struct nm_unexp_s *unexp_head, *unexp_tail; /* unexpected messages, arrival order (through bnext/bprev) */
  struct nm_match_bucket_s *enext, *eprev;    /* in the list of empty buckets (when in_empty) */
  int in_empty;
  UT_hash_handle hh;
};

/** The matching state of a session. */
struct nm_match_s {
  struct nm_match_bucket_s *buckets; /* uthash by (gate, tag) */
  /* Buckets found lately, direct-mapped by (gate, tag) (nm_match_recent_slot()): a root that posts to and hears from
   * its p - 1 peers in turn hits here too, where one entry for the latest lookup missed at every message (two
   * hashings of ~85 instructions per message at a 4-rank barrier's root, issue 18). */
  struct nm_match_bucket_s *recent[NM_MATCH_RECENT];
  struct nm_req_list_s wild;         /* any-source or masked receives, post order */
  struct nm_match_bucket_s *empty_head, *empty_tail; /* empty buckets, least recently emptied first */
  unsigned n_empty;
  uint64_t next_post;                /* post number of the next receive (64 bits: never wraps) */
  struct nm_pool_s bucket_pool;
};

/** Index of a request list by cookie (a gate's rdv_sends): one entry (from the index's pool) per request. */
struct nm_req_index_ent_s {
  uint64_t cookie;
  struct nm_req_s *req;
  UT_hash_handle hh;
};
struct nm_req_index_s {
  struct nm_req_index_ent_s *table; /* uthash by cookie */
  struct nm_pool_s pool;
  int broken; /* an insertion failed (no memory): look-ups scan the list until it empties */
};

/** @brief Create the matching state of a session. @return the state, or NULL when out of memory. */
struct nm_match_s *nm_match_new(void);
/** @brief Free the matching state (its lists must be empty: nm_match_session_close() empties them). */
void nm_match_free(struct nm_match_s *m);
/** @brief The bucket of (@p gate, @p tag) in the table, or NULL (nm_match_bucket_find() without its cache). */
struct nm_match_bucket_s *nm_match_bucket_lookup(struct nm_match_s *m, struct nm_gate_s *gate, nm_tag_t tag);
/** The slot of (@p gate, @p tag) in the cache of recent buckets: gates are distinct objects, so their addresses'
 *  bits above the allocator's alignment, mixed with the tag's low bits, spread a root's peers. */
static inline unsigned nm_match_recent_slot(const struct nm_gate_s *gate, nm_tag_t tag)
{
  uintptr_t g = (uintptr_t)gate;
  return (unsigned)((g >> 4) ^ (g >> 10) ^ (uintptr_t)tag) & (NM_MATCH_RECENT - 1);
}
/** @brief The bucket of (@p gate, @p tag), or NULL when none exists. O(1); inline for the common case of a
 *  (gate, tag) used lately (a hit in the cache of recent buckets), which then costs no call. */
static inline struct nm_match_bucket_s *nm_match_bucket_find(struct nm_match_s *m, struct nm_gate_s *gate,
                                                             nm_tag_t tag)
{
  struct nm_match_bucket_s *b = m->recent[nm_match_recent_slot(gate, tag)];
  if (b && b->key.gate == gate && b->key.tag == tag)
    return b;
  return m->buckets ? nm_match_bucket_lookup(m, gate, tag) : NULL;
}
/** @brief The bucket of (@p gate, @p tag), made if missing. @return NULL when out of memory. */
struct nm_match_bucket_s *nm_match_bucket_get(struct nm_match_s *m, struct nm_gate_s *gate, nm_tag_t tag);
/** @brief An empty bucket @p b (in_empty) is about to hold something: it leaves the empty list. O(1). */
void nm_match_empty_unlink(struct nm_match_s *m, struct nm_match_bucket_s *b);
/** @brief Bucket @p b may have become empty: if so, it joins the empty list (the oldest beyond
 *  NM_MATCH_EMPTY_KEEP is freed). O(1). */
void nm_match_bucket_release(struct nm_match_s *m, struct nm_match_bucket_s *b);

/** @brief Add @p u (its key filled) to the message set @p set (gate->ooo or gate->tombstones).
 *  @return 0, -NM_EALREADY when a message of that key is there (a duplicate), or -NM_ENOMEM. */
int nm_msg_set_add(struct nm_unexp_s **set, struct nm_unexp_s *u);
/** @brief The message of key (@p session, @p tag, @p seq) in @p set, or NULL. O(1). */
struct nm_unexp_s *nm_msg_set_find(struct nm_unexp_s *set, uint32_t session, nm_tag_t tag, nm_seq_t seq);
/** @brief Take @p u out of @p set (it is not freed). */
void nm_msg_set_remove(struct nm_unexp_s **set, struct nm_unexp_s *u);
/** @brief Free every message of @p set (their credit goes back, nm_unexp_free()). */
void nm_msg_set_clear(struct nm_core_s *core, struct nm_unexp_s **set);

/** @brief Make @p l a list indexed by cookie (the index is allocated here). @return 0 or -NM_ENOMEM (the list
 *  then stays a plain list and nm_req_index_find() scans it). */
int nm_req_index_attach(struct nm_req_list_s *l, struct nm_req_index_s **out);
/** @brief Free an index made by nm_req_index_attach() (its list must be empty). */
void nm_req_index_free(struct nm_req_index_s *ix);
/** @brief List hooks (nm_core.c): @p r entered or left an indexed list. */
void nm_req_index_add(struct nm_req_index_s *ix, struct nm_req_s *r);
void nm_req_index_del(struct nm_req_index_s *ix, const struct nm_req_list_s *l, struct nm_req_s *r);
/** @brief The request of @p cookie in list @p l, or NULL. O(1) with an index, a scan without (or after an
 *  out-of-memory insertion, until the list empties). */
struct nm_req_s *nm_req_index_find(const struct nm_req_list_s *l, uint64_t cookie);
/** @brief Whether @p r is in list @p l (O(1) on an indexed list). */
int nm_req_index_has(const struct nm_req_list_s *l, const struct nm_req_s *r);

#endif /* NM_MATCH_HASH_H */
