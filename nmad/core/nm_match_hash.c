/* The hash tables of matching (nm_match_hash.h): (gate, tag) buckets of a session, a gate's sets of held messages,
 * the cookie index of rdv_sends. uthash is built here with HASH_NONFATAL_OOM so that an allocation failure comes
 * back as a value (DESIGN.md rule 6) instead of uthash's default exit(). Each HASH_ADD below reports through the
 * local variable `oom` of the function that expands it. */
#include "nm_hash_words.h" /* before uthash: its HASH_FUNCTION and HASH_KEYCMP */
#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(obj) (oom = 1)
#include "nm_core_private.h"
#include <stdlib.h>

/* ---- (gate, tag) buckets ---- */

struct nm_match_s *nm_match_new(void)
{
  struct nm_match_s *m = calloc(1, sizeof(*m));
  if (m)
    nm_pool_init(&m->bucket_pool, sizeof(struct nm_match_bucket_s));
  return m;
}

void nm_match_free(struct nm_match_s *m)
{
  if (!m)
    return;
  HASH_CLEAR(hh, m->buckets); /* the buckets themselves live in the pool */
  nm_pool_destroy(&m->bucket_pool);
  free(m);
}

struct nm_match_bucket_s *nm_match_bucket_lookup(struct nm_match_s *m, struct nm_gate_s *gate, nm_tag_t tag)
{
  struct nm_match_bucket_s *b;
  struct nm_match_key_s key;
  memset(&key, 0, sizeof(key));
  key.gate = gate;
  key.tag = tag;
  HASH_FIND(hh, m->buckets, &key, sizeof(key), b);
  if (b)
    m->recent[nm_match_recent_slot(gate, tag)] = b;
  return b;
}

void nm_match_empty_unlink(struct nm_match_s *m, struct nm_match_bucket_s *b)
{
  if (b->eprev)
    b->eprev->enext = b->enext;
  else
    m->empty_head = b->enext;
  if (b->enext)
    b->enext->eprev = b->eprev;
  else
    m->empty_tail = b->eprev;
  b->enext = b->eprev = NULL;
  b->in_empty = 0;
  m->n_empty--;
}

struct nm_match_bucket_s *nm_match_bucket_get(struct nm_match_s *m, struct nm_gate_s *gate, nm_tag_t tag)
{
  struct nm_match_bucket_s *b = nm_match_bucket_find(m, gate, tag);
  if (b) {
    if (b->in_empty) /* the caller puts something in it */
      nm_match_empty_unlink(m, b);
    return b;
  }
  b = nm_pool_get(&m->bucket_pool);
  if (!b)
    return NULL;
  memset(b, 0, sizeof(*b));
  b->key.gate = gate;
  b->key.tag = tag;
  int oom = 0;
  HASH_ADD(hh, m->buckets, key, sizeof(b->key), b);
  if (oom) {
    nm_pool_put(&m->bucket_pool, b);
    return NULL;
  }
  m->recent[nm_match_recent_slot(gate, tag)] = b;
  return b;
}

void nm_match_bucket_release(struct nm_match_s *m, struct nm_match_bucket_s *b)
{
  if (b->posted.head || b->unexp_head || b->in_empty)
    return;
  b->in_empty = 1;
  b->enext = NULL;
  b->eprev = m->empty_tail;
  if (m->empty_tail)
    m->empty_tail->enext = b;
  else
    m->empty_head = b;
  m->empty_tail = b;
  if (++m->n_empty <= NM_MATCH_EMPTY_KEEP)
    return;
  struct nm_match_bucket_s *old = m->empty_head;
  nm_match_empty_unlink(m, old);
  HASH_DEL(m->buckets, old);
  unsigned slot = nm_match_recent_slot(old->key.gate, old->key.tag);
  if (m->recent[slot] == old)
    m->recent[slot] = NULL;
  nm_pool_put(&m->bucket_pool, old);
}

/* ---- sets of held messages, by (session, tag, seq) ---- */

int nm_msg_set_add(struct nm_unexp_s **set, struct nm_unexp_s *u)
{
  if (nm_msg_set_find(*set, u->key.session, u->key.tag, u->key.seq))
    return -NM_EALREADY;
  int oom = 0;
  HASH_ADD(hh, *set, key, sizeof(u->key), u);
  return oom ? -NM_ENOMEM : NM_ESUCCESS;
}

struct nm_unexp_s *nm_msg_set_find(struct nm_unexp_s *set, uint32_t session, nm_tag_t tag, nm_seq_t seq)
{
  if (!set)
    return NULL;
  struct nm_msg_key_s key = {.tag = tag, .session = session, .seq = seq};
  struct nm_unexp_s *u;
  HASH_FIND(hh, set, &key, sizeof(key), u);
  return u;
}

void nm_msg_set_remove(struct nm_unexp_s **set, struct nm_unexp_s *u)
{
  HASH_DEL(*set, u);
}

void nm_msg_set_clear(struct nm_core_s *core, struct nm_unexp_s **set)
{
  struct nm_unexp_s *u, *tmp;
  HASH_ITER(hh, *set, u, tmp) {
    HASH_DEL(*set, u);
    nm_unexp_free(core, u);
  }
}

/* ---- cookie index of a request list ---- */

int nm_req_index_attach(struct nm_req_list_s *l, struct nm_req_index_s **out)
{
  struct nm_req_index_s *ix = calloc(1, sizeof(*ix));
  *out = ix;
  if (!ix)
    return -NM_ENOMEM;
  nm_pool_init(&ix->pool, sizeof(struct nm_req_index_ent_s));
  l->index = ix;
  return NM_ESUCCESS;
}

static void nm_req_index_clear(struct nm_req_index_s *ix)
{
  struct nm_req_index_ent_s *e, *tmp;
  HASH_ITER(hh, ix->table, e, tmp) {
    HASH_DEL(ix->table, e);
    nm_pool_put(&ix->pool, e);
  }
  ix->broken = 0;
}

void nm_req_index_free(struct nm_req_index_s *ix)
{
  if (!ix)
    return;
  nm_req_index_clear(ix);
  nm_pool_destroy(&ix->pool);
  free(ix);
}

void nm_req_index_add(struct nm_req_index_s *ix, struct nm_req_s *r)
{
  struct nm_req_index_ent_s *e = nm_pool_get(&ix->pool);
  if (!e) {
    ix->broken = 1;
    return;
  }
  e->cookie = r->cookie;
  e->req = r;
  int oom = 0;
  HASH_ADD(hh, ix->table, cookie, sizeof(e->cookie), e);
  if (oom) {
    nm_pool_put(&ix->pool, e);
    ix->broken = 1;
  }
}

void nm_req_index_del(struct nm_req_index_s *ix, const struct nm_req_list_s *l, struct nm_req_s *r)
{
  struct nm_req_index_ent_s *e;
  HASH_FIND(hh, ix->table, &r->cookie, sizeof(r->cookie), e);
  if (e && e->req == r) {
    HASH_DEL(ix->table, e);
    nm_pool_put(&ix->pool, e);
  }
  if (ix->broken && !l->head) /* empty again: the index is whole */
    nm_req_index_clear(ix);
}

struct nm_req_s *nm_req_index_find(const struct nm_req_list_s *l, uint64_t cookie)
{
  struct nm_req_index_s *ix = l->index;
  if (ix && !ix->broken) {
    struct nm_req_index_ent_s *e;
    HASH_FIND(hh, ix->table, &cookie, sizeof(cookie), e);
    return e ? e->req : NULL;
  }
  for (struct nm_req_s *r = l->head; r; r = r->next)
    if (r->cookie == cookie)
      return r;
  return NULL;
}

int nm_req_index_has(const struct nm_req_list_s *l, const struct nm_req_s *r)
{
  if (l->index && !l->index->broken)
    return nm_req_index_find(l, r->cookie) == r;
  for (const struct nm_req_s *x = l->head; x; x = x->next)
    if (x == r)
      return 1;
  return 0;
}
