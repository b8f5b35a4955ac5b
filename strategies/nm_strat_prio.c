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
 * (nm_seq_s.queued_last). Sends leave from the head only, so the last send of a priority or of a stream leaves with
 * the last one queued. More distinct priorities than the table holds: back to the walk until the queue empties. */
#include "nmad/core/nm_core_private.h"
#include <stdlib.h>

#define NM_PRIO_TAILS 8
#define NM_QKEY_STEP (1ull << 20) /* between consecutive appended sends: 20 insertions at one place before renumbering */

struct nm_prio_tail_s {
  nm_prio_t prio;
  int count;             /* queued sends of this priority */
  struct nm_req_s *last; /* the last of them in the queue */
};

struct nm_strat_prio_gate_s {
  int rail_order[NM_MAX_RAILS];
  struct nm_prio_tail_s tails[NM_PRIO_TAILS];
  int n_tails;
  int walk;     /* more priorities queued than tails[] holds: place sends by walking, until the queue empties */
  uint32_t gen; /* the generation of the nm_seq_s.queued_* fields: bumped when the queue is found empty */
};

static int nm_strat_prio_gate_init(struct nm_gate_s *gate)
{
  struct nm_strat_prio_gate_s *st = calloc(1, sizeof(*st));
  if (!st)
    return -NM_ENOMEM;
  st->gen = 1;
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

/* Give @p req, just linked after @p pos (NULL: at the head), an order key between its neighbours' keys;
 * renumber the queue when there is no room between them. */
static void nm_strat_prio_key(struct nm_req_list_s *q, struct nm_req_s *req)
{
  const struct nm_req_s *pos = req->prev, *next = req->next;
  uint64_t lo = pos ? pos->qkey : 0;
  if (!next && lo <= UINT64_MAX - NM_QKEY_STEP) {
    req->qkey = lo + NM_QKEY_STEP;
    return;
  }
  if (next && next->qkey - lo >= 2) {
    req->qkey = lo + (next->qkey - lo) / 2;
    return;
  }
  uint64_t k = 0;
  for (struct nm_req_s *r = q->head; r; r = r->next)
    r->qkey = (k += NM_QKEY_STEP);
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
  for (int i = 0; i < st->n_tails; i++)
    if (st->tails[i].prio >= req->prio && (!pos || st->tails[i].last->qkey > pos->qkey))
      pos = st->tails[i].last;
  if (se->queued_gen == st->gen && se->n_queued > 0 && (!pos || se->queued_last->qkey > pos->qkey))
    pos = se->queued_last;
  return pos;
}

static void nm_strat_prio_pack_data(struct nm_gate_s *gate, struct nm_req_s *req)
{
  struct nm_strat_prio_gate_s *st = gate->strat; /* NULL: the gate was made under another strategy */
  struct nm_seq_s *se = gate->last_seq; /* nm_core_post_send() just looked the stream up */
  if (se && !(se->key.session == req->session->id && se->key.tag == nm_seq_tag(req->session->id, req->tag)))
    se = NULL;
  if (st && !gate->send_queue.head) { /* an empty queue: the index starts again */
    st->n_tails = 0;
    st->walk = 0;
    st->gen++;
  }
  nm_req_list_insert_after(&gate->send_queue, nm_strat_prio_place(gate, st, se, req), req);
  nm_strat_prio_key(&gate->send_queue, req);
  if (!st || st->walk)
    return;
  if (!se) { /* cannot happen after nm_core_post_send(); without the stream, the index would be wrong */
    st->walk = 1;
    return;
  }
  int i = 0;
  while (i < st->n_tails && st->tails[i].prio != req->prio)
    i++;
  if (i == st->n_tails) {
    if (i == NM_PRIO_TAILS) {
      st->walk = 1;
      return;
    }
    st->tails[st->n_tails++] = (struct nm_prio_tail_s){req->prio, 0, req};
  }
  st->tails[i].count++;
  if (st->tails[i].last->qkey < req->qkey)
    st->tails[i].last = req;
  if (se->queued_gen != st->gen) {
    se->queued_gen = st->gen;
    se->n_queued = 0;
  }
  se->n_queued++;
  se->queued_last = req; /* placed after the stream's last: the new last */
}

static void nm_strat_prio_dequeued(struct nm_gate_s *gate, struct nm_req_s *req)
{
  struct nm_strat_prio_gate_s *st = gate->strat;
  if (!st || st->walk)
    return;
  for (int i = 0; i < st->n_tails; i++)
    if (st->tails[i].prio == req->prio) {
      if (--st->tails[i].count == 0)
        st->tails[i] = st->tails[--st->n_tails];
      break;
    }
  struct nm_seq_s *se = nm_gate_seq(gate, req->session->id, req->tag);
  if (se && se->queued_gen == st->gen && se->n_queued > 0)
    se->n_queued--;
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

/* Fill a packet with the most urgent of the two queue heads, again and again, until the next one does not fit. */
static int nm_strat_prio_fill(struct nm_gate_s *gate, struct nm_pw_s *pw)
{
  int n = 0;
  for (;;) {
    struct nm_ctrl_s *c = gate->ctrl_head;
    struct nm_req_s *r = gate->send_queue.head;
    int ok;
    if (c && (!r || c->prio >= r->prio))
      ok = nm_pw_pack_ctrl(pw);
    else if (r)
      ok = nm_pw_pack_req(pw, r);
    else
      break;
    if (!ok)
      break;
    n++;
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
