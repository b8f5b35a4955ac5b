/**
 * @file nm_wire.h
 * @brief Private: the wire format (doc/protocol.md is the spec). Encoders write little-endian fixed-width
 *        fields; the decoder validates every length, count and offset before anything reads a payload
 *        (DESIGN.md rule 5).
 */
#ifndef NM_WIRE_H
#define NM_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define NM_WIRE_MAGIC 0x4e   /* 'N' */
#define NM_WIRE_VERSION 2 /* 2: the job key joined the global header */

/** Global packet header: magic u8, version u8, chunk count u16, source rank u32, total length u32, job key u64.
 *  The job key comes last so that the layout of versions 1 and 2 agrees on the first 12 bytes. */
#define NM_WIRE_PKT_HDR_LEN 20
/** Offset of the job key in the global header. */
#define NM_WIRE_KEY_OFF 12
/** The job key of a core that no launcher gave one (unit tests): packets must still carry it. */
#define NM_WIRE_KEY_NONE 0
/** Common header of DATA and RDV: type u8, flags u8, reserved u16, session u32, tag u64, seq u32, len u32. */
#define NM_WIRE_MSG_HDR_LEN 24
/** Extra bytes of a DATA chunk with NM_WIRE_FLAG_SYNC: cookie u64. */
#define NM_WIRE_SYNC_LEN 8
/** Extra bytes of a DATA chunk with NM_WIRE_FLAG_PREFIX: prefix length u32, reserved u32. */
#define NM_WIRE_PREFIX_LEN 8
/** RDV chunk: common header + msg_len u64 + cookie u64, then `len` inline bytes (the message's prefix). */
#define NM_WIRE_RDV_LEN (NM_WIRE_MSG_HDR_LEN + 16)
/** RTR chunk: type u8, rail u8, reserved u16, RTR count u32, cookie u64, offset u64, len u64, rtag u64. */
#define NM_WIRE_RTR_LEN 40
/** ACK chunk: type u8, reserved u8*7, cookie u64. */
#define NM_WIRE_ACK_LEN 16
/** CANCEL and CANCEL_REPLY chunks: type u8, result u8, reserved u16, session u32, tag u64, seq u32, reserved u32. */
#define NM_WIRE_CANCEL_LEN 24
/** CREDIT chunk: type u8, reserved u8*7, bytes u64 (eager credit the receiver gives back to the sender). */
#define NM_WIRE_CREDIT_LEN 16
/** DATA_FRAG chunk: the common header (len: this piece's bytes), then offset u32 and msg_len u32 (the whole
 *  message); the piece at offset 0 alone may carry the SYNC cookie and the PREFIX length, as DATA does. */
#define NM_WIRE_FRAG_HDR_LEN 32
/** What one eager message costs in flow-control credit on top of its payload bytes: the receiver's record of an
 *  unexpected message (struct, allocator overhead) whatever the message's size (doc/protocol.md, "Flow control"). */
#define NM_WIRE_CREDIT_MSG_COST 128

enum nm_wire_type_e {
  NM_WIRE_DATA = 1, /* eager message: the whole payload follows */
  NM_WIRE_RDV = 2,  /* rendezvous request: message too large for eager */
  NM_WIRE_RTR = 3,  /* ready to receive: send [offset, offset+len) on rail with rtag */
  NM_WIRE_ACK = 4,  /* synchronous send matched */
  NM_WIRE_CANCEL = 5,      /* sender: withdraw message (session, tag, seq) unless a receive matched it */
  NM_WIRE_CANCEL_REPLY = 6, /* receiver: the outcome (result 1: withdrawn, 0: too late, it was matched) */
  NM_WIRE_CREDIT = 7,       /* receiver: eager credit returned (flow control) */
  NM_WIRE_DATA_FRAG = 8     /* a piece of an eager message cut to the rail's inject size (core/nm_frag.c) */
};
#define NM_WIRE_FLAG_SYNC 0x01   /* DATA: the sender waits for an ACK carrying cookie */
#define NM_WIRE_FLAG_PREFIX 0x02 /* DATA: the first prefix_len payload bytes are a header (rpc) */
#define NM_FLAG_LOCAL_BCAST 0x80 /* never on the wire: a stored message that came by dynamic broadcast */
#define NM_FLAG_LOCAL_LOST 0x40  /* never on the wire: a broadcast lost on its way (cookie: the error to report) */
#define NM_WIRE_TYPE_MAX 8

/** A parsed packet header. */
struct nm_wire_pkt_s {
  uint16_t n_chunks;
  uint32_t src_rank;
  uint32_t total_len;
  uint64_t job_key;
};

/** A parsed and validated chunk; payload points inside the packet. */
struct nm_wire_chunk_s {
  uint8_t type, flags, rail;
  uint32_t session;
  uint64_t tag;
  uint32_t seq;
  uint32_t len;         /* DATA: payload bytes; RDV: inline prefix bytes */
  uint32_t prefix_len;  /* DATA with FLAG_PREFIX, RDV: bytes of the message that are its header (rpc) */
  uint64_t msg_len;     /* DATA, RDV, DATA_FRAG: total message length; RTR: bytes requested */
  uint64_t cookie;      /* RDV, RTR, ACK, sync DATA; CREDIT: the bytes returned */
  uint8_t result;       /* CANCEL_REPLY: 1 withdrawn, 0 too late */
  uint64_t offset;      /* RTR; DATA_FRAG: where the payload goes in the message */
  uint64_t rtag;        /* RTR */
  const uint8_t *payload;
  uint32_t n_rtr;       /* RTR: RTRs the receiver sends for this cookie in all (1 .. NM_WIRE_RTR_MAX) */
};

/** Flow-control credit an eager message of @p len bytes (header included) takes from its sender's window. */
static inline uint64_t nm_wire_credit_cost(uint64_t len) { return len + NM_WIRE_CREDIT_MSG_COST; }

/** Bytes a DATA chunk with @p len payload bytes takes. */
static inline size_t nm_wire_data_size(size_t len, int sync, int prefix) {
  return NM_WIRE_MSG_HDR_LEN + (sync ? NM_WIRE_SYNC_LEN : 0) + (prefix ? NM_WIRE_PREFIX_LEN : 0) + len;
}

/** Bytes of a DATA_FRAG header (without its payload); @p sync and @p prefix only for the piece at offset 0. */
static inline size_t nm_wire_frag_hdr_size(int sync, int prefix) {
  return NM_WIRE_FRAG_HDR_LEN + (sync ? NM_WIRE_SYNC_LEN : 0) + (prefix ? NM_WIRE_PREFIX_LEN : 0);
}

/** Write the global header of a packet of @p total_len bytes (header included) holding @p n_chunks chunks, sent
 *  by @p src_rank of the job whose key is @p job_key (nm_core_set_job_key()). */
void nm_wire_put_pkt_hdr_key(uint8_t *buf, uint16_t n_chunks, uint32_t src_rank, uint32_t total_len,
                             uint64_t job_key);
/** nm_wire_put_pkt_hdr_key() with NM_WIRE_KEY_NONE: packets for a core without a job key (unit tests). */
static inline void nm_wire_put_pkt_hdr(uint8_t *buf, uint16_t n_chunks, uint32_t src_rank, uint32_t total_len)
{
  nm_wire_put_pkt_hdr_key(buf, n_chunks, src_rank, total_len, NM_WIRE_KEY_NONE);
}
/** Write a DATA chunk header (+ sync cookie, + prefix length when @p prefix_len > 0); the caller copies the
 *  payload right after. @return header bytes. */
size_t nm_wire_put_data_hdr(uint8_t *buf, uint32_t session, uint64_t tag, uint32_t seq, uint32_t len, int sync,
                            uint64_t cookie, uint32_t prefix_len);
/** Write a DATA_FRAG header for message bytes [@p offset, @p offset + @p len) of a message of @p msg_len bytes;
 *  @p sync / @p prefix_len only when @p offset is 0 (the caller copies the payload right after).
 *  @return header bytes (nm_wire_frag_hdr_size()). */
size_t nm_wire_put_frag_hdr(uint8_t *buf, uint32_t session, uint64_t tag, uint32_t seq, uint32_t len,
                            uint32_t offset, uint32_t msg_len, int sync, uint64_t cookie, uint32_t prefix_len);
/** Write an RDV chunk whose @p inline_len first message bytes follow it (the caller copies them).
 *  @return header bytes (without the inline bytes). */
size_t nm_wire_put_rdv(uint8_t *buf, uint32_t session, uint64_t tag, uint32_t seq, uint64_t msg_len,
                       uint64_t cookie, uint32_t inline_len);
size_t nm_wire_put_rtr(uint8_t *buf, uint8_t rail, uint64_t cookie, uint64_t offset, uint64_t len, uint64_t rtag);
/** Most RTRs one rendezvous message may be asked with (chunks of at least NM_RDV_CHUNK_MIN bytes: 2^24 of them
 *  cover 256 GiB). */
#define NM_WIRE_RTR_MAX (1u << 24)
/** Write an RTR that is one of @p n_rtr (1 .. NM_WIRE_RTR_MAX) the receiver sends for @p cookie (a message cut
 *  in chunks, possibly across rails: doc/protocol.md, "RTR"). @return NM_WIRE_RTR_LEN. */
size_t nm_wire_put_rtr_n(uint8_t *buf, uint8_t rail, uint64_t cookie, uint64_t offset, uint64_t len, uint64_t rtag,
                         uint32_t n_rtr);
size_t nm_wire_put_ack(uint8_t *buf, uint64_t cookie);
/** Write a CREDIT chunk returning @p bytes of eager credit. @return NM_WIRE_CREDIT_LEN. */
size_t nm_wire_put_credit(uint8_t *buf, uint64_t bytes);
/** Write a CANCEL (@p type NM_WIRE_CANCEL, @p result 0) or CANCEL_REPLY chunk. @return NM_WIRE_CANCEL_LEN. */
size_t nm_wire_put_cancel(uint8_t *buf, uint8_t type, uint8_t result, uint32_t session, uint64_t tag, uint32_t seq);

/** Read the job key of a packet before anything else is parsed (the first door, nm_core_packet()): only the
 *  length, magic and version are looked at. @return 0 and *key set, or -NM_EPROTO when the bytes are not a packet
 *  of this protocol version (shorter than the header, another magic or version). */
int nm_wire_peek_key(const uint8_t *buf, size_t len, uint64_t *key);
/** Parse and validate the packet header against the received length. @return 0 or -NM_EPROTO. */
int nm_wire_parse_pkt(const uint8_t *buf, size_t len, struct nm_wire_pkt_s *pkt);
/** Parse the chunk at *off in a packet of @p len bytes, validate it, advance *off. @return 0 or -NM_EPROTO. */
int nm_wire_next_chunk(const uint8_t *buf, size_t len, size_t *off, struct nm_wire_chunk_s *c);
/** Validate a whole packet: header, then every chunk, and that the chunks fill it exactly.
 *  @return 0 or -NM_EPROTO. */
int nm_wire_validate(const uint8_t *buf, size_t len, struct nm_wire_pkt_s *pkt);
/** nm_wire_validate() that also keeps the first @p max parsed chunks in @p chunks (so that dispatching needs
 *  no second parse for packets of up to @p max chunks). */
int nm_wire_validate_keep(const uint8_t *buf, size_t len, struct nm_wire_pkt_s *pkt, struct nm_wire_chunk_s *chunks,
                          unsigned max);

#endif /* NM_WIRE_H */
