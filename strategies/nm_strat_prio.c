/* Strategy "prio" (the default when NMAD_STRATEGY is unset): priority-aware aggregation. The send queue is kept in
 * decreasing priority (FIFO among equal priorities, so unprioritised traffic appends in O(1) and packs exactly as
 * "aggreg"); control chunks (RTR, ACK, CANCEL, ...) carry their message's priority and are merged with the sends
 * by priority when a packet is filled, so the RTR of an urgent receive passes bulk data and the RTR of a bulk
 * receive waits behind urgent data. A send never overtakes an earlier send of its ordering stream (same session
 * and nm_seq_tag()): that would only make the receiver hold it back (per-(gate, tag) order). The core serves the
 * gates in the order of gate_prio, so an urgent message to one peer leaves before bulk to another.
 * Per-gate state: the gate's rails by increasing nominal latency, so packets (small by nature) take the
 * lowest-latency rail that is ready (issue 15, "latency-bound messages on the lowest-latency rail"); and an index
 * of the send queue, so that an urgent send finds its place without walking past the bulk queued before it: behind
 * 4,096 queued 16 KiB sends the walk took 16 us (doc/performance.md, "An urgent send finds its place in O(1)").
 * The place is after the last queued send that is at least as urgent or of the same stream: the latest (by order
 * key, nm_req_s.qkey) of the last send of each queued priority (a table of NM_PRIO_TAILS) and of the stream's last
 * (nm_seq_s.queued_last). Sends leave from the head only, in key order, so a record whose key the departures have
 * reached is dead, and a departure only notes its key. More distinct priorities than the table holds: back to the
 * walk until the queue empties. */
#include "nmad/core/nm_core_private.h"
#include <stdlib.h>

#define NM_PRIO_TAILS 8
#define NM_QKEY_STEP (1ull << 20) /* between consecutive appended sends: 20 insertions at one place before renumbering */

/* The last queued send of one priority. Live while its key is above the gate's removed_key: sends leave from the
 * head, in key order, so once that key is reached every send of the priority has left (nothing to update then). */
struct nm_prio_tail_s {
  nm_prio_t prio;
  uint64_t key;
  struct nm_req_s *last;
};

struct nm_strat_prio_gate_s {
  int rail_order[NM_MAX_RAILS];
  struct nm_prio_tail_s tails[NM_PRIO_TAILS];
  int n_tails;          /* slots used in tails[], live or not */
  int cur;              /* the slot of the last placed send's priority (the common case: all alike), or -1 */
  int walk;             /* more live priorities than tails[] holds: place by walking until the queue empties */
  uint32_t gen;         /* generation of the nm_seq_s.queued_* fields (a renumbering starts a new one) */
  uint64_t removed_key; /* the key of the last send that left the queue: every queued key is above it */
  uint64_t max_key;     /* the highest key given: all is dead once the queue is empty, however it emptied (a gate
                         * failure unlinks its sends without departures) */
};

static int nm_strat_prio_gate_init(struct nm_gate_s *gate)
{
  struct nm_strat_prio_gate_s *st = calloc(1, sizeof(*st));
  if (!st)
    return -NM_ENOMEM;
  st->gen = 1;
  st->cur = -1;
  /* insertion sort by latency; equal latencies keep the drivers' order (NMAD_DRIVER=a+b: a first) */
  for (int i = 0; i < gate->n_rails; i++) {
    int j = i;
    uint32_t lat = gate->rails[i].drv->props.latency_ns;
    while (j > 0 && gate->rails[st->rail_order[j - 1]].drv->props.latency_ns > lat) {
      st->rail_order[j] = st->rail_order[j - 1];
      j--;
    }
    st->rail_order[j] = i;
  }
  gate->strat = st;
  return NM_ESUCCESS;
}

static void nm_strat_prio_gate_destroy(struct nm_gate_s *gate)
{
  free(gate->strat);
}

/* Record @p req, just placed, as the last queued send of its priority and of its stream @p se. @return 0, or -1
 * when tails[] has no slot for a new priority (the caller goes to walking). */
static int nm_strat_prio_note(struct nm_strat_prio_gate_s *st, struct nm_seq_s *se, struct nm_req_s *req)
{
  int i = st->cur;
  /* the slot of the last placed send's priority, live or not: when it is dead, every send of that priority has
   * left, so no other slot holds it live */
  if (i < 0 || st->tails[i].prio != req->prio) {
    int free_slot = -1;
    for (i = 0; i < st->n_tails; i++) {
      if (st->tails[i].key <= st->removed_key)
        free_slot = free_slot < 0 ? i : free_slot;
      else if (st->tails[i].prio == req->prio)
        break;
    }
    if (i == st->n_tails) {
      if (free_slot < 0 && st->n_tails == NM_PRIO_TAILS)
        return -1;
      i = free_slot >= 0 ? free_slot : st->n_tails++;
      st->tails[i].prio = req->prio;
    }
    st->cur = i;
  }
  /* a placed send follows every queued send at least as urgent, so it is the last of its priority */
  st->tails[i].key = req->qkey;
  st->tails[i].last = req;
  se->queued_gen = st->gen;
  se->queued_key = req->qkey; /* it follows its stream's queued sends too */
  se->queued_last = req;
  return 0;
}

/* Renumber the queue's keys (no room left between two neighbours) and rebuild the index from it. */
static void nm_strat_prio_reindex(struct nm_gate_s *gate, struct nm_strat_prio_gate_s *st)
{
  uint64_t k = 0;
  for (struct nm_req_s *r = gate->send_queue.head; r; r = r->next)
    r->qkey = (k += NM_QKEY_STEP);
  st->max_key = k;
  st->removed_key = 0;
  st->n_tails = 0;
  st->cur = -1;
  st->gen++; /* every stream's record is stale */
  for (struct nm_req_s *r = gate->send_queue.head; r && !st->walk; r = r->next) {
    struct nm_seq_s *se = nm_gate_seq(gate, r->session->id, r->tag);
    if (!se || nm_strat_prio_note(st, se, r))
      st->walk = 1;
  }
}

/* Where @p req goes: after the last queued send at least as urgent or of its stream @p se (NULL: at the head). */
static struct nm_req_s *nm_strat_prio_place(struct nm_gate_s *gate, const struct nm_strat_prio_gate_s *st,
                                             const struct nm_seq_s *se, const struct nm_req_s *req)
{
  struct nm_req_s *tail = gate->send_queue.tail;
  if (!tail || tail->prio >= req->prio) /* the common case: unprioritised traffic appends */
    return tail;
  if (!st || st->walk || !se) {
    uint32_t sid = req->session->id;
    nm_tag_t stream = nm_seq_tag(sid, req->tag);
    struct nm_req_s *pos = tail;
    while (pos && pos->prio < req->prio && !(pos->session->id == sid && nm_seq_tag(sid, pos->tag) == stream))
      pos = pos->prev;
    return pos;
  }
  struct nm_req_s *pos = NULL;
  for (int i = 0; i < st->n_tails; i++) {
    const struct nm_prio_tail_s *t = &st->tails[i];
    if (t->key > st->removed_key && t->prio >= req->prio && (!pos || t->key > pos->qkey))
      pos = t->last;
  }
  if (se->queued_gen == st->gen && se->queued_key > st->removed_key && (!pos || se->queued_key > pos->qkey))
    pos = se->queued_last;
  return pos;
}

static void nm_strat_prio_pack_data(struct nm_gate_s *gate, struct nm_req_s *req)
{
  struct nm_strat_prio_gate_s *st = gate->strat; /* NULL: the gate was made under another strategy */
  struct nm_seq_s *se = gate->last_seq; /* the request's stream: nm_core_post_send() has just looked it up */
  if (st && !gate->send_queue.head) { /* every record is dead; after walking, the index serves again */
    st->removed_key = st->max_key;
    if (st->walk) {
      st->walk = 0;
      st->n_tails = 0;
      st->cur = -1;
    }
  }
  struct nm_req_s *pos = nm_strat_prio_place(gate, st, se, req);
  nm_req_list_insert_after(&gate->send_queue, pos, req);
  if (!st)
    return;
  /* its key: above the previous send's (or removed_key at the head), below the next one's */
  uint64_t lo = pos ? pos->qkey : st->removed_key;
  if (!req->next && lo <= UINT64_MAX - NM_QKEY_STEP) {
    req->qkey = st->max_key = lo + NM_QKEY_STEP;
  } else if (req->next && req->next->qkey - lo >= 2) {
    req->qkey = lo + (req->next->qkey - lo) / 2;
  } else {
    nm_strat_prio_reindex(gate, st);
    return;
  }
  if (st->walk)
    return;
  int i = st->cur;
  if (i >= 0 && st->tails[i].prio == req->prio) { /* nm_strat_prio_note()'s common case, inline */
    st->tails[i].key = req->qkey;
    st->tails[i].last = req;
    se->queued_gen = st->gen;
    se->queued_key = req->qkey;
    se->queued_last = req;
  } else if (nm_strat_prio_note(st, se, req)) {
    st->walk = 1;
  }
}

/* A send leaves the queue's head: what it was the last of is dead from now on (see nm_prio_tail_s). */
static void nm_strat_prio_dequeued(struct nm_gate_s *gate, struct nm_req_s *req)
{
  struct nm_strat_prio_gate_s *st = gate->strat;
  if (st)
    st->removed_key = req->qkey;
}

static nm_prio_t nm_strat_prio_gate_prio(const struct nm_gate_s *gate)
{
  nm_prio_t p = NM_PRIO_LOWEST;
  if (gate->ctrl_head)
    p = gate->ctrl_head->prio;
  if (gate->send_queue.head && gate->send_queue.head->prio > p)
    p = gate->send_queue.head->prio;
  return p;
}

/* Fill a packet with the most urgent of the two queue heads, again and again, until the next one does not fit or
 * the packet holds NM_STRAT_AGGREG_MAX bytes. */
static int nm_strat_prio_fill(struct nm_gate_s *gate, struct nm_pw_s *pw)
{
  const int express = pw->urgent && gate->rails[pw->rail].drv->ops->send_urgent;
  int n = 0;
  for (;;) {
    struct nm_ctrl_s *c = gate->ctrl_head;
    struct nm_req_s *r = gate->send_queue.head;
    int ok;
    if (express && (c ? c->prio : NM_PRIO_LOWEST) <= 0 && (r ? r->prio : NM_PRIO_LOWEST) <= 0)
      break; /* an urgent packet for send_urgent carries no bulk: it goes ahead of the bulk already queued */
    if (c && (!r || c->prio >= r->prio))
      ok = nm_pw_pack_ctrl(pw);
    else if (r)
      ok = nm_pw_pack_req(pw, r);
    else
      break;
    if (!ok)
      break;
    n++;
    if (pw->len >= NM_STRAT_AGGREG_MAX)
      break;
  }
  return n;
}

static int nm_strat_prio_try_and_commit(struct nm_gate_s *gate)
{
  const struct nm_strat_prio_gate_s *st = gate->strat; /* NULL: the gate was made under another strategy */
  return nm_strat_commit_loop(gate, st ? st->rail_order : NULL, NM_STRAT_MAX_INFLIGHT, nm_strat_prio_fill);
}

const struct nm_strategy_ops_s nm_strat_prio_ops = {
  .name = "prio",
  .gate_init = nm_strat_prio_gate_init,
  .gate_destroy = nm_strat_prio_gate_destroy,
  .pack_data = nm_strat_prio_pack_data,
  .dequeued = nm_strat_prio_dequeued,
  .pack_ctrl = nm_strat_ctrl_insert_prio,
  .try_and_commit = nm_strat_prio_try_and_commit,
  .gate_prio = nm_strat_prio_gate_prio,
  .rdv_accept = nm_strat_rdv_split_balance,
};
