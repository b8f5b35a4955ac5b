/**
 * @file nmad_run_proto.h
 * @brief Private: framing of the messages on the stream socket between the `nmad-run` launcher and each child.
 *
 * Every message is one frame: a 16-byte header then @c len payload bytes. Header fields are fixed-width
 * little-endian:
 * | offset | size | field                                                      |
 * |--------|------|------------------------------------------------------------|
 * | 0      | 4    | type (enum nmad_run_msg_e)                                 |
 * | 4      | 4    | arg: the sender's rank (child->launcher), the dead rank    |
 * |        |      | (FAULT), the number of ranks (collective replies)          |
 * | 8      | 8    | len: payload length in bytes, <= NMAD_RUN_PROTO_MAX_PAYLOAD |
 *
 * Messages:
 *  - ALLGATHER, child->launcher: this rank's contribution (len bytes, same len on every rank);
 *    launcher->child: the concatenation of all contributions by rank (size*len bytes), arg = size.
 *  - BARRIER, child->launcher: entered (len 0); launcher->child: every rank entered (len 0).
 *  - FAULT, launcher->child only: rank @c arg died (len 0). A collective pending on the child when a FAULT
 *    arrives will never get its reply: once any rank has died, the launcher answers every collective
 *    with FAULT frames instead of a result.
 *  - FINI, child->launcher only: this rank ends normally (len 0); the child closes its socket next.
 *  - ABORT, child->launcher only: this rank asks for the whole job to end now (MPI_Abort, nm_launcher_abort());
 *    payload: the requested exit code, a 4-byte little-endian signed integer (NMAD_RUN_ABORT_LEN bytes). The
 *    launcher terminates every rank at once, without a grace period, and exits with that code modulo 256. The
 *    child sends nothing after it and waits to be terminated.
 * Frames from the peer are untrusted (DESIGN.md rule 5): nmad_run_hdr_decode() checks type and length.
 * No global state; all functions are thread-safe as long as one fd is used by one thread at a time.
 */
#ifndef NMAD_RUN_PROTO_H
#define NMAD_RUN_PROTO_H

#include <stddef.h>
#include <stdint.h>

/** Size of the frame header on the wire, in bytes. */
#define NMAD_RUN_HDR_SIZE 16
/** Largest payload accepted in one frame, in bytes (64 MiB): bounds the memory a peer can make us allocate. */
#define NMAD_RUN_PROTO_MAX_PAYLOAD ((uint64_t)64 << 20)
/** Payload length of an ABORT frame, in bytes (the exit code). */
#define NMAD_RUN_ABORT_LEN 4
/** Largest number of ranks nmad-run starts. */
#define NMAD_RUN_MAX_RANKS 1024

/** Message types (values are part of the wire format: never renumber). */
enum nmad_run_msg_e {
  NMAD_RUN_MSG_ALLGATHER = 1,
  NMAD_RUN_MSG_BARRIER = 2,
  NMAD_RUN_MSG_FAULT = 3,
  NMAD_RUN_MSG_FINI = 4,
  NMAD_RUN_MSG_ABORT = 5
};

/** A decoded frame header. */
struct nmad_run_hdr_s {
  uint32_t type; /**< enum nmad_run_msg_e */
  uint32_t arg;  /**< rank or argument, see the file comment */
  uint64_t len;  /**< payload length in bytes */
};

/** Incremental receiver for a non-blocking fd (used by the launcher, which must never block on one child). */
struct nmad_run_rx_s {
  uint8_t hdr_buf[NMAD_RUN_HDR_SIZE];
  size_t got;                /**< bytes of the current frame received so far (header included) */
  struct nmad_run_hdr_s hdr; /**< valid once got >= NMAD_RUN_HDR_SIZE */
  uint8_t *payload;          /**< malloc'd, hdr.len bytes, once the header is decoded (NULL when len is 0) */
};

/** @brief Name of a message type for diagnostics ("ALLGATHER", ..., "unknown"). */
const char *nmad_run_msg_name(uint32_t type);

/** @brief Encode a header into @p out (NMAD_RUN_HDR_SIZE bytes). */
void nmad_run_hdr_encode(uint8_t out[NMAD_RUN_HDR_SIZE], uint32_t type, uint32_t arg, uint64_t len);

/** @brief Decode and validate a header (known type, len <= NMAD_RUN_PROTO_MAX_PAYLOAD, len 0 for BARRIER,
 *  FAULT and FINI, len NMAD_RUN_ABORT_LEN for ABORT). @return 0 or -NM_EPROTO. */
int nmad_run_hdr_decode(const uint8_t in[NMAD_RUN_HDR_SIZE], struct nmad_run_hdr_s *h);

/** @brief Write exactly @p len bytes; retries on EINTR and short writes, waits in poll() when the fd is
 *  non-blocking and full. Uses MSG_NOSIGNAL on sockets so a dead peer never raises SIGPIPE.
 *  @return 0, -NM_ECLOSED if the peer is gone (EPIPE, ECONNRESET), -NM_EUNKNOWN on another error. */
int nmad_run_write_full(int fd, const void *buf, size_t len);

/** @brief Read exactly @p len bytes; retries on EINTR and short reads, waits in poll() when the fd is
 *  non-blocking and empty. @return 0, -NM_ECLOSED on end of file (even in the middle of the buffer) or
 *  connection reset, -NM_EUNKNOWN on another error. */
int nmad_run_read_full(int fd, void *buf, size_t len);

/** @brief Send one frame (header + @p len bytes of @p payload; payload may be NULL when len is 0).
 *  @return 0, -NM_EINVAL if len is above the maximum, or an error of nmad_run_write_full(). */
int nmad_run_send(int fd, uint32_t type, uint32_t arg, const void *payload, uint64_t len);

/** @brief Blocking receive of one frame. @p *payload gets a malloc'd buffer of h->len bytes (NULL when the
 *  length is 0); the caller frees it. @return 0, -NM_ECLOSED, -NM_EPROTO, -NM_ENOMEM, -NM_EUNKNOWN. */
int nmad_run_recv(int fd, struct nmad_run_hdr_s *h, void **payload);

/** @brief Encode the exit code of an ABORT frame into @p out (NMAD_RUN_ABORT_LEN bytes, little-endian). */
void nmad_run_abort_encode(uint8_t out[NMAD_RUN_ABORT_LEN], int32_t code);
/** @brief Decode the exit code of an ABORT frame's payload (NMAD_RUN_ABORT_LEN bytes). */
int32_t nmad_run_abort_decode(const uint8_t in[NMAD_RUN_ABORT_LEN]);

/** Environment variable through which nmad-run gives its ranks the job key (doc/reliability.md): 16 hex digits. */
#define NMAD_RUN_KEY_ENV "NMAD_RUN_KEY"
#define NMAD_RUN_KEY_CHARS 17 /**< bytes of a formatted key, NUL included */

/** Environment variable through which nmad-run gives its ranks the job's name on the host: host-wide files of the
 *  ranks are named after it and removed at the job's end (drivers/ofi/nm_ofi_region.h). */
#define NMAD_RUN_JOB_ENV "NMAD_RUN_JOB"
#define NMAD_RUN_JOB_CHARS 40 /**< bytes of a job name, NUL included: "<pid>x<ns>", both in hexadecimal */
/**
 * @brief The job's name on this host: @p self (nmad-run's pid) and the monotonic clock at the call, in hexadecimal
 *        ("<pid>x<ns>"): no other job running on the host has the same, even in another pid namespace.
 * @param[out] out NMAD_RUN_JOB_CHARS bytes. Thread-safety: reentrant.
 */
void nmad_run_job_name(long self, char out[NMAD_RUN_JOB_CHARS]);

/** @brief A fresh random 64-bit job key from getrandom(2) (never 0, the key of a core without a launcher).
 *  @return 0, or -NM_EUNKNOWN when the system gives no random bytes (errno set). Thread-safe. */
int nmad_run_key_new(uint64_t *key);
/** @brief Write @p key as 16 lowercase hex digits and a NUL into @p buf (NMAD_RUN_KEY_CHARS bytes). */
void nmad_run_key_format(uint64_t key, char *buf);
/** @brief Parse a key written by nmad_run_key_format(): exactly 16 hex digits. @return 0 or -NM_EINVAL. */
int nmad_run_key_parse(const char *s, uint64_t *key);

/** @brief Initialize an incremental receiver. */
void nmad_run_rx_init(struct nmad_run_rx_s *rx);
/** @brief Read what is available on non-blocking @p fd without blocking.
 *  @return 1 when a whole frame is in rx (take rx->hdr and rx->payload, then call nmad_run_rx_reset()),
 *  0 if more bytes are needed, -NM_ECLOSED on end of file, -NM_EPROTO on a bad header, -NM_ENOMEM,
 *  -NM_EUNKNOWN. */
int nmad_run_rx_progress(int fd, struct nmad_run_rx_s *rx);
/** @brief Forget the current frame (frees a payload still owned by rx) to receive the next one. */
void nmad_run_rx_reset(struct nmad_run_rx_s *rx);

#endif /* NMAD_RUN_PROTO_H */
