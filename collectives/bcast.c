/**
 * @file bcast.c
 * @brief Static broadcasts over a group of gates (nm_coll.h): the binomial tree and the naive (flat) broadcast,
 * kept as the named entry points they were; both are now two of Hasanov 2015's eight broadcasts of
 * bcast_classic.c (sections 2.1.6 and 2.1.1), on the one tree module (nm_coll_tree.h).
 *
 * Costs, with p members, m bytes, latency alpha and inverse bandwidth beta (Hasanov & Lastovetsky 2015,
 * section 2.1): flat tree (section 2.1.1) (p - 1)(alpha + m beta) at the root; binomial tree (section 2.1.6)
 * ceil(log2 p)(alpha + m beta).
 */
#include <nmad/nm_coll.h>
#include <nmad/nm_coll_bcast.h>

/**
 * Binomial-tree broadcast (nm_coll.h): NM_COLL_BCAST_BINOMIAL of nm_coll_bcast(). A member receives from its
 * parent first, then sends to its children one after the other, farthest first (the single-port tree of Hasanov
 * 2015, section 2.1.6: sent all at once, the k copies would share this node's link and the broadcast would take
 * k(k+1)/2 m beta, doc/nmad-sim.md). A receive that fails with -NM_ETRUNCATED still forwards its @p len valid
 * bytes and returns the error; any other receive error stops this member (nothing to forward).
 */
int nm_coll_bcast_binomial_group(nm_session_t session, const struct nm_coll_group_s *group, int self, int root,
                                 void *buf, nm_len_t len, nm_tag_t tag)
{
  const struct nm_coll_bcast_opts_s o = {.algo = NM_COLL_BCAST_BINOMIAL};
  return nm_coll_bcast(session, group, self, root, buf, len, tag, &o);
}

/**
 * Naive broadcast (nm_coll.h): the flat tree of Hasanov 2015, section 2.1.1, and the "naive broadcast (a loop
 * of point-to-point requests to the recipient nodes)" that Denis 2020, section 5.1 compares the dynamic
 * broadcast with: NM_COLL_BCAST_FLAT of nm_coll_bcast() (the root posts its sends 64 at a time).
 */
int nm_coll_bcast_naive_group(nm_session_t session, const struct nm_coll_group_s *group, int self, int root,
                              void *buf, nm_len_t len, nm_tag_t tag)
{
  const struct nm_coll_bcast_opts_s o = {.algo = NM_COLL_BCAST_FLAT};
  return nm_coll_bcast(session, group, self, root, buf, len, tag, &o);
}

int nm_coll_bcast_binomial(nm_session_t session, const nm_gate_t *group, int n, int self, int root, void *buf,
                           nm_len_t len, nm_tag_t tag)
{
  const struct nm_coll_bcast_opts_s o = {.algo = NM_COLL_BCAST_BINOMIAL};
  return nm_coll_bcast_array(session, group, n, self, root, buf, len, tag, &o);
}

int nm_coll_bcast_naive(nm_session_t session, const nm_gate_t *group, int n, int self, int root, void *buf,
                        nm_len_t len, nm_tag_t tag)
{
  const struct nm_coll_bcast_opts_s o = {.algo = NM_COLL_BCAST_FLAT};
  return nm_coll_bcast_array(session, group, n, self, root, buf, len, tag, &o);
}
