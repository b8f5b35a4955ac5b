/* Data descriptors (NewMadeleine's nm_data_s, issue 16 deliverable 2): builders and the gather / scatter walks
 * the sendrecv and mcast compatibility layers use. One traversal function per kind; the walks below only see
 * (ptr, len) pieces, so a new kind (MPI datatype, nm_mpi_nmad.c) needs no change here. */
#include <nm_data.h>
#include <nmad/nm_errno.h>
#include <string.h>

static void nm_data_contig_traverse(const struct nm_data_s *d, nm_data_apply_t apply, void *ctx)
{
  if (d->content.contig.len)
    apply(d->content.contig.ptr, d->content.contig.len, ctx);
}

static void nm_data_iov_traverse(const struct nm_data_s *d, nm_data_apply_t apply, void *ctx)
{
  for (int i = 0; i < d->content.iov.n; i++)
    if (d->content.iov.v[i].iov_len)
      apply(d->content.iov.v[i].iov_base, d->content.iov.v[i].iov_len, ctx);
}

static const struct nm_data_ops_s nm_data_contig_ops = {nm_data_contig_traverse};
static const struct nm_data_ops_s nm_data_iov_ops = {nm_data_iov_traverse};

void nm_data_null_build(struct nm_data_s *data) { memset(data, 0, sizeof(*data)); }

void nm_data_contiguous_build(struct nm_data_s *data, void *ptr, nm_len_t len)
{
  memset(data, 0, sizeof(*data));
  data->ops = &nm_data_contig_ops;
  data->size = len;
  data->content.contig.ptr = ptr;
  data->content.contig.len = len;
}

void nm_data_iov_build(struct nm_data_s *data, const struct iovec *v, int n)
{
  memset(data, 0, sizeof(*data));
  data->ops = &nm_data_iov_ops;
  data->content.iov.v = v;
  data->content.iov.n = n > 0 ? n : 0;
  for (int i = 0; i < data->content.iov.n; i++)
    data->size += v[i].iov_len;
}

int nm_data_generic_build(struct nm_data_s *data, const struct nm_data_ops_s *ops, const void *content,
                          size_t content_len, nm_len_t size)
{
  if (!data || !ops || !ops->traverse || content_len > sizeof(data->content))
    return -NM_EINVAL;
  memset(data, 0, sizeof(*data));
  data->ops = ops;
  data->size = size;
  if (content_len)
    memcpy(&data->content, content, content_len);
  return NM_ESUCCESS;
}

/* A walk over the window [off, off + len) of the message: pos is the message offset of the current piece. */
struct nm_data_walk_s {
  nm_len_t off, len, pos;
  char *buf;     /* gather destination / scatter source, advanced as bytes move */
  int to_buf;    /* 1 gather, 0 scatter */
  nm_len_t done;
  void *contig;  /* nm_data_contig_at(): the address found */
  int pieces;
};

static void nm_data_walk_copy(void *ptr, nm_len_t len, void *ctx)
{
  struct nm_data_walk_s *w = ctx;
  nm_len_t start = w->pos, end = w->pos + len;
  w->pos = end;
  nm_len_t lo = start > w->off ? start : w->off, hi = end < w->off + w->len ? end : w->off + w->len;
  if (lo >= hi)
    return;
  char *p = (char *)ptr + (lo - start);
  if (w->to_buf)
    memcpy(w->buf + (lo - w->off), p, hi - lo);
  else
    memcpy(p, w->buf + (lo - w->off), hi - lo);
  w->done += hi - lo;
}

nm_len_t nm_data_copy_to(const struct nm_data_s *data, nm_len_t offset, nm_len_t len, void *dst)
{
  if (!data->ops || !len)
    return 0;
  struct nm_data_walk_s w = {.off = offset, .len = len, .buf = dst, .to_buf = 1};
  data->ops->traverse(data, nm_data_walk_copy, &w);
  return w.done;
}

nm_len_t nm_data_copy_from(const struct nm_data_s *data, nm_len_t offset, nm_len_t len, const void *src)
{
  if (!data->ops || !len)
    return 0;
  struct nm_data_walk_s w = {.off = offset, .len = len, .buf = (char *)src, .to_buf = 0};
  data->ops->traverse(data, nm_data_walk_copy, &w);
  return w.done;
}

static void nm_data_walk_find(void *ptr, nm_len_t len, void *ctx)
{
  struct nm_data_walk_s *w = ctx;
  if (w->pos <= w->off && w->off + w->len <= w->pos + len)
    w->contig = (char *)ptr + (w->off - w->pos);
  w->pos += len;
}

void *nm_data_contig_at(const struct nm_data_s *data, nm_len_t offset, nm_len_t len)
{
  if (!data->ops || !len || offset + len > data->size)
    return NULL;
  struct nm_data_walk_s w = {.off = offset, .len = len};
  data->ops->traverse(data, nm_data_walk_find, &w);
  return w.contig;
}

static void nm_data_walk_count(void *ptr, nm_len_t len, void *ctx)
{
  (void)ptr;
  (void)len;
  ((struct nm_data_walk_s *)ctx)->pieces++;
}

int nm_data_pieces(const struct nm_data_s *data)
{
  if (!data->ops)
    return 0;
  struct nm_data_walk_s w = {0};
  data->ops->traverse(data, nm_data_walk_count, &w);
  return w.pieces;
}

static void nm_data_walk_first(void *ptr, nm_len_t len, void *ctx)
{
  struct nm_data_walk_s *w = ctx;
  if (!w->pieces++)
    w->len = len;
}

nm_len_t nm_data_first_piece(const struct nm_data_s *data)
{
  if (!data->ops)
    return 0;
  struct nm_data_walk_s w = {0};
  data->ops->traverse(data, nm_data_walk_first, &w);
  return w.len;
}
