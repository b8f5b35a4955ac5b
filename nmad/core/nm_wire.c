/* Wire format encoders and the validating decoder (spec: doc/protocol.md). */
#include "nm_wire.h"
#include <nmad/nm_errno.h>
#include "nm_le.h"
#include <string.h>

void nm_wire_put_pkt_hdr_key(uint8_t *buf, uint16_t n_chunks, uint32_t src_rank, uint32_t total_len,
                             uint64_t job_key)
{
  nm_put8(buf, NM_WIRE_MAGIC);
  nm_put8(buf + 1, NM_WIRE_VERSION);
  nm_put16(buf + 2, n_chunks);
  nm_put32(buf + 4, src_rank);
  nm_put32(buf + 8, total_len);
  nm_put64(buf + NM_WIRE_KEY_OFF, job_key);
}

static void put_msg_hdr(uint8_t *buf, uint8_t type, uint8_t flags, uint32_t session, uint64_t tag, uint32_t seq,
                        uint32_t len)
{
  nm_put8(buf, type);
  nm_put8(buf + 1, flags);
  nm_put16(buf + 2, 0);
  nm_put32(buf + 4, session);
  nm_put64(buf + 8, tag);
  nm_put32(buf + 16, seq);
  nm_put32(buf + 20, len);
}

/* The optional fields after a DATA or DATA_FRAG header, from @p off: the sync cookie, then the prefix length.
 * @return the header's whole length. */
static size_t put_sync_prefix(uint8_t *buf, size_t off, int sync, uint64_t cookie, uint32_t prefix_len)
{
  if (sync) {
    nm_put64(buf + off, cookie);
    off += NM_WIRE_SYNC_LEN;
  }
  if (prefix_len) {
    nm_put32(buf + off, prefix_len);
    nm_put32(buf + off + 4, 0);
    off += NM_WIRE_PREFIX_LEN;
  }
  return off;
}

size_t nm_wire_put_data_hdr(uint8_t *buf, uint32_t session, uint64_t tag, uint32_t seq, uint32_t len, int sync,
                            uint64_t cookie, uint32_t prefix_len)
{
  uint8_t flags = (sync ? NM_WIRE_FLAG_SYNC : 0) | (prefix_len ? NM_WIRE_FLAG_PREFIX : 0);
  put_msg_hdr(buf, NM_WIRE_DATA, flags, session, tag, seq, len);
  return put_sync_prefix(buf, NM_WIRE_MSG_HDR_LEN, sync, cookie, prefix_len);
}

size_t nm_wire_put_frag_hdr(uint8_t *buf, uint32_t session, uint64_t tag, uint32_t seq, uint32_t len,
                            uint32_t offset, uint32_t msg_len, int sync, uint64_t cookie, uint32_t prefix_len)
{
  uint8_t flags = (sync ? NM_WIRE_FLAG_SYNC : 0) | (prefix_len ? NM_WIRE_FLAG_PREFIX : 0);
  put_msg_hdr(buf, NM_WIRE_DATA_FRAG, flags, session, tag, seq, len);
  nm_put32(buf + NM_WIRE_MSG_HDR_LEN, offset);
  nm_put32(buf + NM_WIRE_MSG_HDR_LEN + 4, msg_len);
  return put_sync_prefix(buf, NM_WIRE_FRAG_HDR_LEN, sync, cookie, prefix_len);
}

size_t nm_wire_put_rdv(uint8_t *buf, uint32_t session, uint64_t tag, uint32_t seq, uint64_t msg_len,
                       uint64_t cookie, uint32_t inline_len)
{
  put_msg_hdr(buf, NM_WIRE_RDV, 0, session, tag, seq, inline_len);
  nm_put64(buf + NM_WIRE_MSG_HDR_LEN, msg_len);
  nm_put64(buf + NM_WIRE_MSG_HDR_LEN + 8, cookie);
  return NM_WIRE_RDV_LEN;
}

size_t nm_wire_put_rtr(uint8_t *buf, uint8_t rail, uint64_t cookie, uint64_t offset, uint64_t len, uint64_t rtag)
{
  return nm_wire_put_rtr_n(buf, rail, cookie, offset, len, rtag, 1);
}

size_t nm_wire_put_rtr_n(uint8_t *buf, uint8_t rail, uint64_t cookie, uint64_t offset, uint64_t len, uint64_t rtag,
                         uint32_t n_rtr)
{
  memset(buf, 0, 8);
  nm_put8(buf, NM_WIRE_RTR);
  nm_put8(buf + 1, rail);
  /* 0 and 1 both mean "the only RTR": version-2 packets from before chunking carry 0 here */
  nm_put32(buf + 4, n_rtr > 1 ? n_rtr : 0);
  nm_put64(buf + 8, cookie);
  nm_put64(buf + 16, offset);
  nm_put64(buf + 24, len);
  nm_put64(buf + 32, rtag);
  return NM_WIRE_RTR_LEN;
}

size_t nm_wire_put_ack(uint8_t *buf, uint64_t cookie)
{
  memset(buf, 0, 8);
  nm_put8(buf, NM_WIRE_ACK);
  nm_put64(buf + 8, cookie);
  return NM_WIRE_ACK_LEN;
}

size_t nm_wire_put_credit(uint8_t *buf, uint64_t bytes)
{
  memset(buf, 0, 8);
  nm_put8(buf, NM_WIRE_CREDIT);
  nm_put64(buf + 8, bytes);
  return NM_WIRE_CREDIT_LEN;
}

size_t nm_wire_put_cancel(uint8_t *buf, uint8_t type, uint8_t result, uint32_t session, uint64_t tag, uint32_t seq)
{
  put_msg_hdr(buf, type, result, session, tag, seq, 0); /* the message header's layout, result in the flags byte */
  return NM_WIRE_CANCEL_LEN;
}

/* The reader of put_msg_hdr()'s layout (the caller checked the length and the reserved bytes 2-3). */
static void get_msg_hdr(const uint8_t *p, struct nm_wire_chunk_s *c)
{
  c->flags = p[1];
  c->session = nm_get32(p + 4);
  c->tag = nm_get64(p + 8);
  c->seq = nm_get32(p + 16);
  c->len = nm_get32(p + 20);
}

/* The SYNC cookie and PREFIX length after a DATA or DATA_FRAG header at p + *used; the prefix lies within
 * c->msg_len (set by the caller). @return 0 or -NM_EPROTO. */
static int get_data_extras(const uint8_t *p, size_t left, size_t *used, struct nm_wire_chunk_s *c)
{
  if (c->flags & ~(NM_WIRE_FLAG_SYNC | NM_WIRE_FLAG_PREFIX))
    return -NM_EPROTO;
  if (c->flags & NM_WIRE_FLAG_SYNC) {
    if (left - *used < NM_WIRE_SYNC_LEN)
      return -NM_EPROTO;
    c->cookie = nm_get64(p + *used);
    *used += NM_WIRE_SYNC_LEN;
  }
  if (c->flags & NM_WIRE_FLAG_PREFIX) {
    if (left - *used < NM_WIRE_PREFIX_LEN || nm_get32(p + *used + 4) != 0)
      return -NM_EPROTO;
    c->prefix_len = nm_get32(p + *used);
    *used += NM_WIRE_PREFIX_LEN;
    if (c->prefix_len == 0 || c->prefix_len > c->msg_len)
      return -NM_EPROTO;
  }
  return NM_ESUCCESS;
}

/* The c->len payload bytes at p + used, which must lie in the chunk's @p left bytes; advances *off. */
static int get_payload(const uint8_t *p, size_t left, size_t used, size_t *off, struct nm_wire_chunk_s *c)
{
  if (left - used < c->len)
    return -NM_EPROTO;
  c->payload = p + used;
  *off += used + c->len;
  return NM_ESUCCESS;
}

int nm_wire_peek_key(const uint8_t *buf, size_t len, uint64_t *key)
{
  if (len < NM_WIRE_PKT_HDR_LEN || buf[0] != NM_WIRE_MAGIC || buf[1] != NM_WIRE_VERSION)
    return -NM_EPROTO;
  *key = nm_get64(buf + NM_WIRE_KEY_OFF);
  return NM_ESUCCESS;
}

int nm_wire_parse_pkt(const uint8_t *buf, size_t len, struct nm_wire_pkt_s *pkt)
{
  if (nm_wire_peek_key(buf, len, &pkt->job_key))
    return -NM_EPROTO;
  pkt->n_chunks = nm_get16(buf + 2);
  pkt->src_rank = nm_get32(buf + 4);
  pkt->total_len = nm_get32(buf + 8);
  if (pkt->total_len != len || pkt->n_chunks == 0)
    return -NM_EPROTO;
  return NM_ESUCCESS;
}

/* Each check compares against what remains, so no sum can overflow. */
int nm_wire_next_chunk(const uint8_t *buf, size_t len, size_t *off, struct nm_wire_chunk_s *c)
{
  if (*off >= len)
    return -NM_EPROTO;
  const uint8_t *p = buf + *off;
  size_t left = len - *off;
  memset(c, 0, sizeof(*c));
  c->type = p[0];
  switch (c->type) {
  case NM_WIRE_DATA:
  case NM_WIRE_RDV: {
    if (left < NM_WIRE_MSG_HDR_LEN || nm_get16(p + 2) != 0)
      return -NM_EPROTO;
    get_msg_hdr(p, c);
    size_t used = NM_WIRE_MSG_HDR_LEN;
    if (c->type == NM_WIRE_RDV) {
      if (c->flags != 0 || left < NM_WIRE_RDV_LEN)
        return -NM_EPROTO;
      c->msg_len = nm_get64(p + NM_WIRE_MSG_HDR_LEN);
      c->cookie = nm_get64(p + NM_WIRE_MSG_HDR_LEN + 8);
      used = NM_WIRE_RDV_LEN;
      if (c->len > c->msg_len) /* inline prefix longer than the message */
        return -NM_EPROTO;
      c->prefix_len = c->len;
    } else {
      c->msg_len = c->len;
      if (get_data_extras(p, left, &used, c))
        return -NM_EPROTO;
    }
    return get_payload(p, left, used, off, c);
  }
  case NM_WIRE_DATA_FRAG: {
    if (left < NM_WIRE_FRAG_HDR_LEN || nm_get16(p + 2) != 0)
      return -NM_EPROTO;
    get_msg_hdr(p, c);
    c->offset = nm_get32(p + NM_WIRE_MSG_HDR_LEN);
    c->msg_len = nm_get32(p + NM_WIRE_MSG_HDR_LEN + 4);
    size_t used = NM_WIRE_FRAG_HDR_LEN;
    /* a proper, non-empty part of the message (a whole one travels as DATA), inside it; only the first piece
     * carries the cookie and the prefix length */
    if (c->len == 0 || c->len >= c->msg_len || c->offset >= c->msg_len || c->len > c->msg_len - c->offset ||
        (c->flags && c->offset != 0))
      return -NM_EPROTO;
    if (get_data_extras(p, left, &used, c))
      return -NM_EPROTO;
    return get_payload(p, left, used, off, c);
  }
  case NM_WIRE_RTR:
    if (left < NM_WIRE_RTR_LEN || nm_get16(p + 2) != 0 || nm_get32(p + 4) > NM_WIRE_RTR_MAX)
      return -NM_EPROTO;
    c->n_rtr = nm_get32(p + 4) ? nm_get32(p + 4) : 1;
    c->rail = p[1];
    c->cookie = nm_get64(p + 8);
    c->offset = nm_get64(p + 16);
    c->len = 0;
    c->msg_len = nm_get64(p + 24);
    c->rtag = nm_get64(p + 32);
    if (c->msg_len > UINT64_MAX - c->offset)
      return -NM_EPROTO;
    *off += NM_WIRE_RTR_LEN;
    return NM_ESUCCESS;
  case NM_WIRE_ACK:
  case NM_WIRE_CREDIT: /* same layout: 7 reserved bytes, one u64 */
    if (left < NM_WIRE_ACK_LEN)
      return -NM_EPROTO;
    for (int i = 1; i < 8; i++)
      if (p[i] != 0)
        return -NM_EPROTO;
    c->cookie = nm_get64(p + 8);
    if (c->type == NM_WIRE_CREDIT && c->cookie == 0)
      return -NM_EPROTO;
    *off += NM_WIRE_ACK_LEN;
    return NM_ESUCCESS;
  case NM_WIRE_CANCEL:
  case NM_WIRE_CANCEL_REPLY:
    if (left < NM_WIRE_CANCEL_LEN || nm_get16(p + 2) != 0)
      return -NM_EPROTO;
    get_msg_hdr(p, c); /* the result travels in the flags byte, the length is 0 */
    c->result = c->flags;
    c->flags = 0;
    if (c->len != 0 || c->result > (c->type == NM_WIRE_CANCEL_REPLY ? 1 : 0))
      return -NM_EPROTO;
    *off += NM_WIRE_CANCEL_LEN;
    return NM_ESUCCESS;
  default:
    return -NM_EPROTO;
  }
}

/* A packet that holds one DATA chunk without flags and nothing else: a lone small message, what
 * nm_send_direct_msg() sends, the common case. The checks of nm_wire_parse_pkt() and nm_wire_next_chunk() for it
 * in one pass, without the walk: that walk cost a ping-pong's receiver 5-10 ns of an 8-byte message over sm
 * (doc/performance.md, "A lone message validated in one pass"). @return 1 if @p buf is such a packet and valid
 * (pkt and *c filled as the walk fills them), 0 if not: the walk decides. */
static int nm_wire_validate_lone_data(const uint8_t *buf, size_t len, struct nm_wire_pkt_s *pkt,
                                      struct nm_wire_chunk_s *c)
{
  const size_t head = NM_WIRE_PKT_HDR_LEN + NM_WIRE_MSG_HDR_LEN;
  const uint8_t *p = buf + NM_WIRE_PKT_HDR_LEN;
  /* the payload fills the rest exactly: the walk's bound check and its final off == len in one comparison */
  if (len < head || buf[0] != NM_WIRE_MAGIC || buf[1] != NM_WIRE_VERSION || nm_get16(buf + 2) != 1 ||
      nm_get32(buf + 8) != len || p[0] != NM_WIRE_DATA || p[1] != 0 || nm_get16(p + 2) != 0 ||
      nm_get32(p + 20) != len - head)
    return 0;
  pkt->n_chunks = 1;
  pkt->src_rank = nm_get32(buf + 4);
  pkt->total_len = (uint32_t)len;
  pkt->job_key = nm_get64(buf + NM_WIRE_KEY_OFF);
  *c = (struct nm_wire_chunk_s){.type = NM_WIRE_DATA,
                                .session = nm_get32(p + 4),
                                .tag = nm_get64(p + 8),
                                .seq = nm_get32(p + 16),
                                .len = (uint32_t)(len - head),
                                .msg_len = len - head,
                                .payload = p + NM_WIRE_MSG_HDR_LEN};
  return 1;
}

int nm_wire_validate_keep(const uint8_t *buf, size_t len, struct nm_wire_pkt_s *pkt, struct nm_wire_chunk_s *chunks,
                          unsigned max)
{
  if (max > 0 && nm_wire_validate_lone_data(buf, len, pkt, chunks))
    return NM_ESUCCESS;
  int err = nm_wire_parse_pkt(buf, len, pkt);
  if (err)
    return err;
  size_t off = NM_WIRE_PKT_HDR_LEN;
  struct nm_wire_chunk_s c;
  for (unsigned i = 0; i < pkt->n_chunks; i++) {
    err = nm_wire_next_chunk(buf, len, &off, i < max ? &chunks[i] : &c);
    if (err)
      return err;
  }
  return off == len ? NM_ESUCCESS : -NM_EPROTO;
}

int nm_wire_validate(const uint8_t *buf, size_t len, struct nm_wire_pkt_s *pkt)
{
  return nm_wire_validate_keep(buf, len, pkt, NULL, 0);
}
