/**
 * @file nm_sim.cpp
 * @brief The simulation driver: nmad's driver ops over SimGrid's s4u communications (issue 13, DESIGN.md
 *        "Drivers"). Linked into nmad-sim only (libnmad does not depend on SimGrid).
 *
 * Every rank is a SimGrid actor; rank r receives everything in its mailbox, of which it is the permanent receiver,
 * so that a transfer flows as soon as it is posted and several flows to one rank share its links as the platform
 * says. A packet is a detached communication of its real size whose payload is a copy of its bytes: it is complete
 * at post (as a libfabric inject). The packets to one peer leave as from a NIC's send queue: one after the other,
 * each when the previous one's injection ends (its start + bytes / bandwidth of the route's narrowest link), so
 * that they do not share the link among themselves and the first, often critical, one arrives at alpha + m/beta;
 * their latencies overlap. A packet whose turn has not come yet is handed to the rank's NIC actor, which posts it
 * at that date (see nm_sim_nic_s). A large transfer (rendezvous data) is a communication of its real size whose
 * completion the sender waits for; its bytes are copied at post and delivered into the receive posted for its
 * rendezvous tag, or, above the job's fake-payload size, not moved at all. The core blocks in block(): a
 * wait_any over the pending receive and the large sends, until one completes or the deadline passes; that wait is
 * where simulated time goes by. The C++ API is used because sg_comm_wait_any_for() of the C API was seen to lose a
 * message on timeout in SimGrid 3.32.
 *
 * No global state: everything hangs off drv->priv and the job (DESIGN.md rule 1); SimGrid runs every actor on one
 * OS thread, so a static or thread-local would be shared by all ranks.
 */
#include "nm_sim_job.hpp"
extern "C" {
#include "drivers/nm_driver.h"
#include <nmad/nm_errno.h>
}
#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <cstdlib>
#include <cstring>
#include <unordered_map>
#include <vector>

namespace sg4 = simgrid::s4u;

extern "C" struct nm_sim_rank_s *nm_sim_self(void); /* nmad-sim (nmad/launcher/nmad_sim.cpp) */

namespace {

constexpr unsigned NM_SIM_FREE_POLLS = 16; /* idle polls in a row that cost no simulated time */
constexpr size_t NM_SIM_MAX_PACKET = 64 * 1024;
/* --send-queue nic: packets of at most this many bytes (InfiniBand's largest MTU) take the wire between the larger
 * ones, as a NIC interleaving its queues at MTU granularity lets a control packet pass a long message. */
constexpr size_t NM_SIM_MTU = 4096;

enum nm_sim_kind_e : uint8_t { NM_SIM_PACKET = 1, NM_SIM_LARGE = 2 };

/** What travels: a header and, unless fake, a copy of the bytes right after it. */
struct nm_sim_msg_s {
  nm_sim_kind_e kind;
  bool fake;   /* large transfer above the fake-payload size: no bytes */
  int src;     /* the sender's rank: the simulator knows it, so the source is authenticated */
  uint64_t rtag;
  size_t len;  /* bytes of the message (also the simulated size) */
  uint8_t *data() { return reinterpret_cast<uint8_t *>(this + 1); }
};

struct nm_sim_large_recv_s {
  int peer;
  void *buf;
  size_t len;
  void *ctx;
};

struct nm_sim_large_send_s {
  sg4::CommPtr comm;
  void *ctx;
  size_t len;
  nm_sim_msg_s *deliver; /* rail >= 1: the data, handed to the peer's mailbox once the NIC-to-NIC flow ended */
  uint64_t peer;
};

/** The send queue to one peer: when the last packet posted to it ends its injection, and the bandwidth that
 *  injection runs at (the narrowest link of the route to the peer, bytes/s), read from the platform once. */
struct nm_sim_peer_queue_s {
  double free_at = 0;
  double bw = 0;
};

/** A packet waiting for its turn in its peer's send queue: posted at `at` (simulated s); seq keeps the order of
 *  packets posted at the same date (those of one peer have strictly increasing dates anyway). */
struct nm_sim_queued_s {
  double at;
  uint64_t seq;
  sg4::Mailbox *mbox;
  struct nm_sim_msg_s *m;
  bool operator>(const nm_sim_queued_s &o) const { return at > o.at || (at == o.at && seq > o.seq); }
};

/** A rank's NIC on one rail: the packets whose turn is in the future, in a min-heap by date, and the actor that
 *  posts each at its date. Shared by the driver and the actor (shared_ptr): the actor outlives the driver's close
 *  until its heap is empty (the packets still leave), and is a daemon, so it never keeps the simulation alive.
 *  Why an actor: a packet is complete at post for the core, which may then block, compute or leave the job's
 *  barrier; the NIC sends on its own, whatever the rank does. Made on the first packet that has to wait. */
struct nm_sim_nic_s {
  std::vector<nm_sim_queued_s> heap; /* capacity kept: no allocation per packet once grown */
  uint64_t seq = 0;
  bool closing = false;
  sg4::MutexPtr mutex = sg4::Mutex::create();
  sg4::ConditionVariablePtr cv = sg4::ConditionVariable::create();
  ~nm_sim_nic_s()
  {
    for (auto &q : heap)
      std::free(q.m); /* the simulation ended with packets queued (their receivers had all finished) */
  }
};

/** A completion found outside progress (an early large message, a cancel), reported by the next progress. */
struct nm_sim_done_s {
  void *ctx;
  int err;
  size_t len;
};

struct nm_sim_drv_s {
  nm_sim_rank_s *self;
  nm_sim_job_s *job;
  int rail;                                /* rail index among this rank's simulation drivers */
  sg4::Host *nic;                          /* rail >= 1: this rank's NIC host for the rail */
  nm_sim_drv_s *next_rail;                 /* the rank's next simulation driver (self->drvs heads the chain) */
  sg4::Mailbox *mbox;
  sg4::CommPtr recv;      /* always one receive pending on mbox */
  nm_sim_msg_s *recv_msg; /* written by the receive when it completes */
  std::vector<nm_sim_large_send_s> sends;
  std::unordered_map<uint64_t, nm_sim_large_recv_s> recvs; /* posted large receives, by rendezvous tag */
  std::unordered_map<uint64_t, nm_sim_msg_s *> early;     /* large data whose receive is not posted (yet) */
  std::vector<nm_sim_done_s> done, reporting; /* reporting: the batch progress is reporting (capacity kept) */
  std::vector<nm_sim_large_send_s> finished;  /* large sends progress found complete (capacity kept) */
  std::vector<sg4::CommPtr> wait_set;         /* block()'s activities (capacity kept: no allocation per wait) */
  std::unordered_map<uint64_t, nm_sim_peer_queue_s> queues; /* send queues by peer, made on first send */
  std::shared_ptr<nm_sim_nic_s> nic_q;        /* the queued packets and their actor, made on first need */
  double wire_free_at = 0;                    /* --send-queue nic: when this rail's last queued packet above one
                                                 MTU is injected */
  unsigned idle_polls;
};

nm_sim_drv_s *priv(nm_drv_s *drv) { return static_cast<nm_sim_drv_s *>(drv->priv); }

nm_sim_msg_s *msg_new(nm_sim_kind_e kind, int src, const void *buf, size_t len, bool fake, uint64_t rtag)
{
  auto *m = static_cast<nm_sim_msg_s *>(std::malloc(sizeof(nm_sim_msg_s) + (fake ? 0 : len)));
  if (!m)
    return nullptr;
  m->kind = kind;
  m->fake = fake;
  m->src = src;
  m->rtag = rtag;
  m->len = len;
  if (!fake && len)
    std::memcpy(m->data(), buf, len);
  return m;
}

void msg_free(void *m) { std::free(m); }

void post_recv(nm_sim_drv_s *p)
{
  p->recv_msg = nullptr;
  p->recv = p->mbox->get_async<nm_sim_msg_s>(&p->recv_msg);
}

/* Large data meets its posted receive: move the bytes (unless fake), free the message. @return the completion. */
nm_sim_done_s land_large(const nm_sim_large_recv_s &r, nm_sim_msg_s *m)
{
  int err = m->len > r.len ? -NM_EPROTO : NM_ESUCCESS;
  if (!err && !m->fake && m->len)
    std::memcpy(r.buf, m->data(), m->len);
  nm_sim_done_s d{r.ctx, err, err ? 0 : m->len};
  std::free(m);
  return d;
}

void handle_arrival(nm_drv_s *drv, nm_sim_msg_s *m)
{
  nm_sim_drv_s *p = priv(drv);
  if (m->kind == NM_SIM_PACKET) {
    drv->up.packet(drv->up.ref, drv, m->data(), m->len, static_cast<uint64_t>(m->src));
    std::free(m);
    return;
  }
  auto it = p->recvs.find(m->rtag);
  if (it == p->recvs.end() || it->second.peer != m->src) {
    auto old = p->early.find(m->rtag);
    if (old != p->early.end())
      std::free(old->second); /* a tag reused by a confused peer: keep the newest */
    p->early[m->rtag] = m;
    return;
  }
  nm_sim_done_s d = land_large(it->second, m);
  p->recvs.erase(it);
  drv->up.large_done(drv->up.ref, d.ctx, d.err, d.len);
}

/* Rank @p peer's mailbox on this driver's rail (looked up each time: job->rails grows when a rank opens its
 * next rail, which moves the vectors). */
sg4::Mailbox *peer_mbox(nm_sim_drv_s *p, uint64_t peer)
{
  return p->job->rails[static_cast<size_t>(p->rail)].mbox[peer];
}

/* The NIC host of rail k (>= 1) of @p host: "<host>.nic<k>", or nullptr when the platform has none. */
sg4::Host *nic_of(const sg4::Host *host, int rail)
{
  return sg4::Host::by_name_or_null(host->get_name() + ".nic" + std::to_string(rail));
}

/* Whether a host belongs to rail k: rail 0 hosts carry no ".nic" suffix, rail k >= 1 ones end in ".nic<k>". */
bool on_rail(const sg4::Host *h, int rail)
{
  const std::string &n = h->get_name();
  size_t dot = n.rfind(".nic");
  if (rail == 0)
    return dot == std::string::npos;
  return dot != std::string::npos && n.substr(dot + 4) == std::to_string(rail);
}

/* The rail's nominal latency and bandwidth, from the platform (once per job and rail): the route from @p from
 * to another host of the same rail, its summed link latencies and its narrowest link. The figures are the
 * platform's own; under SimGrid's default LV08 model the simulated ones differ by its factors (CM02: none). */
void probe_rail(nm_sim_job_s::rail_s &r, sg4::Host *from, int rail)
{
  for (sg4::Host *h : sg4::Engine::get_instance()->get_all_hosts()) {
    if (h == from || !on_rail(h, rail))
      continue;
    std::vector<sg4::Link *> links;
    double lat = 0;
    from->route_to(h, links, &lat);
    double bw = 0;
    for (sg4::Link *l : links)
      if (bw == 0 || l->get_bandwidth() < bw)
        bw = l->get_bandwidth();
    if (bw > 0) {
      r.latency_ns = static_cast<uint32_t>(std::llround(lat * 1e9));
      r.bandwidth_MBps = static_cast<uint32_t>(std::min(bw / 1e6, 4e9));
    }
    break;
  }
  r.probed = true;
}

/* The NIC host of rail p->rail of rank @p peer (registered by the peer when it opened that rail). */
sg4::Host *peer_nic(nm_sim_drv_s *p, uint64_t peer)
{
  return p->job->rails[static_cast<size_t>(p->rail)].nic[peer];
}

int sim_open(nm_drv_s *drv, const char *provider, int all_local)
{
  nm_sim_rank_s *self = nm_sim_self();
  if (!self) {
    std::fprintf(stderr, "nmad: the sim driver runs only under nmad-sim\n");
    return -NM_ENOTSUP;
  }
  auto *p = new (std::nothrow) nm_sim_drv_s();
  if (!p)
    return -NM_ENOMEM;
  p->self = self;
  p->job = self->job;
  p->rail = self->rails_open;
  size_t n = p->job->mbox.size(), k = static_cast<size_t>(p->rail);
  if (p->job->rails.size() <= k || p->job->rails[k].mbox.empty()) {
    /* Mailbox::by_name() may let the other actors run: build first, publish after, with no yield between the
     * test and the publication (another rank may have published meanwhile: then its vectors are kept). */
    std::vector<sg4::Mailbox *> m(n);
    for (size_t i = 0; i < n; i++)
      m[i] = k == 0 ? p->job->mbox[i] : sg4::Mailbox::by_name("nmad-" + std::to_string(i) + ".rail" + std::to_string(k));
    if (p->job->rails.size() <= k)
      p->job->rails.resize(k + 1);
    nm_sim_job_s::rail_s &r = p->job->rails[k];
    if (r.mbox.empty()) {
      r.mbox = std::move(m);
      r.nic.assign(n, nullptr);
    }
  }
  nm_sim_job_s::rail_s &r = p->job->rails[k];
  sg4::Host *host = sg4::this_actor::get_host();
  if (p->rail > 0 && !(p->nic = nic_of(host, p->rail))) {
    std::fprintf(stderr, "nmad: rank %d: NMAD_DRIVER asks for sim rail %d but the platform has no host %s.nic%d "
                 "(a second NIC per host: doc/platforms/README.md)\n", self->rank, p->rail, host->get_name().c_str(),
                 p->rail);
    delete p;
    return -NM_ENOTSUP;
  }
  r.nic[static_cast<size_t>(self->rank)] = p->rail ? p->nic : host;
  if (!r.probed)
    probe_rail(r, p->rail ? p->nic : host, p->rail);
  p->mbox = r.mbox[static_cast<size_t>(self->rank)];
  p->mbox->set_receiver(sg4::Actor::self());
  post_recv(p);
  self->rails_open++;
  nm_sim_drv_s **tail = reinterpret_cast<nm_sim_drv_s **>(&self->drvs);
  while (*tail)
    tail = &(*tail)->next_rail;
  *tail = p;
  drv->priv = p;
  drv->props.max_packet = NM_SIM_MAX_PACKET;
  drv->props.inject_size = NM_SIM_MAX_PACKET;
  drv->props.max_large = UINT64_MAX;
  /* LogP figures (doc/collectives.md, "The model in LogP form"): a lone packet pays the --send-overhead sleep
   * and the route's latency; packets sent back to back leave one per progress pass, since the core injects one
   * packet per pass (NM_DRV_F_PACED), and a pass that found nothing costs --poll-cost once 16 such passes went
   * free: the root of a flat tree on 64 nodes of inti takes 1.4 + 46 x 1.000 us at the default 1000 ns. So a
   * burst's first 17 packets (one from the send call, then one per free pass) pay only --send-overhead: that is
   * gap_free, and a rank that received or blocked starts a new run of free passes. */
  uint64_t o_ns = std::min<uint64_t>(p->job->send_overhead_ns, UINT32_MAX / 4);
  uint64_t g_ns = o_ns + std::min<uint64_t>(p->job->poll_cost_ns, UINT32_MAX / 4);
  drv->props.latency_ns = static_cast<uint32_t>(std::min<uint64_t>(r.latency_ns + o_ns, UINT32_MAX));
  drv->props.bandwidth_MBps = r.bandwidth_MBps;
  drv->props.overhead_ns = static_cast<uint32_t>(o_ns);
  drv->props.gap_ns = static_cast<uint32_t>(g_ns);
  drv->props.gap_free = NM_SIM_FREE_POLLS + 1;
  drv->props.flags = NM_DRV_F_RANK_ADDRESSED | NM_DRV_F_PACED |
                     (p->job->fake_above != UINT64_MAX ? NM_DRV_F_FAKE_PAYLOAD : 0u);
  drv->props.fake_above = p->job->fake_above;
  std::snprintf(drv->props.provider, sizeof(drv->props.provider), "sim");
  return NM_ESUCCESS;
}

void sim_close(nm_drv_s *drv)
{
  nm_sim_drv_s *p = priv(drv);
  if (!p)
    return;
  try {
    p->recv->cancel();
    for (auto &s : p->sends)
      s.comm->cancel();
  } catch (const simgrid::Exception &) {
  }
  for (auto &s : p->sends)
    std::free(s.deliver);
  if (p->nic_q) { /* the queued packets still leave; the actor ends after the last one */
    std::unique_lock<sg4::Mutex> lock(*p->nic_q->mutex);
    p->nic_q->closing = true;
    p->nic_q->cv->notify_one();
  }
  p->mbox->set_receiver(nullptr);
  for (void **link = &p->self->drvs; *link; link = reinterpret_cast<void **>(&static_cast<nm_sim_drv_s *>(*link)->next_rail))
    if (*link == p) {
      *link = p->next_rail;
      break;
    }
  for (auto &e : p->early)
    std::free(e.second);
  delete p;
  drv->priv = nullptr;
}

/* The NIC actor: posts each queued packet at its date, sleeping on the condition variable until the earliest one
 * (a new, earlier packet wakes it). Ends when closed and empty. */
void nic_loop(std::shared_ptr<nm_sim_nic_s> nic)
{
  std::unique_lock<sg4::Mutex> lock(*nic->mutex);
  for (;;) {
    if (nic->heap.empty()) {
      if (nic->closing)
        return;
      nic->cv->wait(lock);
      continue;
    }
    double at = nic->heap.front().at;
    if (sg4::Engine::get_clock() < at - 1e-12) { /* 1 ps: a wake-up computed in floating point may fall short */
      nic->cv->wait_until(lock, at);
      continue;
    }
    std::pop_heap(nic->heap.begin(), nic->heap.end(), std::greater<nm_sim_queued_s>());
    nm_sim_queued_s q = nic->heap.back();
    nic->heap.pop_back();
    q.mbox->put_init(q.m, q.m->len)->detach(msg_free);
  }
}

/* The bandwidth packets to @p peer are injected at: the narrowest link from this rank's host to the peer's (the
 * route a mailbox communication takes, whatever the rail), or the rail's probed figure while the peer has not
 * opened its mailbox yet. bytes/s. */
double route_bandwidth(nm_sim_drv_s *p, uint64_t peer)
{
  sg4::ActorPtr dst = peer_mbox(p, peer)->get_receiver();
  double bw = 0;
  if (dst) {
    std::vector<sg4::Link *> links;
    double lat = 0;
    sg4::this_actor::get_host()->route_to(dst->get_host(), links, &lat);
    for (sg4::Link *l : links)
      if (bw == 0 || l->get_bandwidth() < bw)
        bw = l->get_bandwidth();
  }
  if (bw <= 0)
    bw = static_cast<double>(p->job->rails[static_cast<size_t>(p->rail)].bandwidth_MBps) * 1e6;
  return bw;
}

/* Posts packet @p m to @p peer through the peer's send queue: at once when the queue is idle, else by the NIC
 * actor when the previous packet's injection ends. */
void queue_packet(nm_sim_drv_s *p, uint64_t peer, nm_sim_msg_s *m)
{
  nm_sim_peer_queue_s &q = p->queues[peer];
  if (q.bw == 0)
    q.bw = route_bandwidth(p, peer);
  double now = sg4::Engine::get_clock(), start = std::max(now, q.free_at);
  double inject = static_cast<double>(m->len) / q.bw;
  if (p->job->send_queue == nm_sim_job_s::SEND_QUEUE_NIC && m->len > NM_SIM_MTU) {
    /* One wire: a packet of several MTUs leaves after the rank's previous one, whatever its peer. */
    start = std::max(start, p->wire_free_at);
    p->wire_free_at = start + inject;
  }
  q.free_at = start + inject;
  if (start <= now) {
    peer_mbox(p, peer)->put_init(m, m->len)->detach(msg_free);
    return;
  }
  if (!p->nic_q) {
    p->nic_q = std::make_shared<nm_sim_nic_s>();
    sg4::Actor::create("nmad-nic-" + std::to_string(p->self->rank) + "." + std::to_string(p->rail),
                       sg4::this_actor::get_host(), nic_loop, p->nic_q)
        ->daemonize();
  }
  nm_sim_nic_s &nic = *p->nic_q;
  std::unique_lock<sg4::Mutex> lock(*nic.mutex);
  bool earliest = nic.heap.empty() || start < nic.heap.front().at;
  nic.heap.push_back({start, nic.seq++, peer_mbox(p, peer), m});
  std::push_heap(nic.heap.begin(), nic.heap.end(), std::greater<nm_sim_queued_s>());
  if (earliest)
    nic.cv->notify_one();
}

int sim_get_address(nm_drv_s *drv, void *addr, size_t *len)
{
  *len = 0; /* rank-addressed (NM_DRV_F_RANK_ADDRESSED): nothing to exchange */
  return NM_ESUCCESS;
}

int sim_connect(nm_drv_s *drv, uint64_t index, const void *addr, size_t len) { return NM_ESUCCESS; }

int sim_send(nm_drv_s *drv, uint64_t peer, const void *buf, size_t len, void *ctx)
{
  nm_sim_drv_s *p = priv(drv);
  if (peer >= p->job->mbox.size() || len > NM_SIM_MAX_PACKET)
    return -NM_EINVAL;
  nm_sim_msg_s *m = msg_new(NM_SIM_PACKET, p->self->rank, buf, len, false, 0);
  if (!m)
    return -NM_ENOMEM;
  if (p->job->send_overhead_ns) /* the software latency of a packet (--send-overhead), paid by the sender */
    sg4::this_actor::sleep_for(static_cast<double>(p->job->send_overhead_ns) * 1e-9);
  if (p->job->send_queue != nm_sim_job_s::SEND_QUEUE_NONE)
    queue_packet(p, peer, m);
  else
    peer_mbox(p, peer)->put_init(m, len)->detach(msg_free);
  return 1; /* complete at post: the bytes are copied */
}

int sim_large_send(nm_drv_s *drv, uint64_t peer, const void *buf, size_t len, uint64_t rtag, void *ctx)
{
  nm_sim_drv_s *p = priv(drv);
  if (peer >= p->job->mbox.size())
    return -NM_EINVAL;
  nm_sim_msg_s *m = msg_new(NM_SIM_LARGE, p->self->rank, buf, len, len > p->job->fake_above, rtag);
  if (!m)
    return -NM_ENOMEM;
  if (p->rail == 0) {
    p->sends.push_back({peer_mbox(p, peer)->put_async(m, len), ctx, len, nullptr, peer});
    return NM_ESUCCESS;
  }
  /* Rail k >= 1: the bytes flow between the two hosts' NICs k (a host-to-host communication: a mailbox one
   * would take the route between the actors' hosts, NIC 0). When it ends, the data is handed to the peer's
   * mailbox of this rail as a zero-byte message, which wakes the peer (it costs one latency of NIC 0). */
  sg4::Host *dst = peer_nic(p, peer);
  if (!dst) {
    std::free(m);
    return -NM_EDRIVER;
  }
  p->sends.push_back({sg4::Comm::sendto_async(p->nic, dst, len), ctx, len, m, peer});
  return NM_ESUCCESS;
}

int sim_large_recv(nm_drv_s *drv, uint64_t peer, void *buf, size_t len, uint64_t rtag, void *ctx)
{
  nm_sim_drv_s *p = priv(drv);
  nm_sim_large_recv_s r{static_cast<int>(peer), buf, len, ctx};
  auto e = p->early.find(rtag);
  if (e != p->early.end() && e->second->src == r.peer) {
    p->done.push_back(land_large(r, e->second)); /* upcalls come from progress only */
    p->early.erase(e);
    return NM_ESUCCESS;
  }
  p->recvs[rtag] = r;
  return NM_ESUCCESS;
}

int sim_large_cancel(nm_drv_s *drv, void *ctx)
{
  nm_sim_drv_s *p = priv(drv);
  for (auto it = p->recvs.begin(); it != p->recvs.end(); ++it)
    if (it->second.ctx == ctx) {
      p->recvs.erase(it);
      p->done.push_back({ctx, -NM_ECANCELED, 0});
      return NM_ESUCCESS;
    }
  return -NM_ENOTFOUND;
}

int sim_progress(nm_drv_s *drv)
{
  nm_sim_drv_s *p = priv(drv);
  int n = 0;
  p->reporting.swap(p->done); /* the upcalls may add to done */
  for (auto &d : p->reporting) {
    drv->up.large_done(drv->up.ref, d.ctx, d.err, d.len);
    n++;
  }
  p->reporting.clear();
  try {
    while (p->recv->test()) {
      nm_sim_msg_s *m = p->recv_msg;
      post_recv(p); /* before the upcall, which may block (never, in the core) or close */
      handle_arrival(drv, m);
      n++;
    }
    std::vector<nm_sim_large_send_s> &finished = p->finished;
    for (size_t i = 0; i < p->sends.size();)
      if (p->sends[i].comm->test()) {
        finished.push_back(p->sends[i]);
        p->sends[i] = p->sends.back();
        p->sends.pop_back();
      } else {
        i++;
      }
    for (auto &s : finished) { /* after the loop: the upcalls may post new sends */
      if (s.deliver)
        peer_mbox(p, s.peer)->put_init(s.deliver, 0)->detach(msg_free);
      drv->up.large_done(drv->up.ref, s.ctx, NM_ESUCCESS, s.len);
      n++;
    }
    finished.clear();
  } catch (const simgrid::Exception &e) {
    std::fprintf(stderr, "nmad: rank %d: sim driver: %s\n", p->self->rank, e.what());
  }
  if (n) {
    p->idle_polls = 0;
  } else if (++p->idle_polls > NM_SIM_FREE_POLLS) {
    sg4::this_actor::sleep_for(static_cast<double>(p->job->poll_cost_ns) * 1e-9);
  }
  return n;
}

int sim_wait_fd(nm_drv_s *drv) { return NM_DRV_NO_FD; }
int sim_trywait(nm_drv_s *drv) { return priv(drv)->done.empty() ? 0 : -NM_EAGAIN; }

uint64_t sim_now_ns(nm_drv_s *drv) { return static_cast<uint64_t>(std::llround(sg4::Engine::get_clock() * 1e9)); }

/* The rank blocked (in a driver, or in the job's barrier): the runs of idle polls of all its rails end. */
void end_idle_runs(nm_sim_rank_s *self)
{
  for (nm_sim_drv_s *q = static_cast<nm_sim_drv_s *>(self->drvs); q; q = q->next_rail)
    q->idle_polls = 0;
}

int sim_block(nm_drv_s *drv, uint64_t deadline_ns)
{
  nm_sim_drv_s *p = priv(drv);
  end_idle_runs(p->self);
  /* the core blocks in one driver: wait for the activities of every rail of the rank */
  std::vector<sg4::CommPtr> &comms = p->wait_set;
  comms.clear();
  for (nm_sim_drv_s *q = static_cast<nm_sim_drv_s *>(p->self->drvs); q; q = q->next_rail) {
    if (!q->done.empty()) {
      comms.clear();
      return NM_ESUCCESS;
    }
    comms.push_back(q->recv);
    for (auto &s : q->sends)
      comms.push_back(s.comm);
  }
  double timeout = -1.0;
  if (deadline_ns) {
    uint64_t now = sim_now_ns(drv);
    timeout = deadline_ns > now ? static_cast<double>(deadline_ns - now) * 1e-9 : 0.0;
  }
  int rc;
  try {
    rc = sg4::Comm::wait_any_for(comms, timeout) < 0 ? -NM_ETIMEDOUT : NM_ESUCCESS;
  } catch (const simgrid::Exception &e) {
    std::fprintf(stderr, "nmad: rank %d: sim driver: %s\n", p->self->rank, e.what());
    rc = -NM_EDRIVER;
  }
  comms.clear(); /* drop the references: a finished send's activity is released when progress reaps it */
  return rc;
}

} // namespace

extern "C" void nm_sim_rank_blocked(nm_sim_rank_s *self) { end_idle_runs(self); }

extern "C" const struct nm_drv_ops_s nm_drv_sim_ops = {
  .name = "sim",
  .open = sim_open,
  .close = sim_close,
  .get_address = sim_get_address,
  .connect = sim_connect,
  .send = sim_send,
  .large_send = sim_large_send,
  .large_recv = sim_large_recv,
  .large_cancel = sim_large_cancel,
  .progress = sim_progress,
  .wait_fd = sim_wait_fd,
  .trywait = sim_trywait,
  .now_ns = sim_now_ns,
  .block = sim_block,
};
