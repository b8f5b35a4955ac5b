/**
 * @file gen_corpus.c
 * @brief Writes the fuzzers' seed corpus (tests/fuzz/corpus/) from real traffic: a core of rank 1 of 8 (fake
 *        driver) sends to rank 0 what a peer really sends (eager and rendezvous messages, a synchronous send, an
 *        rpc, dynamic broadcasts with short and long destination lists, a cancel, and messages cut to a small
 *        inject size: DATA_FRAG), and the packets the fake driver
 *        captured become the seeds: raw for fuzz_wire, as fuzz_incoming records (one per packet, and one
 *        conversation), and nmad-run frames for fuzz_run_proto. The core sends with the fuzz harness's job key
 *        (FAKE_FUZZ_JOB_KEY), so fuzz_incoming's seeds pass its key check.
 * Usage: gen_corpus DIR (DIR/wire, DIR/incoming, DIR/run_proto are created).
 */
#include "nmad/core/nm_core_private.h"
#include "nmad/launcher/nmad_run_proto.h"
#include "tests/fake_driver.h"
#include <nmad/nm_mcast.h>
#include <nmad/nm_rpc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define GEN_JOB 8

static void put_file(const char *dir, const char *name, int i, const void *buf, size_t len)
{
  char path[512];
  snprintf(path, sizeof(path), "%s/%s-%03d", dir, name, i);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(buf, 1, len, f) != len) {
    perror(path);
    exit(1);
  }
  fclose(f);
}

/* One fuzz_incoming record: source 1, length, packet. */
static size_t put_record(uint8_t *out, const uint8_t *pkt, size_t len)
{
  out[0] = 0; /* source 1 (1 + 0 % 7) */
  out[1] = (uint8_t)len;
  out[2] = (uint8_t)(len >> 8);
  memcpy(out + 3, pkt, len);
  return 3 + len;
}

int main(int argc, char **argv)
{
  if (argc != 2) {
    fprintf(stderr, "usage: gen_corpus DIR\n");
    return 2;
  }
  char wire[400], inc[400], rp[400];
  snprintf(wire, sizeof(wire), "%s/wire", argv[1]);
  snprintf(inc, sizeof(inc), "%s/incoming", argv[1]);
  snprintf(rp, sizeof(rp), "%s/run_proto", argv[1]);
  mkdir(argv[1], 0755);
  mkdir(wire, 0755);
  mkdir(inc, 0755);
  mkdir(rp, 0755);

  static uint8_t conv[1 << 20];
  size_t clen = 0;
  int seeds = 0;
  for (int lists = 0; lists < 2; lists++) { /* subtree lists in the header, then as LIST messages */
    struct fake_drv_s *fake;
    /* one chunk per packet, then aggregated packets */
    nm_core_t core = fake_core_new_rank(1, GEN_JOB, lists ? "aggreg" : "default", 1024, &fake);
    if (core)
      nm_core_set_job_key(core, FAKE_FUZZ_JOB_KEY);
    nm_session_t s;
    nm_mcast_service_t mc;
    struct nm_mcast_params_s p = {.field_mask = lists ? NM_MCAST_PARAM_MAX_INLINE : 0, .max_inline = 0};
    if (!core || nm_session_open(core, "fuzz", &s) || nm_mcast_init_params(s, &p, &mc))
      return 1;
    nm_gate_t to0 = nm_core_gate(core, 0);
    static uint8_t data[8192];
    for (size_t i = 0; i < sizeof(data); i++)
      data[i] = (uint8_t)(i * 7);
    static nm_sr_request_t r[5];
    nm_sr_isend(s, to0, 1, data, 8, &r[0]);    /* eager, tag of a posted receive */
    nm_sr_isend(s, to0, 2, data, 1000, &r[1]); /* eager, the other one */
    nm_sr_isend(s, to0, 1, data, 5000, &r[2]); /* rendezvous (threshold 1024) */
    nm_sr_issend(s, to0, 3, data, 16, &r[3]); /* synchronous: unexpected at the receiver */
    nm_sr_isend(s, to0, 4, data, 100, &r[4]);
    nm_sr_scancel(s, &r[4]); /* a CANCEL chunk */
    static uint8_t hdr[24] = "fuzz-rpc-header";
    static nm_rpc_req_t rq;
    memset(&rq, 0, sizeof(rq));
    nm_rpc_isend(s, to0, (nm_tag_t)0x46555a5a, hdr, sizeof(hdr), data, 300, &rq);
    int dests[GEN_JOB - 1], prios[GEN_JOB - 1], n = 0;
    for (int d = 0; d < GEN_JOB; d++)
      if (d != 1) {
        dests[n] = d;
        prios[n] = n % 3;
        n++;
      }
    static nm_mcast_req_t m1, m2;
    nm_mcast_isend(mc, dests, prios, n, 5, data, 64, NM_MCAST_TREE_CHAIN, &m1); /* rank 0 first, with priority */
    nm_mcast_isend(mc, dests, NULL, n, 6, data, 3000, NM_MCAST_TREE_CHAIN, &m2); /* rendezvous data */
    for (int k = 0; k < 8; k++) {
      fake_complete_sends(core, fake);
      nm_core_progress(core);
    }
    for (int i = 0; i < fake->n_pkts; i++) {
      struct fake_pkt_s *pk = &fake->pkts[i];
      if (pk->peer != 0)
        continue; /* what rank 0 receives */
      static uint8_t rec[70003];
      put_file(wire, "pkt", seeds, pk->buf, pk->len);
      put_file(inc, "pkt", seeds, rec, put_record(rec, pk->buf, pk->len));
      if (clen + 3 + pk->len <= sizeof(conv))
        clen += put_record(conv + clen, pk->buf, pk->len);
      seeds++;
    }
    NM_CORE_FOR_GATES(core, g)
      nm_gate_fail(g, -NM_ECLOSED); /* the sends still waiting for rank 0's answers complete in error */
    nm_mcast_finalize(mc);
    fake_core_free(core);
  }
  { /* eager messages cut to the inject size (DATA_FRAG): a rail injecting 1 KiB, a synchronous send whose first
     * piece carries the cookie, and an rpc whose header spans two pieces */
    struct fake_drv_s *fake;
    nm_core_t core = fake_core_new_rank(1, GEN_JOB, "aggreg", 4096, &fake);
    nm_session_t s;
    if (!core || nm_session_open(core, "fuzz", &s))
      return 1;
    nm_core_set_job_key(core, FAKE_FUZZ_JOB_KEY);
    core->drvs[0].props.inject_size = 1024;
    core->cfg.frag_max = 1 << 20;
    nm_gate_t to0 = nm_core_gate(core, 0);
    static uint8_t data[3000], hdr[1100];
    for (size_t i = 0; i < sizeof(data); i++)
      data[i] = (uint8_t)(i * 13);
    static nm_sr_request_t r;
    static nm_rpc_req_t rq;
    memset(&rq, 0, sizeof(rq));
    nm_sr_issend(s, to0, 7, data, 2500, &r);
    nm_rpc_isend(s, to0, (nm_tag_t)0x46555a5a, hdr, sizeof(hdr), data, 500, &rq);
    for (int k = 0; k < 8; k++)
      nm_core_progress(core);
    for (int i = 0; i < fake->n_pkts; i++) {
      struct fake_pkt_s *pk = &fake->pkts[i];
      static uint8_t rec[70003];
      put_file(wire, "frag", seeds, pk->buf, pk->len);
      put_file(inc, "frag", seeds, rec, put_record(rec, pk->buf, pk->len));
      if (clen + 3 + pk->len <= sizeof(conv))
        clen += put_record(conv + clen, pk->buf, pk->len);
      seeds++;
    }
    NM_CORE_FOR_GATES(core, g)
      nm_gate_fail(g, -NM_ECLOSED);
    fake_core_free(core);
  }
  put_file(inc, "conversation", 0, conv, clen);
  /* nmad-run frames: each type, and an allgather with its payload. */
  uint8_t frame[NMAD_RUN_HDR_SIZE + 16];
  for (uint32_t t = 1; t <= 4; t++) {
    nmad_run_hdr_encode(frame, t, 3, t == 1 ? 16 : 0);
    memset(frame + NMAD_RUN_HDR_SIZE, (int)t, 16);
    put_file(rp, "frame", (int)t, frame, NMAD_RUN_HDR_SIZE + (t == 1 ? 16 : 0));
  }
  printf("gen_corpus: %d packets to rank 0 (wire, incoming), 1 conversation of %zu bytes, 4 nmad-run frames\n",
         seeds, clen);
  return 0;
}
