/**
 * @file nm_sim_job.hpp
 * @brief Private (C++): the state of one simulated job, owned by nmad-sim and shared by its ranks' drivers.
 */
#ifndef NM_SIM_JOB_HPP
#define NM_SIM_JOB_HPP

#include "nm_sim.h"
#include <simgrid/s4u.hpp>
#include <cstdint>
#include <vector>

struct nm_sim_job_s {
  /** Rank r's packets and large transfers arrive in mbox[r]; rank r is its permanent receiver, so transfers
   *  flow as soon as they are posted (SimGrid's model of eager TCP/MPI transfers), not when r asks. */
  std::vector<simgrid::s4u::Mailbox *> mbox;
  /** Large transfers (rendezvous data) of more bytes than this move only their size (--fake-payload); the
   *  receiver's buffer is not written. UINT64_MAX: every byte is delivered. */
  uint64_t fake_above = UINT64_MAX;
  /** Simulated cost of a poll that found nothing, charged after NM_SIM_FREE_POLLS of them in a row without a
   *  block: an application that polls in a loop (test, probe) must let simulated time pass, or the messages
   *  it waits for would never arrive. Waits of the core block instead and are never charged. */
  uint64_t poll_cost_ns = 1000;
  /** Simulated CPU time a rank spends on each packet it sends (--send-overhead, LogP's o), 0 by default: the
   *  software part of a message's latency, which a platform file cannot hold (the BG/P torus: ~3 us of MPI per
   *  message, doc/platforms/README.md). The sender's actor sleeps that long before the packet leaves, so one
   *  rank's packets are serialised by it; a rendezvous pays it on the RDV and on the RTR, not on the data. */
  uint64_t send_overhead_ns = 0;
  /** How a rank's packets leave (--send-queue nic|peer|none, drivers/sim/nm_sim.cpp, doc/nmad-sim.md "Send
   *  queues"): nic (the default): a packet to a peer leaves when the previous one to that peer has been injected
   *  (start + bytes / the route's narrowest bandwidth), and a packet above one MTU also when the rank's previous
   *  such packet, to any peer, has (the NIC's one wire); peer: per peer only (the default of 2026-11-25 to 27),
   *  so that packets to several peers pile up on the link; none: every packet flows at once (before 2026-11-25). */
  enum send_queue_e { SEND_QUEUE_NONE, SEND_QUEUE_PEER, SEND_QUEUE_NIC } send_queue = SEND_QUEUE_NIC;
  simgrid::s4u::BarrierPtr barrier;
  /** Rail k of every rank (NMAD_DRIVER=sim+sim: one simulation driver per rail), made when a rank first opens
   *  rail k. Rail k >= 1 moves its large transfers between the hosts' NICs k: the hosts named "<host>.nic<k>" of
   *  the platform (doc/platforms/README.md, "Two NICs per host"). */
  struct rail_s {
    std::vector<simgrid::s4u::Mailbox *> mbox; /* rank r's mailbox on this rail (rail 0: the `mbox` above) */
    std::vector<simgrid::s4u::Host *> nic;     /* rank r's NIC of this rail, set when r opens the rail */
    bool probed = false;                       /* latency_ns and bandwidth_MBps read from the platform */
    uint32_t latency_ns = 1000, bandwidth_MBps = 1000;
  };
  std::vector<rail_s> rails;
  std::vector<nm_sim_rank_s> ranks;
};

#endif /* NM_SIM_JOB_HPP */
