/**
 * @file nm_data.h
 * @brief NewMadeleine's data descriptors (struct nm_data_s) over nmad: a message's bytes described as a sequence
 *        of contiguous pieces in the caller's memory, so that a layout (iovec, MPI datatype) is sent and received
 *        without the caller packing it (issue 16, deliverable 2; doc/newmad.md). Compat layer: nmad's own
 *        interfaces take one contiguous buffer.
 *
 * A descriptor is a small value (copied by nm_sr_send_pack_data() / nm_sr_recv_unpack_data(): it may live on the
 * caller's stack); the memory it describes must stay valid until the request completes. Its pieces are visited
 * in message order by its ops->traverse function; builders exist for contiguous memory, an iovec and (in
 * nm_mpi_nmad.h) an MPI datatype. Thread-safety: descriptors are plain values; concurrent use of distinct
 * descriptors is safe.
 */
#ifndef NM_DATA_H
#define NM_DATA_H

#include <sys/uio.h>
#include <nmad/nm_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct nm_data_s;
/** Called once per contiguous piece: @p ptr, @p len bytes (len > 0), @p ctx the traversal's context. */
typedef void (*nm_data_apply_t)(void *ptr, nm_len_t len, void *ctx);

/** How to walk one kind of descriptor (contiguous, iovec, MPI datatype...). */
struct nm_data_ops_s {
  /** Visit every piece of @p data in message order. */
  void (*traverse)(const struct nm_data_s *data, nm_data_apply_t apply, void *ctx);
};

/** Room for a descriptor's content, in 64-bit words (enough for a datatype: base, count, type pointer). */
#define NM_DATA_CONTENT_WORDS 6

/** A data descriptor. Fields are the builders'; read them through the functions below. */
struct nm_data_s {
  const struct nm_data_ops_s *ops; /**< NULL: the null descriptor (no data) */
  nm_len_t size;                   /**< total bytes described */
  union {
    struct { void *ptr; nm_len_t len; } contig;
    struct { const struct iovec *v; int n; } iov;
    uint64_t words[NM_DATA_CONTENT_WORDS];
  } content;
};

/** @brief The null descriptor (0 bytes). */
void nm_data_null_build(struct nm_data_s *data);
/** @brief @p len bytes at @p ptr (ptr may be NULL when len is 0). */
void nm_data_contiguous_build(struct nm_data_s *data, void *ptr, nm_len_t len);
/** @brief The @p n pieces of @p v, in order. The iovec array itself must stay valid while the descriptor is used
 *  (it is not copied, as NewMadeleine's). Empty pieces are allowed. */
void nm_data_iov_build(struct nm_data_s *data, const struct iovec *v, int n);
/** @brief Build a descriptor of a caller-defined kind: @p ops walks it, @p size is its byte count and @p content,
 *  @p content_len bytes (at most NM_DATA_CONTENT_WORDS * 8), is copied into it. @return 0 or -NM_EINVAL. */
int nm_data_generic_build(struct nm_data_s *data, const struct nm_data_ops_s *ops, const void *content,
                          size_t content_len, nm_len_t size);

/** @brief Bytes described by @p data. */
static inline nm_len_t nm_data_size(const struct nm_data_s *data) { return data->size; }

/** @brief Copy bytes [offset, offset + len) of the message described by @p data into @p dst (gather). Bytes past
 *  the end are not copied. @return bytes copied. */
nm_len_t nm_data_copy_to(const struct nm_data_s *data, nm_len_t offset, nm_len_t len, void *dst);
/** @brief Copy @p len bytes from @p src into bytes [offset, offset + len) of @p data (scatter). Bytes past the end
 *  are dropped. @return bytes copied. */
nm_len_t nm_data_copy_from(const struct nm_data_s *data, nm_len_t offset, nm_len_t len, const void *src);
/** @brief Where bytes [offset, offset + len) of @p data are, when they are one contiguous piece of memory.
 *  @return the address, or NULL when they span several pieces or pass the end (len 0: NULL). */
void *nm_data_contig_at(const struct nm_data_s *data, nm_len_t offset, nm_len_t len);
/** @brief Bytes of the first non-empty piece of @p data (0 when empty). */
nm_len_t nm_data_first_piece(const struct nm_data_s *data);
/** @brief Number of non-empty pieces of @p data. */
int nm_data_pieces(const struct nm_data_s *data);

#ifdef __cplusplus
}
#endif
#endif /* NM_DATA_H */
