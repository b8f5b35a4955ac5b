/* A process outside the job that writes to a rank's endpoint (tests/doors-run.sh, doc/reliability.md): plain
 * libfabric on the job's provider, aimed at the address the rank published. It sends well-formed nmad packets,
 * each a DATA chunk on the job's session and tag that claims to come from rank 1:
 *   N with another job's key (a stray client or a process of another job: refused as foreign),
 *   N with the job's own key, read from the rank's environment (a forged source: the provider names the sender
 *     FI_ADDR_NOTAVAIL, so the rank refuses it as from an unknown source),
 *   1 that is not an nmad packet at all (foreign).
 * Usage: it_doors_intruder PROVIDER ADDR_HEX KEY_HEX SESSION TAG N. Exits 0 once every send completed. */
#include "nmad/core/nm_wire.h"
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_SENDS 256

struct intruder_s {
  struct fi_info *info;
  struct fid_fabric *fabric;
  struct fid_domain *domain;
  struct fid_ep *ep;
  struct fid_av *av;
  struct fid_cq *cq;
  fi_addr_t victim;
  uint8_t pkts[MAX_SENDS][128];
  struct fi_context2 ctx[MAX_SENDS];
};

static void die(const char *what, long rc)
{
  fprintf(stderr, "it_doors_intruder: %s: %s\n", what, rc < 0 ? fi_strerror((int)-rc) : "failed");
  exit(1);
}

/* The same endpoint kind as the job's: FI_EP_RDM on the provider, on loopback where the job listens. */
static void open_ep(struct intruder_s *x, const char *prov)
{
  /* Another nmad job's endpoint has the parameters nm_ofi_quirks.c gives it: ofi_rxm refuses a connection whose
   * eager limit differs from its own, which would stop this intruder before it reaches nmad's doors. */
  setenv("FI_OFI_RXM_EAGER_LIMIT", "1048576", 0);
  struct fi_info *h = fi_allocinfo();
  h->caps = FI_MSG;
  h->mode = FI_CONTEXT | FI_CONTEXT2;
  h->ep_attr->type = FI_EP_RDM;
  h->domain_attr->av_type = FI_AV_TABLE;
  h->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
  h->fabric_attr->prov_name = strdup(prov);
  h->addr_format = FI_SOCKADDR_IN;
  long rc = fi_getinfo(FI_VERSION(1, 11), "127.0.0.1", NULL, FI_SOURCE, h, &x->info);
  fi_freeinfo(h);
  if (rc)
    die("fi_getinfo", rc);
  struct fi_cq_attr ca = {.format = FI_CQ_FORMAT_CONTEXT, .size = 2 * MAX_SENDS};
  struct fi_av_attr aa = {.type = FI_AV_TABLE};
  if ((rc = fi_fabric(x->info->fabric_attr, &x->fabric, NULL)) || (rc = fi_domain(x->fabric, x->info, &x->domain, NULL)) ||
      (rc = fi_cq_open(x->domain, &ca, &x->cq, NULL)) || (rc = fi_av_open(x->domain, &aa, &x->av, NULL)) ||
      (rc = fi_endpoint(x->domain, x->info, &x->ep, NULL)) ||
      (rc = fi_ep_bind(x->ep, &x->cq->fid, FI_TRANSMIT | FI_RECV)) || (rc = fi_ep_bind(x->ep, &x->av->fid, 0)) ||
      (rc = fi_enable(x->ep)))
    die("opening the endpoint", rc);
}

static size_t unhex(const char *s, uint8_t *out, size_t cap)
{
  size_t n = 0;
  unsigned v;
  while (n < cap && sscanf(s + 2 * n, "%2x", &v) == 1)
    out[n++] = (uint8_t)v;
  return n;
}

/* One DATA chunk "EVIL" on (session, tag), sequence 0, claiming rank 1, under job key @p key. */
static size_t evil_packet(uint8_t *buf, uint32_t session, uint64_t tag, uint64_t key)
{
  size_t off = NM_WIRE_PKT_HDR_LEN;
  off += nm_wire_put_data_hdr(buf + off, session, tag, 0, 5, 0, 0, 0);
  memcpy(buf + off, "EVIL", 5);
  off += 5;
  nm_wire_put_pkt_hdr_key(buf, 1, 1, (uint32_t)off, key);
  return off;
}

/* Count the completed sends; a send in error ends the test. */
static int reap(struct intruder_s *x)
{
  struct fi_cq_entry e[16];
  ssize_t rc = fi_cq_read(x->cq, e, 16); /* also drives the provider's progress (connection set-up) */
  if (rc > 0)
    return (int)rc;
  if (rc == -FI_EAVAIL) {
    struct fi_cq_err_entry err = {0};
    fi_cq_readerr(x->cq, &err, 0);
    die("a send", -err.err);
  }
  usleep(1000);
  return 0;
}

static void send_all(struct intruder_s *x, size_t *lens, int n)
{
  int done = 0;
  time_t end = time(NULL) + 30;
  for (int i = 0; i < n; i++) {
    ssize_t rc;
    while ((rc = fi_send(x->ep, x->pkts[i], lens[i], NULL, x->victim, &x->ctx[i])) == -FI_EAGAIN &&
           time(NULL) < end)
      done += reap(x);
    if (rc)
      die("fi_send", rc);
  }
  while (done < n && time(NULL) < end)
    done += reap(x);
  if (done < n)
    die("sends not completed after 30 s", 0);
}

int main(int argc, char **argv)
{
  if (argc != 7) {
    fprintf(stderr, "usage: it_doors_intruder PROVIDER ADDR_HEX KEY_HEX SESSION TAG N\n");
    return 2;
  }
  static struct intruder_s x;
  uint8_t addr[256];
  size_t alen = unhex(argv[2], addr, sizeof(addr));
  uint64_t key = strtoull(argv[3], NULL, 16);
  uint32_t session = (uint32_t)strtoul(argv[4], NULL, 0);
  uint64_t tag = strtoull(argv[5], NULL, 0);
  int n = atoi(argv[6]);
  if (alen == 0 || n < 1 || 2 * n + 1 > MAX_SENDS)
    die("bad arguments", 0);
  open_ep(&x, argv[1]);
  if (fi_av_insert(x.av, addr, 1, &x.victim, 0, NULL) != 1)
    die("fi_av_insert", 0);
  size_t lens[MAX_SENDS];
  int k = 0;
  for (; k < n; k++) /* another job's key */
    lens[k] = evil_packet(x.pkts[k], session, tag, key ^ 0x5a5a5a5a5a5a5a5aULL);
  for (; k < 2 * n; k++) /* the job's key, forged source */
    lens[k] = evil_packet(x.pkts[k], session, tag, key);
  lens[k] = 8;
  memcpy(x.pkts[k++], "not nmad", 8);
  send_all(&x, lens, k);
  printf("it_doors_intruder: %d packets with another key, %d with the job's key and a forged source, 1 not nmad: all "
         "sent\n", n, n);
  fi_close(&x.ep->fid);
  fi_close(&x.av->fid);
  fi_close(&x.cq->fid);
  fi_close(&x.domain->fid);
  fi_close(&x.fabric->fid);
  fi_freeinfo(x.info);
  return 0;
}
