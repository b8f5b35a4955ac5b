/* NewMadeleine's native interface over nmad (issue 16, deliverable 2; doc/newmad.md), every call StarPU's
 * NewMadeleine back end makes, with the data checked: sends and receives of contiguous and iovec descriptors
 * (eager and rendezvous sizes), issend, priorities, the header-then-body receive of data of unknown size
 * (RECV_DATA, peek, offset, unpack_data; posted before and after the message arrived), monitors with their events
 * and info, truncation and cancel, an MPI datatype through nm_mpi_nmad_data_get(), a communicator built with the
 * MPI shim (its own session, its ranks, its tags apart from the world's), a dynamic broadcast with a notifier, and
 * requests posted from several threads at once while the progress thread runs (waits on piom_cond, as StarPU).
 * Run by it_run.sh with 2 or 4 ranks (any size >= 2 works). */
#include <mpi.h>
#include <nm_mpi_nmad.h>
#include <nm_sendrecv_interface.h>
#include <nm_mcast_interface.h>
#include <pthread.h>
#include <string.h>
#include "it_common.h"

static int rank, size;

#define BIG ((size_t)1 << 20) /* above the rendezvous threshold (32 KiB by default) */
#define SMALL ((size_t)777)

/* ---- monitors: the events a request saw, in order ---- */
struct seen_s {
  nm_sr_event_t ev[4];
  nm_sr_event_info_t info[4];
  int n;
  piom_cond_t done; /* FINALIZED */
};

static void seen_init(struct seen_s *s)
{
  memset(s, 0, sizeof(*s));
  piom_cond_init(&s->done, 0);
}

static void record(nm_sr_event_t event, const nm_sr_event_info_t *info, void *ref)
{
  struct seen_s *s = ref;
  CHECK(s->n < 4, "more than 4 events");
  s->ev[s->n] = event;
  s->info[s->n] = *info;
  s->n++;
  if (event & NM_SR_EVENT_FINALIZED)
    piom_cond_signal(&s->done, 1);
}

/* ---- plain sends and receives of descriptors ---- */

static void send_data(nm_session_t s, nm_gate_t g, nm_tag_t tag, const struct nm_data_s *d, nm_len_t hlen, int sync,
                      nm_prio_t prio)
{
  nm_sr_request_t req = NM_SR_REQUEST_NULL;
  nm_sr_send_init(s, &req);
  nm_sr_send_pack_data(s, &req, d);
  CHECK_RC(nm_sr_send_set_priority(s, &req, prio), "set_priority");
  if (hlen)
    CHECK_RC(nm_sr_send_header(s, &req, hlen), "send_header");
  CHECK_RC(sync ? nm_sr_send_issend(s, &req, g, tag) : nm_sr_send_isend(s, &req, g, tag), "isend");
  CHECK(nm_sr_send_set_priority(s, &req, 1) == -NM_EINVAL, "set_priority after post accepted");
  CHECK_RC(nm_sr_swait(s, &req), "swait");
}

static int recv_data(nm_session_t s, nm_gate_t g, nm_tag_t tag, const struct nm_data_s *d, nm_len_t *got)
{
  nm_sr_request_t req = NM_SR_REQUEST_NULL;
  nm_sr_recv_init(s, &req);
  nm_sr_recv_unpack_data(s, &req, d);
  CHECK_RC(nm_sr_recv_irecv(s, &req, g, tag, NM_TAG_MASK_FULL), "irecv");
  int rc = nm_sr_rwait(s, &req);
  nm_gate_t src = NULL;
  CHECK_RC(nm_sr_recv_source(s, &req, &src), "recv_source");
  CHECK(src == g, "source gate %p, expected %p", (void *)src, (void *)g);
  CHECK_RC(nm_sr_request_get_size(&req, got), "get_size");
  return rc;
}

/* Contiguous and iovec descriptors, eager and rendezvous, each way between the pair (me, peer). */
static void test_p2p(nm_session_t s, nm_gate_t g, int sender)
{
  const size_t sizes[] = {0, 8, SMALL, BIG};
  uint8_t *a = malloc(BIG + 64), *b = malloc(BIG + 64);
  CHECK(a && b, "malloc");
  for (unsigned k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
    const size_t len = sizes[k];
    for (int kind = 0; kind < 4; kind++) { /* contiguous; 2 pieces; 3 pieces (packed); synchronous contiguous */
      const nm_tag_t tag = 0x100000000ULL * (k + 1) + (nm_tag_t)kind;
      struct nm_data_s d;
      struct iovec v[3];
      if (sender) {
        fill(a, len, tag);
        if (kind == 1 && len) {
          v[0] = (struct iovec){a, 1};
          v[1] = (struct iovec){a + 1, len - 1};
          nm_data_iov_build(&d, v, 2);
        } else if (kind == 2 && len >= 8) {
          v[0] = (struct iovec){a, 3};
          v[1] = (struct iovec){a + 3, len / 2 - 3};
          v[2] = (struct iovec){a + len / 2, len - len / 2};
          nm_data_iov_build(&d, v, 3);
        } else {
          nm_data_contiguous_build(&d, a, len);
        }
        send_data(s, g, tag, &d, 0, kind == 3, (nm_prio_t)kind);
      } else {
        memset(b, 0xee, len + 64);
        nm_len_t got = 0;
        if (kind == 0 || len < 8) {
          nm_data_contiguous_build(&d, b, len);
        } else { /* receive into other pieces than the sender's: scatter */
          v[0] = (struct iovec){b, len / 3};
          v[1] = (struct iovec){b + len / 3, 0};
          v[2] = (struct iovec){b + len / 3, len - len / 3};
          nm_data_iov_build(&d, v, 3);
        }
        CHECK_RC(recv_data(s, g, tag, &d, &got), "rwait");
        CHECK(got == len, "size %llu, expected %zu (kind %d)", (unsigned long long)got, len, kind);
        CHECK(verify(b, len, tag) < 0, "data differ at %ld (len %zu kind %d)", verify(b, len, tag), len, kind);
        CHECK(b[len] == 0xee, "byte past the end written (len %zu kind %d)", len, kind);
      }
    }
  }
  free(a);
  free(b);
}

/* ---- header-then-body: StarPU's receive of data whose size only the sender knows ---- */

struct unknown_s {
  nm_session_t s;
  nm_sr_request_t req;
  int64_t count;   /* the header: body length */
  uint8_t *buf;
  struct iovec v[2];
  struct nm_data_s d;
  struct seen_s seen;
  int peek_rc;
};

static void unknown_cb(nm_sr_event_t event, const nm_sr_event_info_t *info, void *ref)
{
  struct unknown_s *u = ref;
  record(event, info, &u->seen);
  if (event & NM_SR_EVENT_RECV_DATA) {
    struct nm_data_s h;
    nm_data_contiguous_build(&h, &u->count, sizeof(u->count));
    u->peek_rc = nm_sr_recv_peek(u->s, &u->req, &h);
    if (u->peek_rc)
      return;
    u->buf = malloc((size_t)u->count + 1);
    u->v[0] = (struct iovec){&u->count, sizeof(u->count)};
    u->v[1] = (struct iovec){u->buf, (size_t)u->count};
    nm_data_iov_build(&u->d, u->v, 2);
    nm_sr_recv_offset(u->s, &u->req, sizeof(u->count));
    nm_sr_recv_unpack_data(u->s, &u->req, &u->d);
  }
}

static void unknown_post(struct unknown_s *u, nm_session_t s, nm_gate_t g, nm_tag_t tag)
{
  memset(u, 0, sizeof(*u));
  u->s = s;
  seen_init(&u->seen);
  nm_sr_recv_init(s, &u->req);
  nm_sr_request_set_ref(&u->req, u);
  CHECK_RC(nm_sr_request_monitor(s, &u->req, NM_SR_EVENT_FINALIZED | NM_SR_EVENT_RECV_DATA |
                                               NM_SR_EVENT_RECV_COMPLETED, unknown_cb), "monitor");
  CHECK_RC(nm_sr_recv_irecv(s, &u->req, g, tag, NM_TAG_MASK_FULL), "irecv");
}

static void unknown_check(struct unknown_s *u, nm_gate_t g, nm_tag_t tag, size_t len)
{
  piom_cond_wait(&u->seen.done, 1);
  CHECK(u->peek_rc == 0, "peek: %d", u->peek_rc);
  CHECK(u->seen.n == 2, "%d events, expected RECV_DATA then RECV_COMPLETED | FINALIZED", u->seen.n);
  CHECK(u->seen.ev[0] == NM_SR_EVENT_RECV_DATA &&
            u->seen.ev[1] == (NM_SR_EVENT_RECV_COMPLETED | NM_SR_EVENT_FINALIZED), "events %x %x", u->seen.ev[0],
        u->seen.ev[1]);
  for (int i = 0; i < 2; i++) {
    CHECK(u->seen.info[i].req.p_request == &u->req, "event %d: info.req.p_request", i);
    CHECK(u->seen.info[i].recv.p_gate == g && u->seen.info[i].recv.tag == tag, "event %d: gate/tag", i);
    CHECK(u->seen.info[i].recv.len == len + sizeof(int64_t), "event %d: len %llu", i,
          (unsigned long long)u->seen.info[i].recv.len);
  }
  CHECK(u->seen.info[1].status == 0, "status %d", u->seen.info[1].status);
  CHECK(u->count == (int64_t)len, "header %lld, expected %zu", (long long)u->count, len);
  CHECK(verify(u->buf, len, tag) < 0, "body differs at %ld (len %zu)", verify(u->buf, len, tag), len);
  piom_cond_destroy(&u->seen.done);
  free(u->buf);
}

struct usend_s {
  int64_t count;
  uint8_t *body;
  struct iovec v[2];
  nm_sr_request_t req;
  struct seen_s seen;
};

static void unknown_send(struct usend_s *u, nm_session_t s, nm_gate_t g, nm_tag_t tag, size_t len)
{
  u->count = (int64_t)len;
  u->body = malloc(len + 1);
  fill(u->body, len, tag);
  u->v[0] = (struct iovec){&u->count, sizeof(u->count)};
  u->v[1] = (struct iovec){u->body, len};
  seen_init(&u->seen);
  struct nm_data_s d;
  nm_data_iov_build(&d, u->v, 2);
  nm_sr_send_init(s, &u->req);
  nm_sr_send_pack_data(s, &u->req, &d);
  CHECK_RC(nm_sr_send_header(s, &u->req, sizeof(u->count)), "send_header");
  nm_sr_request_set_ref(&u->req, &u->seen);
  CHECK_RC(nm_sr_request_monitor(s, &u->req, NM_SR_EVENT_SEND_COMPLETED | NM_SR_EVENT_FINALIZED, record), "monitor");
  CHECK_RC(nm_sr_send_isend(s, &u->req, g, tag), "isend");
}

static void unknown_send_wait(struct usend_s *u)
{
  piom_cond_wait(&u->seen.done, 1);
  CHECK(u->seen.n == 1 && u->seen.ev[0] == (NM_SR_EVENT_SEND_COMPLETED | NM_SR_EVENT_FINALIZED),
        "send events: %d (%x)", u->seen.n, u->seen.ev[0]);
  CHECK(u->seen.info[0].req.p_request == &u->req && u->seen.info[0].status == 0, "send info");
  piom_cond_destroy(&u->seen.done);
  free(u->body);
}

static void test_unknown(nm_session_t s, nm_gate_t g, int sender)
{
  const size_t sizes[] = {0, SMALL, BIG};
  for (unsigned k = 0; k < 3; k++)
    for (int late = 0; late < 2; late++) { /* receive posted before the message, then after it arrived */
      const nm_tag_t tag = 0xabc00 + k * 2 + (nm_tag_t)late;
      if (sender) {
        if (!late)
          MPI_Barrier(MPI_COMM_WORLD); /* the receive is posted */
        struct usend_s *us = malloc(sizeof(*us));
        unknown_send(us, s, g, tag, sizes[k]);
        if (late)
          MPI_Barrier(MPI_COMM_WORLD); /* a rendezvous completes only once the receive is posted */
        unknown_send_wait(us);
        free(us);
      } else {
        struct unknown_s *u = malloc(sizeof(*u));
        if (!late) {
          unknown_post(u, s, g, tag);
          MPI_Barrier(MPI_COMM_WORLD);
        } else {
          MPI_Barrier(MPI_COMM_WORLD); /* eager data is stored unexpected by then; a rendezvous waits for us */
          unknown_post(u, s, g, tag);
        }
        unknown_check(u, g, tag, sizes[k]);
        free(u);
      }
    }
}

/* ---- truncation, cancel ---- */

static void test_trunc_cancel(nm_session_t s, nm_gate_t g, int sender)
{
  uint8_t a[100], b[100];
  struct nm_data_s d;
  if (sender) {
    fill(a, 100, 77);
    nm_data_contiguous_build(&d, a, 100);
    send_data(s, g, 77, &d, 0, 0, 0);
    return;
  }
  memset(b, 0, sizeof(b));
  nm_data_contiguous_build(&d, b, 60);
  nm_len_t got;
  CHECK(recv_data(s, g, 77, &d, &got) == -NM_ETRUNCATED, "a 100-byte message into 60 bytes not truncated");
  CHECK(got == 60 && verify(b, 60, 77) < 0 && b[60] == 0, "truncated data");
  nm_sr_request_t req;
  nm_sr_recv_init(s, &req);
  nm_sr_recv_unpack_data(s, &req, &d);
  CHECK_RC(nm_sr_recv_irecv(s, &req, g, 0xdeadULL, NM_TAG_MASK_FULL), "irecv");
  CHECK_RC(nm_sr_rcancel(s, &req), "rcancel");
  CHECK(nm_sr_rwait(s, &req) == -NM_ECANCELED, "cancelled receive status");
}

/* ---- a monitor set after the request completed still gets its events (StarPU sets it after posting) ---- */

static void test_late_monitor(nm_session_t s, nm_gate_t g, int sender)
{
  uint64_t v = 0x5151000000000000ULL + (uint64_t)rank, w = 0;
  struct nm_data_s d;
  struct seen_s seen;
  seen_init(&seen);
  nm_sr_request_t req;
  if (sender) {
    nm_data_contiguous_build(&d, &v, sizeof(v));
    send_data(s, g, 0x51, &d, 0, 0, 0); /* eager: stored at the receiver before its receive is posted */
    MPI_Barrier(MPI_COMM_WORLD);
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
    nm_data_contiguous_build(&d, &w, sizeof(w));
    nm_sr_recv_init(s, &req);
    nm_sr_recv_unpack_data(s, &req, &d);
    CHECK_RC(nm_sr_recv_irecv(s, &req, g, 0x51, NM_TAG_MASK_FULL), "irecv");
    while (nm_sr_rtest(s, &req) == -NM_EAGAIN)
      ;
    nm_sr_request_set_ref(&req, &seen);
    CHECK_RC(nm_sr_request_monitor(s, &req, NM_SR_EVENT_RECV_COMPLETED | NM_SR_EVENT_FINALIZED, record), "monitor");
    CHECK(seen.n == 1 && seen.ev[0] == (NM_SR_EVENT_RECV_COMPLETED | NM_SR_EVENT_FINALIZED),
          "late receive monitor: %d events", seen.n);
    CHECK(w == 0x5151000000000000ULL + (uint64_t)(rank ^ 1), "late receive data");
  }
  /* a send to oneself, monitor set after the post */
  struct seen_s self_seen;
  seen_init(&self_seen);
  nm_session_t ss;
  nm_gate_t me;
  nm_mpi_nmad_dest(&ss, &me, MPI_COMM_WORLD, rank);
  nm_sr_request_t sq, rq;
  uint64_t x = 0x5e1f + (uint64_t)rank, y = 0;
  struct nm_data_s dx, dy;
  nm_data_contiguous_build(&dx, &x, sizeof(x));
  nm_data_contiguous_build(&dy, &y, sizeof(y));
  nm_sr_recv_init(ss, &rq);
  nm_sr_recv_unpack_data(ss, &rq, &dy);
  CHECK_RC(nm_sr_recv_irecv(ss, &rq, me, 0x5e1f, NM_TAG_MASK_FULL), "irecv self");
  nm_sr_send_init(ss, &sq);
  nm_sr_send_pack_data(ss, &sq, &dx);
  CHECK_RC(nm_sr_send_isend(ss, &sq, me, 0x5e1f), "isend self");
  nm_sr_request_set_ref(&sq, &self_seen);
  CHECK_RC(nm_sr_request_monitor(ss, &sq, NM_SR_EVENT_FINALIZED, record), "monitor self");
  piom_cond_wait(&self_seen.done, 1);
  CHECK(self_seen.n == 1 && self_seen.ev[0] == NM_SR_EVENT_FINALIZED, "self send: %d events", self_seen.n);
  CHECK_RC(nm_sr_rwait(ss, &rq), "rwait self");
  CHECK(y == x, "self data");
  piom_cond_destroy(&self_seen.done);
  piom_cond_destroy(&seen.done);
}

/* ---- an MPI datatype as a descriptor ---- */

static void test_datatype(nm_session_t s, nm_gate_t g, int sender)
{
  MPI_Datatype vec;
  MPI_Type_vector(4, 2, 3, MPI_INT, &vec); /* ints 0,1, 3,4, 6,7, 9,10 of each element */
  MPI_Type_commit(&vec);
  int m[24], c[16];
  struct nm_data_s d;
  if (sender) {
    for (int i = 0; i < 24; i++)
      m[i] = 1000 * rank + i;
    nm_mpi_nmad_data_get(&d, m, vec, 2);
    MPI_Type_free(&vec); /* the descriptor holds a reference until released */
    CHECK(nm_data_size(&d) == 16 * sizeof(int), "datatype descriptor of %llu bytes",
          (unsigned long long)nm_data_size(&d));
    send_data(s, g, 5, &d, 0, 0, 0);
    nm_mpi_nmad_data_release(vec);
  } else {
    nm_data_contiguous_build(&d, c, sizeof(c));
    nm_len_t got;
    CHECK_RC(recv_data(s, g, 5, &d, &got), "recv datatype");
    int peer = rank ^ 1, j = 0;
    for (int e = 0; e < 2; e++) /* the extent of the vector is 3*3+2 = 11 ints */
      for (int blk = 0; blk < 4; blk++)
        for (int i = 0; i < 2; i++, j++)
          CHECK(c[j] == 1000 * peer + e * 11 + blk * 3 + i, "datatype element %d: %d", j, c[j]);
    MPI_Type_free(&vec);
  }
}

/* ---- a communicator of the MPI shim: its own session and ranks ---- */

static void test_comm(void)
{
  MPI_Comm rev; /* ranks in reverse order */
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
  int r, n;
  MPI_Comm_rank(rev, &r);
  MPI_Comm_size(rev, &n);
  CHECK(r == size - 1 - rank && n == size, "split: rank %d size %d", r, n);
  nm_comm_t c = nm_mpi_comm(rev), w = nm_mpi_comm(MPI_COMM_WORLD);
  CHECK(c && w && c != w, "nm_mpi_comm");
  CHECK(nm_comm_rank(c) == r && nm_comm_size(c) == n, "nm_comm rank/size");
  nm_session_t sc, sw;
  nm_gate_t gc, gw;
  int peer_world = rank ^ 1, peer_rev = size - 1 - peer_world;
  nm_mpi_nmad_dest(&sc, &gc, rev, peer_rev);
  nm_mpi_nmad_dest(&sw, &gw, MPI_COMM_WORLD, peer_world);
  CHECK(sc && sw && sc != sw, "one session per communicator");
  CHECK(gc == gw, "rank %d of the reversed communicator is world rank %d: same gate", peer_rev, peer_world);
  CHECK(nm_comm_get_by_session(sc) == c && nm_comm_get_by_session(sw) == w, "nm_comm_get_by_session");
  CHECK(nm_comm_get_gate(c, peer_rev) == gc, "nm_comm_get_gate");
  /* the same raw tag on both sessions: each message reaches its own communicator's receive */
  uint64_t out[2] = {0x1111000000000000ULL + (uint64_t)rank, 0x2222000000000000ULL + (uint64_t)rank}, in[2] = {0, 0};
  struct nm_data_s dw, dc, rw, rc;
  nm_data_contiguous_build(&dw, &out[0], 8);
  nm_data_contiguous_build(&dc, &out[1], 8);
  nm_data_contiguous_build(&rw, &in[0], 8);
  nm_data_contiguous_build(&rc, &in[1], 8);
  nm_sr_request_t q[4];
  const nm_tag_t tag = 0xfeedfacecafebeefULL; /* all 64 bits */
  nm_sr_recv_init(sc, &q[0]);
  nm_sr_recv_unpack_data(sc, &q[0], &rc);
  CHECK_RC(nm_sr_recv_irecv(sc, &q[0], gc, tag, NM_TAG_MASK_FULL), "irecv comm");
  nm_sr_recv_init(sw, &q[1]);
  nm_sr_recv_unpack_data(sw, &q[1], &rw);
  CHECK_RC(nm_sr_recv_irecv(sw, &q[1], gw, tag, NM_TAG_MASK_FULL), "irecv world");
  nm_sr_send_init(sw, &q[2]);
  nm_sr_send_pack_data(sw, &q[2], &dw);
  CHECK_RC(nm_sr_send_isend(sw, &q[2], gw, tag), "isend world");
  nm_sr_send_init(sc, &q[3]);
  nm_sr_send_pack_data(sc, &q[3], &dc);
  CHECK_RC(nm_sr_send_isend(sc, &q[3], gc, tag), "isend comm");
  for (int i = 0; i < 4; i++)
    CHECK_RC(i < 2 ? nm_sr_rwait(i ? sw : sc, &q[i]) : nm_sr_swait(i == 2 ? sw : sc, &q[i]), "wait");
  CHECK(in[0] == 0x1111000000000000ULL + (uint64_t)peer_world, "world message %llx", (unsigned long long)in[0]);
  CHECK(in[1] == 0x2222000000000000ULL + (uint64_t)peer_world, "comm message %llx", (unsigned long long)in[1]);
  MPI_Comm_free(&rev);
}

/* ---- dynamic broadcast: root 0, the others receive as StarPU does (header then body) ---- */

struct root_s {
  piom_cond_t done;
  int calls;
};

static void root_notified(void *ref)
{
  struct root_s *r = ref;
  r->calls++;
  piom_cond_signal(&r->done, 1);
}

static void test_mcast(nm_mcast_service_t svc, nm_comm_t world)
{
  const size_t sizes[] = {SMALL, BIG};
  for (unsigned k = 0; k < 2; k++) {
    const nm_tag_t tag = 0x7700 + k;
    const size_t len = sizes[k];
    nm_session_t s;
    nm_gate_t g0;
    nm_mpi_nmad_dest(&s, &g0, MPI_COMM_WORLD, 0);
    if (rank == 0) {
      int n = size - 1, *dests = malloc(sizeof(int) * (size_t)n), *prios = malloc(sizeof(int) * (size_t)n);
      for (int i = 0; i < n; i++) {
        dests[i] = size - 1 - i; /* not in rank order */
        prios[i] = i;
      }
      int64_t count = (int64_t)len;
      uint8_t *body = malloc(len);
      fill(body, len, tag);
      struct iovec v[2] = {{&count, sizeof(count)}, {body, len}};
      struct nm_data_s d;
      nm_data_iov_build(&d, v, 2);
      struct root_s r = {.calls = 0};
      piom_cond_init(&r.done, 0);
      nm_mcast_t m;
      nm_mcast_send_init(svc, &m);
      nm_mcast_send_set_notifier(&m, root_notified, &r);
      CHECK_RC(nm_mcast_isend(&m, world, dests, prios, n, tag, &d, sizeof(count), NM_COLL_TREE_DEFAULT), "mcast");
      piom_cond_wait(&r.done, 1);
      CHECK(r.calls == 1, "notifier called %d times", r.calls);
      nm_mcast_send_destroy(&m);
      piom_cond_destroy(&r.done);
      free(body);
      free(dests);
      free(prios);
    } else {
      struct unknown_s *u = malloc(sizeof(*u));
      unknown_post(u, s, g0, tag);
      unknown_check(u, g0, tag, len);
      free(u);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

/* ---- the pattern suspected in StarPU's mpi_data_cpy hang (doc/starpu.md): several broadcasts and point-to-point
 * messages from one root on ONE tag, interleaved, trees and destination orders varying; every other rank posts
 * its receives (root's gate, that tag) in the root's send order, one at a time (eager messages the root sent ahead
 * arrive before their receive: unexpected, or held back for their turn). ---- */
#define MIX_ROUNDS 6

static void test_mcast_p2p_mix(nm_mcast_service_t svc, nm_comm_t world)
{
  const nm_tag_t tag = 0x7800;
  nm_session_t s;
  nm_gate_t g0;
  nm_mpi_nmad_dest(&s, &g0, MPI_COMM_WORLD, 0);
  for (int k = 0; k < MIX_ROUNDS; k++) {
    const size_t len = k % 3 == 2 ? BIG : (size_t)(100 + k);
    const int bcast = k % 2 == 0;
    if (rank == 0) {
      uint8_t *body = malloc(len);
      fill(body, len, tag + (nm_tag_t)k);
      struct nm_data_s d;
      nm_data_contiguous_build(&d, body, len);
      if (bcast) {
        int n = size - 1, *dests = malloc(sizeof(int) * (size_t)n);
        for (int i = 0; i < n; i++)
          dests[i] = k % 4 ? size - 1 - i : i + 1;
        struct root_s r = {.calls = 0};
        piom_cond_init(&r.done, 0);
        nm_mcast_t m;
        nm_mcast_send_init(svc, &m);
        nm_mcast_send_set_notifier(&m, root_notified, &r);
        CHECK_RC(nm_mcast_isend(&m, world, dests, NULL, n, tag, &d, 0,
                                k % 4 ? NM_COLL_TREE_CHAIN : NM_COLL_TREE_DEFAULT), "mcast");
        piom_cond_wait(&r.done, 1);
        nm_mcast_send_destroy(&m);
        piom_cond_destroy(&r.done);
        free(dests);
      } else {
        for (int dst = 1; dst < size; dst++) {
          nm_gate_t g;
          nm_mpi_nmad_dest(&s, &g, MPI_COMM_WORLD, dst);
          send_data(s, g, tag, &d, 0, 0, 0);
        }
      }
      free(body);
    } else {
      if (k == MIX_ROUNDS / 2)
        MPI_Barrier(MPI_COMM_WORLD); /* one barrier in the middle: the root's MPI session beside the broadcasts */
      uint8_t *in = malloc(len);
      struct nm_data_s d;
      nm_data_contiguous_build(&d, in, len);
      nm_len_t got = 0;
      CHECK_RC(recv_data(s, g0, tag, &d, &got), "mix recv");
      CHECK(got == len, "mix round %d: %lu bytes, %zu sent", k, (unsigned long)got, len);
      CHECK(verify(in, len, tag + (nm_tag_t)k) < 0, "mix round %d (%s): data", k, bcast ? "broadcast" : "p2p");
      free(in);
    }
    if (rank == 0 && k == MIX_ROUNDS / 2 - 1)
      MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- several threads post at once while the progress thread runs ---- */

#define THREADS 4
#define PER_THREAD 50

struct thr_s {
  nm_session_t s;
  nm_gate_t g;
  int id;
};

static void *thr_main(void *arg)
{
  struct thr_s *t = arg;
  uint8_t out[PER_THREAD][64], in[PER_THREAD][64];
  nm_sr_request_t rq[PER_THREAD], sq[PER_THREAD];
  struct seen_s seen[PER_THREAD];
  for (int i = 0; i < PER_THREAD; i++) {
    const nm_tag_t tag = ((nm_tag_t)t->id << 32) | (nm_tag_t)i;
    struct nm_data_s d;
    seen_init(&seen[i]);
    nm_data_contiguous_build(&d, in[i], sizeof(in[i]));
    nm_sr_recv_init(t->s, &rq[i]);
    nm_sr_recv_unpack_data(t->s, &rq[i], &d);
    nm_sr_request_set_ref(&rq[i], &seen[i]);
    CHECK_RC(nm_sr_request_monitor(t->s, &rq[i], NM_SR_EVENT_RECV_COMPLETED | NM_SR_EVENT_FINALIZED, record), "mon");
    CHECK_RC(nm_sr_recv_irecv(t->s, &rq[i], t->g, tag, NM_TAG_MASK_FULL), "irecv");
    fill(out[i], sizeof(out[i]), tag + (nm_tag_t)rank);
    nm_data_contiguous_build(&d, out[i], sizeof(out[i]));
    nm_sr_send_init(t->s, &sq[i]);
    nm_sr_send_pack_data(t->s, &sq[i], &d);
    nm_sr_send_set_priority(t->s, &sq[i], i % 3);
    CHECK_RC(nm_sr_send_isend(t->s, &sq[i], t->g, tag), "isend");
  }
  for (int i = 0; i < PER_THREAD; i++) {
    const nm_tag_t tag = ((nm_tag_t)t->id << 32) | (nm_tag_t)i;
    piom_cond_wait(&seen[i].done, 1); /* as StarPU: the monitor signals, the progress thread moves the data */
    CHECK(seen[i].n == 1 && seen[i].ev[0] == (NM_SR_EVENT_RECV_COMPLETED | NM_SR_EVENT_FINALIZED),
          "thread %d msg %d events", t->id, i);
    CHECK(verify(in[i], sizeof(in[i]), tag + (nm_tag_t)(rank ^ 1)) < 0, "thread %d msg %d data", t->id, i);
    CHECK_RC(nm_sr_swait(t->s, &sq[i]), "swait");
    piom_cond_destroy(&seen[i].done);
  }
  return NULL;
}

static void test_threads(nm_session_t s, nm_gate_t g)
{
  pthread_t th[THREADS];
  struct thr_s t[THREADS];
  for (int i = 0; i < THREADS; i++) {
    t[i] = (struct thr_s){s, g, i + 16};
    CHECK(pthread_create(&th[i], NULL, thr_main, &t[i]) == 0, "pthread_create");
  }
  for (int i = 0; i < THREADS; i++)
    pthread_join(th[i], NULL);
}

int main(int argc, char **argv)
{
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size >= 2, "needs 2 ranks or more");
  CHECK(nm_abi_config_check() == 0, "nm_abi_config_check");
  nm_comm_t world = nm_mpi_comm(MPI_COMM_WORLD);
  CHECK(world, "nm_mpi_comm(MPI_COMM_WORLD)");
  nm_mcast_service_t svc = nm_mcast_init(world); /* every rank, before any broadcast */
  CHECK(svc, "nm_mcast_init");
  /* pairs (0,1), (2,3)...; an odd last rank only joins the collective parts */
  const int paired = (rank ^ 1) < size;
  nm_session_t s = NULL;
  nm_gate_t g = NULL;
  if (paired) {
    nm_mpi_nmad_dest(&s, &g, MPI_COMM_WORLD, rank ^ 1);
    CHECK(s && g, "nm_mpi_nmad_dest");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  for (int dir = 0; dir < 2; dir++) {
    const int sender = paired && (rank & 1) == dir;
    if (paired)
      test_p2p(s, g, sender);
    if (paired)
      test_unknown(s, g, sender);
    else
      for (int i = 0; i < 7; i++) /* test_unknown's 6 and test_late_monitor's 1 */
        MPI_Barrier(MPI_COMM_WORLD);
    if (paired) {
      test_trunc_cancel(s, g, sender);
      test_late_monitor(s, g, sender);
      test_datatype(s, g, sender);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  if (size % 2 == 0)
    test_comm();
  test_mcast(svc, world);
  test_mcast_p2p_mix(svc, world);
  if (paired)
    test_threads(s, g);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_RC(nm_mcast_finalize(svc), "nm_mcast_finalize");
  if (rank == 0)
    printf("it_newmad: %d ranks ok\n", size);
  MPI_Finalize();
  return 0;
}
