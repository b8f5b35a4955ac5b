/**
 * @file nm_errno.h
 * @brief Error codes of nmad. Every function that can fail returns an int: NM_ESUCCESS (0) or a negative
 *        -NM_E* code. Requests carry the same codes in their status (DESIGN.md rule 6).
 */
#ifndef NM_ERRNO_H
#define NM_ERRNO_H

#ifdef __cplusplus
extern "C" {
#endif

/** Error codes; functions return 0 or the negated value (e.g. -NM_EINVAL). */
enum nm_err_e {
  NM_ESUCCESS = 0,   /**< success */
  NM_EUNKNOWN = 1,   /**< unspecified error */
  NM_EINVAL = 2,     /**< invalid argument */
  NM_ENOMEM = 3,     /**< out of memory */
  NM_EAGAIN = 4,     /**< not complete yet (test functions), try again */
  NM_ETIMEDOUT = 5,  /**< a deadline passed */
  NM_ETRUNCATED = 6, /**< message larger than the receive buffer; the buffer holds its first bytes */
  NM_ECANCELED = 7,  /**< request was cancelled */
  NM_ECLOSED = 8,    /**< peer is gone (process died or gate closed) */
  NM_EPROTO = 9,     /**< malformed or truncated packet from the network; the gate is failed */
  NM_ENOTSUP = 10,   /**< operation or provider not supported here */
  NM_EBUSY = 11,     /**< resource in use (e.g. cancel of a receive already matched) */
  NM_ENOTFOUND = 12, /**< no such entry */
  NM_EDRIVER = 13,   /**< the network driver reported an error */
  NM_EALREADY = 14,  /**< already done (e.g. session opened twice) */
  NM_ERR_MAX = 15
};

/** @brief Human-readable text of an error code.
 *  @param err a code, positive or negative (the sign is ignored).
 *  @return a static constant string; never NULL. Thread-safe. */
const char *nm_strerror(int err);

#ifdef __cplusplus
}
#endif
#endif /* NM_ERRNO_H */
