/* Gates: the connection to one peer, its sequence numbers, its queues, and its failure. */
/* before uthash: the gate and stream tables hash with it (a rank: ~70 -> ~15 instructions) */
#include "nm_hash_words.h"
#include "nm_core_private.h"
#include <stdlib.h>
#include <string.h>

struct nm_gate_s *nm_core_gate_find(struct nm_core_s *core, int rank)
{
  struct nm_gate_s *g = nm_core_gate_cached(core, rank);
  if (g)
    return g;
  HASH_FIND_INT(core->gate_table, &rank, g);
  if (g)
    core->gate_cache[(unsigned)rank % NM_GATE_CACHE] = g;
  return g;
}

struct nm_gate_s *nm_core_gate(struct nm_core_s *core, int rank)
{
  if (rank < 0 || rank >= core->size)
    return NULL;
  struct nm_gate_s *g = nm_core_gate_find(core, rank);
  if (g)
    return g;
  g = calloc(1, sizeof(*g));
  if (!g)
    return NULL;
  g->core = core;
  g->rank = rank;
  nm_req_index_attach(&g->rdv_sends, &g->rdv_index); /* without memory for it, rdv_sends is scanned */
  g->credit = (int64_t)core->cfg.eager_credit; /* the window every receiver grants (NMAD_EAGER_CREDIT, job-wide) */
  for (int i = 0; i < core->n_drvs; i++) {
    struct nm_drv_s *drv = &core->drvs[i];
    if ((rank == core->rank) != (drv == core->self_drv) || g->n_rails == NM_MAX_RAILS)
      continue;
    g->rails[g->n_rails++] = (struct nm_rail_s){.drv = drv, .peer = (uint64_t)rank};
  }
  const struct nm_strategy_ops_s *st = core->cfg.strategy;
  if (st->gate_init && st->gate_init(g)) {
    free(g);
    return NULL;
  }
  HASH_ADD_INT(core->gate_table, rank, g);
  core->gate_cache[(unsigned)rank % NM_GATE_CACHE] = g;
  return g;
}

struct nm_seq_s *nm_gate_seq_lookup(struct nm_gate_s *gate, uint32_t session, nm_tag_t tag)
{
  struct nm_seq_s *s;
  struct nm_seq_key_s key = {.tag = tag, .session = session, .zero = 0};
  HASH_FIND(hh, gate->seqs, &key, sizeof(key), s);
  if (!s) {
    s = calloc(1, sizeof(*s));
    if (!s)
      return NULL;
    s->key = key;
    HASH_ADD(hh, gate->seqs, key, sizeof(key), s);
  }
  gate->last_seq = s;
  return s;
}

void nm_gate_mark_work(struct nm_gate_s *gate)
{
  if (gate->in_work_list)
    return;
  struct nm_core_s *core = gate->core;
  gate->in_work_list = 1;
  gate->work_next = NULL;
  if (core->work_tail)
    core->work_tail->work_next = gate;
  else
    core->work_head = gate;
  core->work_tail = gate;
  nm_prio_t p = nm_work_prio(gate);
  if (!core->work_head->work_next || p > core->work_prio_max)
    core->work_prio_max = p; /* bound used by nm_core_post_send(); exact again at every nm_core_schedule() */
}

struct nm_ctrl_s *nm_gate_new_ctrl(struct nm_gate_s *gate, uint8_t type)
{
  struct nm_ctrl_s *c = nm_pool_get(&gate->core->ctrl_pool);
  if (c) {
    memset(c, 0, sizeof(*c));
    c->type = type;
  }
  return c;
}

void nm_gate_push_ctrl(struct nm_gate_s *gate, struct nm_ctrl_s *ctrl)
{
  gate->core->cfg.strategy->pack_ctrl(gate, ctrl);
  nm_gate_mark_work(gate);
}

static void nm_gate_fail_list(struct nm_req_list_s *l, int err)
{
  while (l->head) {
    struct nm_req_s *r = l->head;
    nm_req_list_remove(l, r);
    nm_req_complete(r, err);
  }
}

static void nm_gate_detach_pw_reqs(struct nm_pw_s *pw, int err)
{
  struct nm_req_s *r = pw->reqs;
  pw->reqs = pw->reqs_tail = NULL;
  while (r) {
    struct nm_req_s *next = r->pw_next;
    if (!(r->flags & NM_REQF_SYNC))
      nm_req_complete(r, err);
    r = next;
  }
}

void nm_gate_fail(struct nm_gate_s *gate, int err)
{
  if (gate->status)
    return;
  struct nm_core_s *core = gate->core;
  gate->status = err;
  /* Packets already in a driver complete later: detach their sends now (sync sends sit in rdv_sends). */
  for (struct nm_pw_s *pw = gate->inflight_pws; pw; pw = pw->next)
    nm_gate_detach_pw_reqs(pw, err);
  for (int i = 0; i < gate->n_rails; i++)
    if (gate->rails[i].retry) {
      nm_gate_detach_pw_reqs(gate->rails[i].retry, err);
      nm_pool_put(&core->pw_pool, gate->rails[i].retry);
      gate->rails[i].retry = NULL;
      core->n_retry--;
    }
  nm_gate_fail_list(&gate->send_queue, err);
  nm_gate_fail_list(&gate->rdv_sends, err);
  while (gate->ctrl_head) {
    struct nm_ctrl_s *c = gate->ctrl_head;
    gate->ctrl_head = c->next;
    nm_pool_put(&core->ctrl_pool, c);
  }
  gate->ctrl_tail = NULL;
  nm_rdv_gate_fail(gate, err); /* chunked rendezvous messages: each request completes once */
  /* Large transfers stay in the driver until it reports them; detach their requests now. */
  for (struct nm_large_s *l = gate->large; l; l = l->next) {
    struct nm_req_s *r = l->req;
    l->req = NULL;
    if (!l->is_send)
      gate->rails[l->rail].drv->ops->large_cancel(gate->rails[l->rail].drv, l);
    if (r && r->state != NM_RS_DONE)
      nm_req_complete(r, err);
  }
  nm_rdv_retry_gate_fail(gate, err); /* sends parked for a full driver queue: no driver reports them */
  /* Receives posted for this gate alone can never complete now. */
  for (struct nm_session_s *s = core->sessions; s; s = s->next)
    nm_match_gate_fail(s, gate, err);
  nm_msg_set_clear(core, &gate->ooo);
  nm_cancel_gate_fail(gate, err);
  nm_frag_gate_fail(gate, err);
  for (struct nm_gate_fail_hook_s *h = core->gate_fail_hooks, *next; h; h = next) {
    next = h->next; /* a hook may remove itself */
    h->fn(h->ref, gate);
  }
}

void nm_gate_destroy(struct nm_gate_s *gate)
{
  struct nm_core_s *core = gate->core;
  if (!gate->status)
    nm_gate_fail(gate, -NM_ECLOSED);
  struct nm_seq_s *s, *tmp;
  HASH_ITER(hh, gate->seqs, s, tmp) {
    HASH_DEL(gate->seqs, s);
    free(s);
  }
  nm_rdv_gate_destroy(gate);
  while (gate->large) {
    struct nm_large_s *l = gate->large;
    gate->large = l->next;
    nm_pool_put(&core->large_pool, l);
  }
  gate->rdv_sends.index = NULL;
  nm_req_index_free(gate->rdv_index);
  gate->rdv_index = NULL;
  if (core->cfg.strategy->gate_destroy)
    core->cfg.strategy->gate_destroy(gate);
  gate->strat = NULL;
}
