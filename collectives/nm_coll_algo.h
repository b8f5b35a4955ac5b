/**
 * @file nm_coll_algo.h
 * @brief Private: what every collective family's chooser shares (issue 18, deliverable 1): the expert's override
 * by an environment variable (NMAD_<COLLECTIVE>_ALGO, checked against the family's names, a bad value refused with
 * a message naming the variable and the accepted values, as NMAD_BCAST_ALGO is), the network's Hockney figures
 * for the cost models, and the start of a built schedule.
 *
 * Every member of a collective must choose alike without talking: a choice may depend only on p, the lengths
 * (the same everywhere, as MPI requires), the drivers' nominal figures and the environment (read at the call, or
 * once by the group's owner: struct nm_coll_overrides_s). Nothing else is cached.
 */
#ifndef NM_COLL_ALGO_H
#define NM_COLL_ALGO_H

#include <nmad/nm_coll_sched.h>
#include <nmad/nm_coll.h>

/** Read @p var: unset, empty or "auto" gives *algo = 0 (the family's automatic choice); a name in
 *  @p names[1..n-1] gives its index. @p names[0] must be "auto". @return 0, or -NM_EINVAL for any other value
 *  (after one line on stderr naming the variable, the value and the accepted names). Thread-safe (getenv). */
int nm_coll_algo_env(const char *var, const char *const names[], int n, int *algo);

/** nm_coll_algo_env() on a value already read (@p v, NULL when unset; @p var names it in the message). */
int nm_coll_algo_parse(const char *var, const char *v, const char *const names[], int n, int *algo);

/** The value of family @p f's override for a collective on @p group: the one @p group carries (read once by its
 *  owner), else the environment's now (NULL when unset). */
const char *nm_coll_algo_override(const struct nm_coll_group_s *group, enum nm_coll_family_e f);

/** nm_coll_algo_forced() the long way: the value read (from the group, else the environment) and parsed. */
int nm_coll_algo_forced_parse(const struct nm_coll_group_s *group, enum nm_coll_family_e f,
                              const char *const names[], int n, int *algo);

/** The override of family @p f for a collective on @p group: the one @p group carries (group->overrides, read
 *  once by its owner), else the environment's now (nm_coll_algo_env()). Same results and errors.
 *  Inline for the common case of a group without override: a small collective's call pays a load and a test, not
 *  two calls and a parse (issue 18: ~70 instructions of a 4-rank barrier's ~2,500). */
static inline int nm_coll_algo_forced(const struct nm_coll_group_s *group, enum nm_coll_family_e f,
                                      const char *const names[], int n, int *algo)
{
  if (group && group->overrides && group->overrides->value[f][0] == '\0') {
    *algo = 0;
    return 0;
  }
  return nm_coll_algo_forced_parse(group, f, names, n, algo);
}

/** What a point-to-point message costs on a session's network, for the cost models that price every step
 *  (allreduce): Hockney's alpha (s) and beta (s/byte), and the rendezvous: a message of more than @p eager_upto
 *  bytes that its receiver does not pull at match (more than @p pull_upto) waits for an RTR, a round trip. */
struct nm_coll_algo_net_s {
  double alpha, beta;
  double eager_upto, pull_upto; /* bytes */
};

/** @p session's network: Hockney's figures from nm_core_network_props() (shm-like ones without a network), the
 *  rendezvous from nm_core_rdv_threshold() and nm_core_rdv_pull_upto(); without a session, nominal figures and no
 *  rendezvous cost. */
void nm_coll_algo_net(nm_session_t session, struct nm_coll_algo_net_s *net);

/** @p session's nominal one-way network latency in ns (nm_core_network_props(): the same on every rank of a job),
 *  0 without a session or a network. */
uint32_t nm_coll_algo_latency_ns(nm_session_t session);

/** Time of one message of @p bytes on @p net: alpha + bytes x beta, plus 2 alpha for the RTR's round trip of a
 *  rendezvous its receiver does not pull (seconds). */
double nm_coll_algo_msg_time(const struct nm_coll_algo_net_s *net, double bytes);

/** Whether the job of schedule @p s's session has more ranks than cores on its one host (nm_core_job_oversubscribed():
 *  the same on every rank, so the automatic choices that read it agree). 0 without a session. */
int nm_coll_algo_oversubscribed(const nm_coll_sched_t *s);

/** The blocking small collectives' wait (collectives/bcast_eager.c, gather_scatter.c) until @p *flag: the
 *  caller's @p wait, else the core's (spin at least @p spin_ns, then yield, then block in the drivers). */
void nm_coll_algo_wait(nm_session_t session, nm_coll_wait_fn_t wait, void *ref, volatile int *flag,
                       uint64_t spin_ns);

/** Wait for the @p n requests at @p req (nm_coll_algo_wait(), no spin hint), keeping the first error in @p err. */
void nm_coll_algo_wait_all(nm_session_t session, nm_coll_wait_fn_t wait, void *ref, nm_sr_request_t *req, int n,
                           int *err);

/** One step of a blocking small collective: receive @p rlen bytes into @p rbuf from @p from while sending @p slen
 *  bytes of @p sbuf to @p to (either gate may be NULL: no such message), then wait for both; errors kept in
 *  @p err. */
void nm_coll_algo_exchange(nm_session_t session, nm_tag_t tag, nm_gate_t to, const void *sbuf, nm_len_t slen,
                           nm_gate_t from, void *rbuf, nm_len_t rlen, nm_coll_wait_fn_t wait, void *ref, int *err);

/** A blocking small collective's last step: its sends that left at post end their burst (nm_core_end_burst()), so
 *  that the caller's next collective to the same peers sends at post too. */
void nm_coll_algo_end(nm_session_t session);

/** Keep the first error: *err = rc unless an error is kept already. */
static inline void nm_coll_algo_keep(int *err, int rc)
{
  if (!*err && rc)
    *err = rc;
}

/** Gate of @p member in @p group (NULL is recorded in the schedule by its send/recv). */
static inline nm_gate_t nm_coll_algo_gate(const struct nm_coll_group_s *group, int member)
{
  return group->gate_of(group->ref, member);
}

/** Whether @p group and @p self are usable (non-NULL gate_of, n >= 1, 0 <= self < n). */
static inline int nm_coll_algo_group_ok(const struct nm_coll_group_s *group, int self)
{
  return group && group->gate_of && group->n >= 1 && self >= 0 && self < group->n;
}

/** Whether a blocking small collective without a schedule can run @p self's part over @p group: a session, a valid
 *  group of 2 members or more, and at most @p max_peers peers (their requests live on the caller's stack). */
static inline int nm_coll_algo_eager_ok(nm_session_t session, const struct nm_coll_group_s *group, int self,
                                        int max_peers)
{
  return session && nm_coll_algo_group_ok(group, self) && group->n >= 2 && group->n - 1 <= max_peers;
}

/** A blocking small collective's receive of @p len bytes into @p buf from @p gate, posted as @p req.
 *  @return 1 if @p req was posted (wait for it: it completes, with its error if any), 0 if it was refused before
 *  posting (that error kept in @p err). */
static inline int nm_coll_algo_recv(nm_session_t session, nm_gate_t gate, nm_tag_t tag, void *buf, nm_len_t len,
                                    nm_sr_request_t *req, int *err)
{
  int rc = nm_sr_irecv(session, gate, tag, buf, len, req);
  nm_coll_algo_keep(err, rc);
  return rc != -NM_EINVAL;
}

/** A blocking small collective's send: at once without a request where it can leave (nm_sr_send_now()), else
 *  posted as @p req. @return 1 if @p req was posted (wait for it: it completes, with its error if its gate
 *  failed), 0 if not (the message left, or was refused: that error kept in @p err). Inline: it is most of a
 *  small collective's instructions, a call more was 30 of a send's 460. */
static inline int nm_coll_algo_send_eager(nm_session_t session, nm_gate_t gate, nm_tag_t tag, const void *buf,
                                          nm_len_t len, nm_sr_request_t *req, int *err)
{
  int rc = nm_sr_send_now(session, gate, tag, buf, len);
  if (rc == 1)
    return 0;
  if (rc == 0)
    rc = nm_sr_isend(session, gate, tag, buf, len, req);
  nm_coll_algo_keep(err, rc);
  return rc != -NM_EINVAL; /* posted, or completed with its error (failed gate) */
}

/** Most messages a blocking small collective posts as requests at once (they live on the caller's stack); with
 *  more peers the schedule runs it. */
#define NM_COLL_EAGER_PEERS 32
/** Largest message of a blocking small collective: nm_sr_send_now() takes up to 4 KiB. */
#define NM_COLL_EAGER_MAX ((nm_len_t)4096)

/** Offset of block @p blk when @p total units are cut into @p nb balanced blocks (floor(total / nb) each, the
 *  first total % nb one more), in units. */
static inline nm_len_t nm_coll_algo_block(nm_len_t total, int nb, int blk)
{
  nm_len_t q = total / (nm_len_t)nb, r = total % (nm_len_t)nb;
  return (nm_len_t)blk * q + ((nm_len_t)blk < r ? (nm_len_t)blk : r);
}

/** Largest power of two <= @p p (p >= 1). */
static inline int nm_coll_algo_pof2(int p)
{
  int pof2 = 1;
  while (pof2 * 2 <= p)
    pof2 *= 2;
  return pof2;
}

/** The non-blocking entry points' common start: checks @p req and @p session, sets *req to NULL, makes an empty
 *  schedule with @p tag. @return it, or NULL with *err set (-NM_EINVAL, -NM_ENOMEM). */
nm_coll_sched_t *nm_coll_algo_new(nm_session_t session, nm_tag_t tag, nm_coll_sched_t **req, int *err);

/** The non-blocking entry points' common end: on @p err destroy @p s, else start it and hand it in *req.
 *  @return 0 or the error (the schedule is then freed). */
int nm_coll_algo_start(nm_coll_sched_t *s, int err, nm_coll_sched_t **req);

#endif /* NM_COLL_ALGO_H */
