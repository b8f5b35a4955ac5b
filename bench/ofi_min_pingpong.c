/**
 * @file ofi_min_pingpong.c
 * @brief The least a libfabric ping-pong can do, used as nmad's ofi driver uses libfabric (FI_EP_RDM, AV table,
 *        manual progress, FI_CONTEXT2, tagged completions, untagged packets into NRECV pre-posted buffers of 64 KiB
 *        re-posted at the next poll, fi_inject up to the inject size, optionally FI_SOURCE with fi_cq_readfrom), and
 *        nothing else: what separates it from nmad over the same provider is nmad's own path, what separates it
 *        from `fi_pingpong` is that program's loop (doc/performance.md, "Rendezvous above the cut over libfabric's
 *        shm; issue 15's lines on another VM").
 *
 * Build and run (not built by make):
 *   gcc -O2 -I bench bench/ofi_min_pingpong.c bench/bench_common.c -lfabric -o /tmp/ofi_min_pingpong
 *   /tmp/ofi_min_pingpong [SIZE [ITERS [NRECV [SOURCE]]]]   # defaults 8 100000 64 1, provider shm
 * The echo side is a forked child bound to die with its parent (and after 120 s in any case). Prints the median
 * one-way latency (round trip / 2) of ITERS timed round trips after 1,000 warm-up ones, the clock read while the
 * message travels, as nm_bench_pingpong does.
 */
#define _GNU_SOURCE
#include "bench_common.h"
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define WARMUP 1000
#define BUF_LEN (64 * 1024)
#define NAME_LEN 256

struct pp {
  struct fid_fabric *fabric;
  struct fid_domain *domain;
  struct fid_ep *ep;
  struct fid_av *av;
  struct fid_cq *cq;
  fi_addr_t peer;
  int source, nrecv, repost; /* repost: the buffer consumed by the last receive, or -1 */
  size_t inject;             /* the provider's inject size: packets up to it go by fi_inject */
  char *bufs;
  struct fi_context2 *ctx; /* nrecv receive contexts, then the send's */
};

static void die(const char *what, long rc)
{
  fprintf(stderr, "ofi_min_pingpong: %s failed: %s\n", what, fi_strerror((int)-rc));
  exit(1);
}

/* Endpoint named by the caller (shm's default name collides with a dead process's region: nm_ofi_quirks.h). */
static void pp_open(struct pp *p, const char *name)
{
  struct fi_info *hints = fi_allocinfo(), *info;
  hints->caps = FI_MSG | FI_TAGGED | (p->source ? FI_SOURCE : 0);
  hints->mode = FI_CONTEXT | FI_CONTEXT2;
  hints->ep_attr->type = FI_EP_RDM;
  hints->domain_attr->av_type = FI_AV_TABLE;
  hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
  hints->domain_attr->control_progress = FI_PROGRESS_MANUAL;
  hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
  hints->domain_attr->threading = FI_THREAD_DOMAIN;
  hints->fabric_attr->prov_name = strdup("shm");
  long rc = fi_getinfo(FI_VERSION(1, 11), NULL, NULL, 0, hints, &info);
  if (rc)
    die("fi_getinfo", rc);
  free(info->src_addr);
  info->src_addr = strdup(name);
  info->src_addrlen = strlen(name) + 1;
  struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_TAGGED, .size = 1024, .wait_obj = FI_WAIT_NONE};
  struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
  if ((rc = fi_fabric(info->fabric_attr, &p->fabric, NULL)) || (rc = fi_domain(p->fabric, info, &p->domain, NULL)) ||
      (rc = fi_cq_open(p->domain, &cq_attr, &p->cq, NULL)) || (rc = fi_av_open(p->domain, &av_attr, &p->av, NULL)) ||
      (rc = fi_endpoint(p->domain, info, &p->ep, NULL)) || (rc = fi_ep_bind(p->ep, &p->cq->fid, FI_TRANSMIT | FI_RECV)) ||
      (rc = fi_ep_bind(p->ep, &p->av->fid, 0)) || (rc = fi_enable(p->ep)))
    die("opening the endpoint", rc);
  p->inject = info->tx_attr->inject_size;
  fi_freeinfo(info);
  fi_freeinfo(hints);
}

static void pp_post(struct pp *p, int i)
{
  long rc;
  while ((rc = fi_recv(p->ep, p->bufs + (size_t)i * BUF_LEN, BUF_LEN, NULL, FI_ADDR_UNSPEC, &p->ctx[i])) == -FI_EAGAIN)
    fi_cq_read(p->cq, NULL, 0);
  if (rc)
    die("fi_recv", rc);
}

static void pp_send(struct pp *p, const char *buf, size_t len, size_t inject)
{
  long rc;
  while ((rc = len <= inject ? fi_inject(p->ep, buf, len, p->peer)
                             : fi_send(p->ep, buf, len, NULL, p->peer, &p->ctx[p->nrecv])) == -FI_EAGAIN)
    fi_cq_read(p->cq, NULL, 0);
  if (rc)
    die("send", rc);
}

/* Poll until a packet arrives; the buffer it consumed is re-posted at the next call, before the poll (as the ofi
 * driver does: off the path of the reply). */
static void pp_wait(struct pp *p)
{
  struct fi_cq_tagged_entry e[16];
  fi_addr_t src[16];
  for (int got = 0; !got;) {
    if (p->repost >= 0) {
      pp_post(p, p->repost);
      p->repost = -1;
    }
    ssize_t n = p->source ? fi_cq_readfrom(p->cq, e, 16, src) : fi_cq_read(p->cq, e, 16);
    if (n < 0 && n != -FI_EAGAIN)
      die("fi_cq_read", n);
    for (ssize_t i = 0; i < n; i++) {
      struct fi_context2 *c = e[i].op_context;
      if (c != &p->ctx[p->nrecv]) { /* a receive (send completions only free the send's context) */
        got = 1;
        p->repost = (int)(c - p->ctx);
      }
    }
  }
}

int main(int argc, char **argv)
{
  size_t len = argc > 1 ? strtoul(argv[1], NULL, 0) : 8;
  int iters = argc > 2 ? atoi(argv[2]) : 100000;
  struct pp p = {.nrecv = argc > 3 ? atoi(argv[3]) : 64, .source = argc > 4 ? atoi(argv[4]) : 1, .repost = -1};
  if (len > BUF_LEN || iters < 1 || p.nrecv < 1) {
    fprintf(stderr, "usage: %s [SIZE (<= 65536) [ITERS [NRECV [SOURCE 0|1]]]]\n", argv[0]);
    return 2;
  }
  int to_child[2], to_parent[2];
  if (pipe(to_child) || pipe(to_parent))
    return 1;
  pid_t parent = getpid(), child = fork();
  int echo = child == 0;
  if (echo) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
      _exit(1);
    alarm(120);
  }
  char name[NAME_LEN], peer[NAME_LEN];
  snprintf(name, sizeof(name), "ofi_min_pingpong_%d", (int)getpid());
  pp_open(&p, name);
  size_t nlen = sizeof(name);
  char addr[NAME_LEN] = {0};
  long rc = fi_getname(&p.ep->fid, addr, &nlen);
  if (rc)
    die("fi_getname", rc);
  if (write(echo ? to_parent[1] : to_child[1], addr, NAME_LEN) != NAME_LEN ||
      read(echo ? to_child[0] : to_parent[0], peer, NAME_LEN) != NAME_LEN)
    return 1;
  if (fi_av_insert(p.av, peer, 1, &p.peer, 0, NULL) != 1)
    die("fi_av_insert", -FI_EINVAL);
  p.bufs = aligned_alloc(64, (size_t)p.nrecv * BUF_LEN);
  p.ctx = calloc((size_t)p.nrecv + 1, sizeof(*p.ctx));
  char *sbuf = calloc(1, len ? len : 1);
  double *lat = malloc(sizeof(double) * (size_t)iters);
  if (!p.bufs || !p.ctx || !sbuf || !lat)
    return 1;
  memset(p.bufs, 0, (size_t)p.nrecv * BUF_LEN); /* pages touched now, as the driver does */
  for (int i = 0; i < p.nrecv; i++)
    pp_post(&p, i);
  uint64_t t0 = 0;
  for (int i = 0; i < WARMUP + iters + 1; i++) {
    if (echo) {
      pp_wait(&p);
      pp_send(&p, sbuf, len, p.inject);
      continue;
    }
    pp_send(&p, sbuf, len, p.inject);
    uint64_t t1 = bench_now_ns(); /* read while the message travels: from one read to the next is one round trip */
    if (i > WARMUP)
      lat[i - WARMUP - 1] = (double)(t1 - t0) / 2;
    t0 = t1;
    pp_wait(&p);
  }
  if (!echo)
    printf("size %zu, %d posted buffers, FI_SOURCE %s: median one-way %.3f us\n", len, p.nrecv,
           p.source ? "on" : "off", bench_median(lat, iters) / 1e3);
  fi_close(&p.ep->fid); /* removes the endpoint's region from /dev/shm */
  fi_close(&p.av->fid);
  fi_close(&p.cq->fid);
  fi_close(&p.domain->fid);
  fi_close(&p.fabric->fid);
  if (!echo)
    waitpid(child, NULL, 0);
  return 0;
}
