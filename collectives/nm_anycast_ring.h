/**
 * @file nm_anycast_ring.h
 * @brief Private: the skip-ring overlay of the rootless broadcast as pure functions of (n, member), so that the
 *        forwarding rules can be checked exhaustively without a network (tests/test_anycast.c).
 *        Li et al. 2018, "Anycast: Rootless Broadcasting with MPI", sections 2.1 (skip ring) and 2.2 (rules).
 *
 * Heights: member 0 (the head) has H = nm_anycast_ring_levels(n); member i > 0 has 1 + ctz(i), at most H. The
 * level-l channel of member i (l < h(i)) goes to the next member after i whose height is above l, i.e. the next
 * multiple of 2^l, or the head when that passes the end (the paper's fig. 2: with 8 members, 0 and 4 are the
 * highest, the last member of each level, 7, 6 and 4, points back to 0).
 */
#ifndef NM_ANYCAST_RING_H
#define NM_ANYCAST_RING_H

/** Most levels of a ring (n <= INT_MAX members). */
#define NM_ANYCAST_MAX_LEVELS 32

/** @brief H: levels of a ring of @p n >= 1 members (ceil(log2 n), at least 1). */
int nm_anycast_ring_levels(int n);
/** @brief Height of member @p i (0 <= i < n), in [1, H]. */
int nm_anycast_ring_height(int n, int i);
/** @brief Outbound channels of member @p i: distinct members, nearest first. @param out room for
 *  NM_ANYCAST_MAX_LEVELS. @return how many (0 for n == 1). */
int nm_anycast_ring_outs(int n, int i, int *out);
/** @brief Inbound channels of member @p i: the members that have @p i among their outbound channels.
 *  @param in room for NM_ANYCAST_MAX_LEVELS. @return how many. */
int nm_anycast_ring_ins(int n, int i, int *in);
/**
 * @brief Where member @p self forwards an anycast of @p origin received from @p sender (-1 when @p self is the
 *        origin and starts it), under the two rules of section 2.2: (1) from a lower member, or at the origin, to
 *        every outbound channel, else only to lower members; (2) never to a member at or past the origin.
 * @param out room for NM_ANYCAST_MAX_LEVELS. @return how many targets.
 */
int nm_anycast_ring_targets(int n, int self, int origin, int sender, int *out);
/** @brief Ring distance from @p a forward to @p b, in [0, n). */
int nm_anycast_ring_dist(int n, int a, int b);

#endif /* NM_ANYCAST_RING_H */
