/* Unit tests of the core interface (nmad/core/nm_core_interface.h, issue 15 part 6): what the layers above the
 * core call instead of writing core structures. Requests are filled and validated by the core, sequence numbers
 * taken and given back without holes, the rpc channel's session named and owned by the core, receives cancelled,
 * probes answered, and the read-only accessors agree with the core's state. Runs on the fake driver. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include "fake_driver.h"
#include <nmad/nm_sendrecv.h>
#include <nmad/nm_coll_model.h>
#include <nmad/nm_coll_sched.h>

static nm_core_t core;
static struct fake_drv_s *fake;
static nm_session_t sess;
static uint8_t pkt[4096];

static void setup(void)
{
  core = fake_core_new(4, "aggreg", 1024, &fake);
  ck_assert_ptr_nonnull(core);
  fake->inject = 1;
  ck_assert_int_eq(nm_session_open(core, "iface", &sess), 0);
}
static void teardown(void) { fake_core_free(core); }

static nm_gate_t gate(int r) { return nm_core_gate(core, r); }

/* The sequence number of the only DATA chunk of captured packet i. */
static uint32_t pkt_seq(int i)
{
  struct fake_pkt_s *p = &fake->pkts[i];
  struct nm_wire_pkt_s h;
  struct nm_wire_chunk_s c;
  size_t off = NM_WIRE_PKT_HDR_LEN;
  ck_assert_int_eq(nm_wire_validate(p->buf, p->len, &h), 0);
  ck_assert_int_eq(h.n_chunks, 1);
  ck_assert_int_eq(nm_wire_next_chunk(p->buf, p->len, &off, &c), 0);
  ck_assert_int_eq(c.type, NM_WIRE_DATA);
  return c.seq;
}

static void inject_data(int src, nm_tag_t tag, uint32_t seq, const char *text)
{
  size_t len = fake_data_packet(pkt, (uint32_t)src, sess->id, tag, seq, text, (uint32_t)strlen(text) + 1);
  nm_core_packet(core, &core->drvs[0], pkt, len, (uint64_t)src);
}

START_TEST(test_seq_take_give_back)
{
  nm_seq_t a, b, c;
  ck_assert_int_eq(nm_core_send_seq_take(sess, gate(1), 9, &a), 0);
  ck_assert_int_eq(nm_core_send_seq_take(sess, gate(1), 9, &b), 0);
  ck_assert_uint_eq(a, 0);
  ck_assert_uint_eq(b, 1);
  nm_core_send_seq_give_back(sess, gate(1), 9); /* b was never used: the next send takes it */
  ck_assert_int_eq(nm_core_send_seq_take(sess, gate(2), 9, &c), 0);
  ck_assert_uint_eq(c, 0); /* another gate, another stream */
  nm_sr_request_t r;
  ck_assert_int_eq(nm_sr_isend(sess, gate(1), 9, "x", 2, &r), 0);
  ck_assert_int_eq(nm_sr_swait(sess, &r), 0);
  ck_assert_int_eq(fake->n_pkts, 1);
  ck_assert_uint_eq(pkt_seq(0), 1);
}
END_TEST

START_TEST(test_isend_validated_by_core)
{
  nm_sr_request_t r;
  char buf[8] = "data";
  memset(&r, 0, sizeof(r)); /* never initialised: kind NONE */
  ck_assert_int_eq(nm_core_req_isend(&r, sess, gate(1), 1, NULL, 0, buf, 4, 0), -NM_EINVAL);
  nm_core_req_init(&r, sess, NM_REQ_RECV); /* a receive request cannot send */
  ck_assert_int_eq(nm_core_req_isend(&r, sess, gate(1), 1, NULL, 0, buf, 4, 0), -NM_EINVAL);
  nm_core_req_init(&r, sess, NM_REQ_SEND);
  ck_assert_int_eq(nm_core_req_isend(&r, sess, gate(1), 1, NULL, 0, NULL, 4, 0), -NM_EINVAL); /* len, no buf */
  ck_assert_int_eq(nm_core_req_isend(&r, sess, gate(1), 1, NULL, 3, buf, 4, 0), -NM_EINVAL); /* hdr_len, no hdr */
  ck_assert_int_eq(nm_core_req_isend(&r, sess, gate(1), 1, NULL, 0, buf, 4, 0x80), -NM_EINVAL); /* unknown flag */
  ck_assert_int_eq(r.kind, NM_REQ_SEND); /* refused before NM_CORE_REQ_FRESH could reset it */
  ck_assert_int_eq(nm_core_req_isend(&r, sess, NULL, 1, NULL, 0, buf, 4, 0), -NM_EINVAL);
  ck_assert_int_eq(nm_core_isend(NULL, gate(1), 1, buf, 4, &r), -NM_EINVAL); /* the fast paths check it too */
  ck_assert_int_eq(nm_core_irecv(NULL, gate(1), 1, buf, 4, &r), -NM_EINVAL);
  struct fake_drv_s *fake2;
  nm_core_t other = fake_core_new(4, "aggreg", 1024, &fake2);
  ck_assert_int_eq(nm_core_req_isend(&r, sess, nm_core_gate(other, 1), 1, NULL, 0, buf, 4, 0), -NM_EINVAL);
  fake_core_free(other);
  ck_assert_int_eq(fake->n_pkts, 0); /* nothing of the refused sends left */
  ck_assert_int_eq(nm_core_req_set_prio(&r, 7), 0);
  ck_assert_int_eq(nm_core_req_isend(&r, NULL, gate(1), 1, NULL, 0, buf, 4, 0), 0); /* NULL: the init session */
  ck_assert_int_eq(nm_core_req_set_prio(&r, 9), -NM_EINVAL); /* posted: too late */
  ck_assert_int_eq(nm_core_req_isend(&r, sess, gate(1), 1, NULL, 0, buf, 4, 0), -NM_EINVAL); /* posted twice */
  ck_assert_int_eq(nm_core_req_wait(sess, &r, 0), 0);
  ck_assert_int_eq(fake->n_pkts, 1);
  nm_len_t len = 0;
  ck_assert_int_eq(nm_core_req_size(sess, &r, &len), 0);
  ck_assert_uint_eq(len, 4);
}
END_TEST

START_TEST(test_header_and_body_one_message)
{
  /* rpc's shape: a header and a body go as one message of hdr_len + len bytes, header first */
  nm_sr_request_t s, r;
  char got[16] = {0};
  memset(&s, 0xa5, sizeof(s));
  ck_assert_int_eq(nm_core_req_isend(&s, sess, gate(0), 3, "head", 4, "body", 5, NM_CORE_REQ_FRESH), 0);
  memset(&r, 0xa5, sizeof(r)); /* garbage: NM_CORE_REQ_FRESH resets it first */
  ck_assert_int_eq(nm_core_req_irecv(&r, sess, gate(0), 3, NM_TAG_MASK_FULL, got, sizeof(got), 0x80), -NM_EINVAL);
  ck_assert_int_eq(nm_core_req_irecv(&r, sess, gate(0), 3, NM_TAG_MASK_FULL, got, sizeof(got), NM_CORE_REQ_FRESH), 0);
  ck_assert_int_eq(nm_core_req_wait(sess, &r, 0), 0);
  ck_assert_int_eq(nm_core_req_wait(sess, &s, 0), 0);
  ck_assert_str_eq(got, "headbody");
  nm_len_t len = 0;
  ck_assert_int_eq(nm_core_req_size(sess, &r, &len), 0);
  ck_assert_uint_eq(len, 9);
}
END_TEST

START_TEST(test_recv_matched_accessors_and_cancel)
{
  nm_sr_request_t r, c;
  char b[16];
  nm_gate_t src = NULL;
  nm_tag_t tag = 0;
  nm_core_req_init(&r, sess, NM_REQ_RECV);
  ck_assert_int_eq(nm_core_req_irecv(&r, sess, NM_ANY_GATE, 0x40, 0xf0, b, sizeof(b), 0), 0);
  ck_assert_int_eq(nm_core_req_source(sess, &r, &src), -NM_EAGAIN);
  ck_assert_int_eq(nm_core_req_tag(sess, &r, &tag), -NM_EAGAIN);
  inject_data(2, 0x4a, 0, "hello");
  ck_assert_int_eq(nm_core_req_test(sess, &r), 0);
  ck_assert_int_eq(nm_core_req_source(sess, &r, &src), 0);
  ck_assert_ptr_eq(src, gate(2));
  ck_assert_int_eq(nm_core_req_tag(sess, &r, &tag), 0);
  ck_assert_uint_eq(tag, 0x4a);
  ck_assert_int_eq(nm_core_req_cancel_recv(sess, &r), -NM_EBUSY); /* matched: nothing to cancel */
  nm_core_req_init(&c, sess, NM_REQ_RECV);
  ck_assert_int_eq(nm_core_req_irecv(&c, sess, gate(3), 1, NM_TAG_MASK_FULL, b, sizeof(b), 0), 0);
  ck_assert_int_eq(nm_core_req_cancel_recv(sess, &c), 0);
  ck_assert_int_eq(c.completed, 1);
  ck_assert_int_eq(c.status, -NM_ECANCELED);
  ck_assert_int_eq(nm_core_req_cancel_recv(sess, &c), -NM_EBUSY);
  inject_data(3, 1, 0, "late"); /* the cancelled receive is gone: the message waits as unexpected */
  ck_assert_str_eq(b, "hello");
}
END_TEST

static int monitor_calls;
static void monitor(struct nm_req_s *req, unsigned event, void *ref)
{
  ck_assert_ptr_eq(ref, &monitor_calls);
  ck_assert_uint_eq(event, NM_EVENT_RECV_COMPLETED);
  monitor_calls++;
}

START_TEST(test_monitor_set_by_core)
{
  nm_sr_request_t r;
  char b[16];
  memset(&r, 0, sizeof(r));
  ck_assert_int_eq(nm_core_req_set_monitor(&r, NM_EVENT_RECV_COMPLETED, monitor, &monitor_calls), -NM_EINVAL);
  monitor_calls = 0;
  nm_core_req_init(&r, sess, NM_REQ_RECV);
  ck_assert_int_eq(nm_core_req_irecv(&r, sess, gate(1), 2, NM_TAG_MASK_FULL, b, sizeof(b), 0), 0);
  ck_assert_int_eq(nm_core_req_set_monitor(&r, NM_EVENT_RECV_COMPLETED, monitor, &monitor_calls), 0);
  inject_data(1, 2, 0, "m");
  ck_assert_int_eq(monitor_calls, 1);
  ck_assert_int_eq(nm_core_req_set_monitor(&r, NM_EVENT_RECV_COMPLETED, monitor, &monitor_calls), -NM_EALREADY);
}
END_TEST

START_TEST(test_probe)
{
  nm_gate_t g = NULL;
  nm_tag_t t = 0;
  nm_len_t l = 0;
  ck_assert_int_eq(nm_core_probe(sess, NM_ANY_GATE, 0, NM_TAG_MASK_NONE, 0, &g, &t, &l), -NM_EAGAIN);
  inject_data(3, 0x77, 0, "probe me");
  ck_assert_int_eq(nm_core_probe(sess, gate(1), 0x77, NM_TAG_MASK_FULL, 0, &g, &t, &l), -NM_EAGAIN);
  ck_assert_int_eq(nm_core_probe(sess, NM_ANY_GATE, 0x70, 0xf0, 0, &g, &t, &l), 0);
  ck_assert_ptr_eq(g, gate(3));
  ck_assert_uint_eq(t, 0x77);
  ck_assert_uint_eq(l, 9);
  nm_gate_fail(gate(2), -NM_ECLOSED); /* a blocking probe on a failed gate returns its error, never hangs */
  ck_assert_int_eq(nm_core_probe(sess, gate(2), 1, NM_TAG_MASK_FULL, 1, NULL, NULL, NULL), -NM_ECLOSED);
}
END_TEST

START_TEST(test_readers)
{
  ck_assert_int_eq(nm_core_get_rank(core), 0);
  ck_assert_int_eq(nm_core_get_size(core), 4);
  ck_assert_ptr_eq(nm_gate_get_core(gate(3)), core);
  ck_assert_int_eq(nm_gate_get_rank(gate(3)), 3);
  ck_assert_int_eq(nm_gate_get_status(gate(3)), 0);
  nm_gate_fail(gate(3), -NM_ECLOSED);
  ck_assert_int_eq(nm_gate_get_status(gate(3)), -NM_ECLOSED);
  ck_assert_uint_eq(nm_core_rdv_threshold(core), 1024);
  /* the fake rail does not pull: every rendezvous waits for its RTR; a pulling one (sm's get rendezvous) takes
   * the chunk's worth without (the default chunk, 4 MiB, when NMAD_RDV_CHUNK is unset) */
  ck_assert_uint_eq(nm_core_rdv_pull_upto(core), 1024);
  core->drvs[0].props.flags |= NM_DRV_F_RDV_GET;
  ck_assert_uint_eq(nm_core_rdv_pull_upto(core), nm_core_rdv_chunk(core));
  core->drvs[0].props.flags &= ~NM_DRV_F_RDV_GET;
}
END_TEST

/* A rail whose sends above the inject size are the provider's own rendezvous (libfabric's shm): messages above
 * what the cut takes go by rendezvous, unless the user chose the threshold or the host is oversubscribed. */
START_TEST(test_eager_inject_only_threshold)
{
  unsetenv("NMAD_RDV_THRESHOLD");
  unsetenv("NMAD_EAGER_FRAG_MAX");
  core->drvs[0].props.inject_size = 4096;
  ck_assert_int_eq(nm_core_configure(core, 0, 0), 0);
  ck_assert_uint_eq(nm_core_rdv_threshold(core), 32 * 1024); /* an ordinary rail: the default */
  core->drvs[0].props.flags |= NM_DRV_F_EAGER_INJECT_ONLY;
  ck_assert_int_eq(nm_core_configure(core, 0, 0), 0);
  ck_assert_uint_eq(nm_core_rdv_threshold(core), 3 * 4096); /* the cut's default reach: 3 inject sizes */
  ck_assert_uint_eq(nm_core_rdv_pull_upto(core), 3 * 4096);
  setenv("NMAD_EAGER_FRAG_MAX", "0", 1); /* never cut: what one packet of the inject size holds */
  ck_assert_int_eq(nm_core_configure(core, 0, 0), 0);
  ck_assert_uint_eq(nm_core_rdv_threshold(core), 4096 - NM_WIRE_PKT_HDR_LEN - NM_WIRE_MSG_HDR_LEN);
  setenv("NMAD_EAGER_FRAG_MAX", "20K", 1);
  ck_assert_int_eq(nm_core_configure(core, 0, 0), 0);
  ck_assert_uint_eq(nm_core_rdv_threshold(core), 20 * 1024);
  unsetenv("NMAD_EAGER_FRAG_MAX");
  core->drvs[0].props.flags &= ~NM_DRV_F_EAGER_INJECT_ONLY;
  ck_assert_int_eq(nm_core_configure(core, 1, 0), 0);
  nm_len_t oversub = nm_core_rdv_threshold(core);
  ck_assert_uint_gt(oversub, 32 * 1024);
  core->drvs[0].props.flags |= NM_DRV_F_EAGER_INJECT_ONLY;
  ck_assert_int_eq(nm_core_configure(core, 1, 0), 0); /* oversubscribed: its own default stands */
  ck_assert_uint_eq(nm_core_rdv_threshold(core), oversub);
  setenv("NMAD_RDV_THRESHOLD", "32K", 1); /* the user's choice stands */
  ck_assert_int_eq(nm_core_configure(core, 0, 0), 0);
  ck_assert_uint_eq(nm_core_rdv_threshold(core), 32 * 1024);
  unsetenv("NMAD_RDV_THRESHOLD");
  core->drvs[0].props.inject_size = 512; /* too little to cut into (NM_FRAG_MIN_INJECT): no cap */
  ck_assert_int_eq(nm_core_configure(core, 0, 0), 0);
  ck_assert_uint_eq(nm_core_rdv_threshold(core), 32 * 1024);
}
END_TEST

static int closed;
static void channel_close(void *rpc) { *(int *)rpc += 1; }

/* A job with more ranks than cores (nm_core_configure()'s job_oversubscribed): the latency the collectives' model
 * reads grows by NMAD_OVERSUB_HOP_US; a job that is not, or a host-only view, leaves it alone. */
START_TEST(test_oversub_hop_latency)
{
  uint32_t base, lat;
  core->drvs[0].props.latency_ns = 300; /* the fake rail's nominal figures, as the sm driver's */
  core->drvs[0].props.bandwidth_MBps = 10000;
  ck_assert_int_eq(nm_core_configure(core, 0, 0), 0);
  ck_assert_int_eq(nm_core_network_logp(core, &base, NULL, NULL, NULL, NULL), 0);
  setenv("NMAD_OVERSUB_HOP_US", "7", 1);
  ck_assert_int_eq(nm_core_configure(core, 1, 0), 0); /* this host only: the model must not change */
  ck_assert_int_eq(nm_core_network_logp(core, &lat, NULL, NULL, NULL, NULL), 0);
  ck_assert_uint_eq(lat, base);
  ck_assert_uint_eq(base, 300);
  ck_assert_int_eq(nm_core_configure(core, 1, 1), 0);
  ck_assert_int_eq(nm_core_network_logp(core, &lat, NULL, NULL, NULL, NULL), 0);
  ck_assert_uint_eq(lat, base + 7000);
  setenv("NMAD_OVERSUB_HOP_US", "-3", 1);
  ck_assert_int_eq(nm_core_configure(core, 1, 1), -NM_EINVAL);
  unsetenv("NMAD_OVERSUB_HOP_US");
}
END_TEST

/* An oversubscribed job broadcasts flat (collectives/bcast_auto.c: measured fastest with more ranks than cores);
 * one rank per core keeps the model's choice (not flat for 1 MiB among 8); a forced algorithm stays forced. */
START_TEST(test_oversub_bcast_flat)
{
  struct nm_coll_bcast_choice_s c;
  core->drvs[0].props.latency_ns = 300;
  core->drvs[0].props.bandwidth_MBps = 10000;
  unsetenv("NMAD_BCAST_ALGO");
  ck_assert_int_eq(nm_core_configure(core, 0, 0), 0);
  ck_assert_int_eq(nm_core_job_oversubscribed(core), 0);
  ck_assert_int_eq(nm_coll_bcast_auto(sess, 8, 1 << 20, &c), 0);
  ck_assert_int_ne(c.algo, NM_COLL_BCAST_FLAT);
  ck_assert_int_eq(nm_core_configure(core, 1, 1), 0);
  ck_assert_int_eq(nm_core_job_oversubscribed(core), 1);
  ck_assert_int_eq(nm_coll_bcast_auto(sess, 8, 1 << 20, &c), 0);
  ck_assert_int_eq(c.algo, NM_COLL_BCAST_FLAT);
  ck_assert_int_eq(c.hierarchical, 0);
  ck_assert(c.predicted_s > 0);
  setenv("NMAD_BCAST_ALGO", "binomial", 1);
  ck_assert_int_eq(nm_coll_bcast_auto(sess, 8, 1 << 20, &c), 0);
  ck_assert_int_eq(c.algo, NM_COLL_BCAST_BINOMIAL);
  unsetenv("NMAD_BCAST_ALGO");
  ck_assert_int_eq(nm_core_configure(core, 0, 0), 0);
}
END_TEST

/* Oversubscribed over a network driver (tcp's nominal 5.5 us): flat up to 512 KiB, split-binary up to 2 MiB, the
 * model's choice above (collectives/bcast_auto.c); shared memory's latency keeps flat at every size. */
START_TEST(test_oversub_bcast_net)
{
  struct nm_coll_bcast_choice_s c, model;
  core->drvs[0].props.latency_ns = 5500;
  core->drvs[0].props.bandwidth_MBps = 3100;
  unsetenv("NMAD_BCAST_ALGO");
  ck_assert_int_eq(nm_core_configure(core, 1, 1), 0);
  const nm_len_t flat_len[] = {8, 65536, NM_COLL_BCAST_OVERSUB_FLAT_UPTO};
  for (int i = 0; i < 3; i++) {
    ck_assert_int_eq(nm_coll_bcast_auto(sess, 4, flat_len[i], &c), 0);
    ck_assert_int_eq(c.algo, NM_COLL_BCAST_FLAT);
  }
  const nm_len_t split_len[] = {NM_COLL_BCAST_OVERSUB_FLAT_UPTO + 1, 1 << 20, NM_COLL_BCAST_OVERSUB_SPLIT_UPTO};
  for (int i = 0; i < 3; i++) {
    ck_assert_int_eq(nm_coll_bcast_auto(sess, 8, split_len[i], &c), 0);
    ck_assert_int_eq(c.algo, NM_COLL_BCAST_SPLIT_BINARY);
    ck_assert_int_eq(c.hierarchical, 0);
    ck_assert(c.predicted_s > 0);
  }
  uint32_t lat, o, g, g_free;
  uint64_t bw;
  struct nm_coll_model_net_s net;
  ck_assert_int_eq(nm_core_network_logp(core, &lat, &o, &g, &g_free, &bw), 0);
  nm_coll_model_logp(lat, o, g, g_free, (uint32_t)bw, &net);
  ck_assert_int_eq(nm_coll_bcast_choose_logp(4, 4u << 20, &net, &model), 0);
  ck_assert_int_eq(nm_coll_bcast_auto(sess, 4, 4u << 20, &c), 0);
  ck_assert_int_eq(c.algo, model.algo);
  ck_assert_int_ne(c.algo, NM_COLL_BCAST_FLAT);
  core->drvs[0].props.latency_ns = 300; /* shared memory: flat at 1 MiB */
  ck_assert_int_eq(nm_coll_bcast_auto(sess, 4, 1 << 20, &c), 0);
  ck_assert_int_eq(c.algo, NM_COLL_BCAST_FLAT);
  ck_assert_int_eq(nm_core_configure(core, 0, 0), 0);
}
END_TEST

/* The broadcast memo (nm_coll_bcast_auto_opts()): the model's choice is stored per (members, length) and served
 * from the memo afterwards (an entry planted with another algorithm comes back), not for another member count;
 * an override is read at every call, neither served from the memo nor stored. */
static struct nm_coll_bcast_memo_entry_s *memo_find(struct nm_coll_bcast_memo_s *m, int p, nm_len_t len)
{
  for (int i = 0; i < NM_COLL_BCAST_MEMO; i++)
    if (m->entry[i].p == p && m->entry[i].len == len)
      return &m->entry[i];
  return NULL;
}

START_TEST(test_bcast_memo)
{
  struct nm_coll_bcast_memo_s memo;
  memset(&memo, 0, sizeof(memo));
  struct nm_coll_bcast_choice_s c;
  struct nm_coll_bcast_opts_s model, o;
  unsetenv("NMAD_BCAST_ALGO");
  ck_assert_int_eq(nm_coll_bcast_auto(sess, 8, 1024, &c), 0);
  nm_coll_bcast_opts_of_choice(&c, &model);
  ck_assert_ptr_null(memo_find(&memo, 8, 1024));
  ck_assert_int_eq(nm_coll_bcast_auto_opts(sess, &memo, 8, 1024, &o), 0);
  ck_assert_int_eq(o.algo, model.algo);
  ck_assert_int_eq(o.groups, model.groups);
  struct nm_coll_bcast_memo_entry_s *e = memo_find(&memo, 8, 1024);
  ck_assert_ptr_nonnull(e);
  /* served from the memo: a planted entry wins over the model */
  enum nm_coll_bcast_algo_e other = model.algo == NM_COLL_BCAST_CHAIN ? NM_COLL_BCAST_BINARY : NM_COLL_BCAST_CHAIN;
  e->opts.algo = other;
  ck_assert_int_eq(nm_coll_bcast_auto_opts(sess, &memo, 8, 1024, &o), 0);
  ck_assert_int_eq(o.algo, other);
  /* an override: read now, the memo neither used nor written */
  setenv("NMAD_BCAST_ALGO", "scatter_rd", 1);
  ck_assert_int_eq(nm_coll_bcast_auto_opts(sess, &memo, 8, 1024, &o), 0);
  ck_assert_int_eq(o.algo, NM_COLL_BCAST_SCATTER_RD);
  ck_assert_int_eq(e->opts.algo, other);
  setenv("NMAD_BCAST_ALGO", "no_such_algo", 1);
  ck_assert_int_eq(nm_coll_bcast_auto_opts(sess, &memo, 8, 1024, &o), -NM_EINVAL);
  unsetenv("NMAD_BCAST_ALGO");
  /* the same length among 16 members is another choice: the entry is not served, and is replaced */
  ck_assert_int_eq(nm_coll_bcast_auto(sess, 16, 1024, &c), 0);
  ck_assert_int_eq(nm_coll_bcast_auto_opts(sess, &memo, 16, 1024, &o), 0);
  ck_assert_int_eq(o.algo, c.algo);
  ck_assert_ptr_nonnull(memo_find(&memo, 16, 1024));
  /* no memo: the model at every call */
  ck_assert_int_eq(nm_coll_bcast_auto_opts(sess, NULL, 8, 1024, &o), 0);
  ck_assert_int_eq(o.algo, model.algo);
  ck_assert_int_eq(nm_coll_bcast_auto_opts(sess, &memo, 8, 1024, NULL), -NM_EINVAL);
}
END_TEST

/* A flat broadcast's receiver spins before it yields on an oversubscribed job (collectives/bcast_classic.c,
 * nm_bc_flat_spin_ns()): the schedule's hint is 2 (p - 1) times the sender's overhead for an eager message, none
 * at the root, above the rendezvous threshold (raised on an oversubscribed job: nm_core_rdv_threshold()), one rank
 * per core, or another algorithm. */
static nm_gate_t member_gate(void *ref, int m) { return nm_core_gate((nm_core_t)ref, m); }

static uint64_t flat_spin(int self, int root, nm_len_t len, enum nm_coll_bcast_algo_e algo)
{
  static char buf[1 << 17];
  struct nm_coll_group_s g = {4, member_gate, core, NULL, NULL};
  struct nm_coll_bcast_opts_s o = {algo, 0, 1, algo, 0};
  nm_coll_sched_t *s = nm_coll_sched_new(sess, 77);
  ck_assert_ptr_nonnull(s);
  int next = 0;
  ck_assert_int_eq(nm_coll_bcast_build(s, 0, &g, self, root, buf, len, &o, &next), 0);
  uint64_t ns = nm_coll_sched_spin(s);
  nm_coll_sched_destroy(s);
  return ns;
}

/* Rounds of a 64 B broadcast from member 0 of 4 built for member 0 by the automatic choice, or the error. */
static int bcast_rounds(const struct nm_coll_overrides_s *o)
{
  static char buf[64];
  struct nm_coll_group_s g = {4, member_gate, core, NULL, o};
  nm_coll_sched_t *s = nm_coll_sched_new(sess, 78);
  ck_assert_ptr_nonnull(s);
  int next = -1, err = nm_coll_bcast_build(s, 0, &g, 0, 0, buf, sizeof(buf), NULL, &next);
  nm_coll_sched_destroy(s);
  return err ? err : next;
}

/* NMAD_BCAST_ALGO is one of the overrides a group may carry (the MPI shim's, read at MPI_Init): then the value
 * read counts, whatever the environment says at the call; without them the environment is read at the call. */
START_TEST(test_bcast_overrides)
{
  struct nm_coll_overrides_s o;
  setenv("NMAD_BCAST_ALGO", "flat", 1);
  nm_coll_overrides_read(&o);
  setenv("NMAD_BCAST_ALGO", "binomial", 1);
  ck_assert_str_eq(o.value[NM_COLL_FAMILY_BCAST], "flat");
  ck_assert_int_eq(bcast_rounds(&o), 1);   /* flat: the root sends to all in one round */
  ck_assert_int_eq(bcast_rounds(NULL), 2); /* binomial, the environment now: log2(4) rounds at the root */
  setenv("NMAD_BCAST_ALGO", "no_such_algo", 1);
  ck_assert_int_eq(bcast_rounds(&o), 1);
  ck_assert_int_eq(bcast_rounds(NULL), -NM_EINVAL);
  unsetenv("NMAD_BCAST_ALGO");
  struct nm_coll_bcast_opts_s opts;
  ck_assert_int_eq(nm_coll_bcast_auto_opts_env(sess, NULL, 4, 64, "chain", &opts), 0);
  ck_assert_int_eq(opts.algo, NM_COLL_BCAST_CHAIN);
  ck_assert_int_eq(nm_coll_bcast_auto_opts_env(sess, NULL, 4, 64, "no_such_algo", &opts), -NM_EINVAL);
}
END_TEST

START_TEST(test_flat_bcast_receiver_spin)
{
  core->drvs[0].props.latency_ns = 300;
  core->drvs[0].props.overhead_ns = 150;
  core->drvs[0].props.bandwidth_MBps = 10000;
  ck_assert_int_eq(nm_core_configure(core, 1, 1), 0);
  ck_assert_int_eq(nm_core_job_oversubscribed(core), 1);
  ck_assert_uint_eq(flat_spin(0, 1, 8, NM_COLL_BCAST_FLAT), 2 * 3 * 150);
  const nm_len_t eager = nm_core_rdv_threshold(core);
  ck_assert_uint_ge(eager, 1024);
  ck_assert_uint_lt(eager, 1 << 17); /* flat_spin()'s buffer */
  ck_assert_uint_eq(flat_spin(0, 1, eager, NM_COLL_BCAST_FLAT), 2 * 3 * 150);
  ck_assert_uint_eq(flat_spin(0, 1, eager + 1, NM_COLL_BCAST_FLAT), 0);
  ck_assert_uint_eq(flat_spin(0, 0, 8, NM_COLL_BCAST_FLAT), 0);
  ck_assert_uint_eq(flat_spin(0, 1, 8, NM_COLL_BCAST_BINOMIAL), 0);
  ck_assert_int_eq(nm_core_configure(core, 0, 0), 0);
  ck_assert_uint_eq(flat_spin(0, 1, 8, NM_COLL_BCAST_FLAT), 0);
}
END_TEST

START_TEST(test_session_child)
{
  nm_session_t child, again;
  ck_assert_ptr_null(nm_core_session_get_rpc(sess));
  ck_assert_int_eq(nm_core_session_open_child(sess, "/rpc", &child), 0);
  ck_assert_int_eq(nm_session_open(core, "iface/rpc", &again), -NM_EALREADY); /* the name is owner + suffix */
  ck_assert_ptr_eq(child->owner, sess);
  closed = 0;
  nm_core_session_set_rpc(sess, &closed, channel_close);
  ck_assert_ptr_eq(nm_core_session_get_rpc(sess), &closed);
  ck_assert_int_eq(nm_session_close(sess), 0);
  ck_assert_int_eq(closed, 1); /* the owner's close released the layer's channel */
  nm_session_close(child);
  char name[NM_SESSION_NAME_MAX];
  memset(name, 'n', sizeof(name) - 1);
  name[sizeof(name) - 1] = 0;
  name[sizeof(name) - 4] = 0; /* 60 bytes: "<name>/rpc" would be 64 */
  ck_assert_int_eq(nm_session_open(core, name, &sess), 0);
  ck_assert_int_eq(nm_core_session_open_child(sess, "/rpc", &child), -NM_EINVAL);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("iface");
  TCase *t = tcase_create("core interface");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_add_test(t, test_seq_take_give_back);
  tcase_add_test(t, test_isend_validated_by_core);
  tcase_add_test(t, test_header_and_body_one_message);
  tcase_add_test(t, test_recv_matched_accessors_and_cancel);
  tcase_add_test(t, test_monitor_set_by_core);
  tcase_add_test(t, test_probe);
  tcase_add_test(t, test_readers);
  tcase_add_test(t, test_session_child);
  tcase_add_test(t, test_oversub_hop_latency);
  tcase_add_test(t, test_eager_inject_only_threshold);
  tcase_add_test(t, test_oversub_bcast_flat);
  tcase_add_test(t, test_oversub_bcast_net);
  tcase_add_test(t, test_bcast_memo);
  tcase_add_test(t, test_flat_bcast_receiver_spin);
  tcase_add_test(t, test_bcast_overrides);
  suite_add_tcase(s, t);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
