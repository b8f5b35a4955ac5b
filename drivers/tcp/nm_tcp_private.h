/**
 * @file nm_tcp_private.h
 * @brief Private: the "ntcp" driver's wire format and state (drivers/tcp/nm_tcp.c).
 *
 * Each rank listens on one TCP port. The first rank of a pair to send connects (its outgoing connection), and the
 * other accepts it as its incoming connection and writes its own frames back on it: one connection for both
 * directions, so that replies carry the TCP acknowledgements of what they answer (a connection per direction cost
 * every message an ACK segment of its own: 2.3 us of an 8 B one-way over loopback, doc/performance.md). Only when
 * both ranks send before either has read the other's HELLO does each write on a connection of its own; each side
 * keeps writing on the connection it chose first (a frame never straddles two), and reads both. A connection
 * starts with a HELLO frame naming the connecting rank and the nonce the acceptor published for it; then, in each
 * direction, PKT frames (a core packet) and DATA frames (a slice of a large transfer, for the rendezvous tag the
 * receiver chose and posted). Everything a peer writes is untrusted (DESIGN.md rule 5): kinds, lengths and tags are
 * checked before use, and a bad frame closes that peer's connections.
 */
#ifndef NM_TCP_PRIVATE_H
#define NM_TCP_PRIVATE_H

#include "drivers/nm_driver.h"
#include <stdint.h>
#include <sys/types.h>

#define NM_TCP_MAGIC 0x6e6d61642d746370ull /* "nmad-tcp" */
#define NM_TCP_HDR 16u                      /* frame header: kind u32, len u32, tag u64, little-endian */
/* The largest packet: an eager message of just under 128 KiB (the oversubscribed eager threshold, as sm's). */
#define NM_TCP_MAX_PACKET (128u * 1024u - 64u)
/* Bytes of a large transfer per DATA frame, and written to one connection per progress pass: what the writer
 * puts ahead of a later packet in the kernel's buffers. Measured over loopback (doc/performance.md, "The ntcp
 * driver"): urgent 8 B behind bulk 1.6-3x its idle latency with 32 KiB, 2.4-3.3x with 64 KiB, 6-11x with 256 KiB
 * written per pass; bandwidth 2.2-3.2 GB/s with 32 KiB. */
#define NM_TCP_SLICE (32u * 1024u)
#define NM_TCP_WRITE_BYTES NM_TCP_SLICE
/* Without urgent traffic from this rank for NM_TCP_URGENT_WINDOW_NS, a DATA frame of a transfer of at least
 * NM_TCP_LONG_MIN bytes, and the bytes written to one connection per pass, go up to NM_TCP_SLICE_MAX: a system call
 * per 32 KiB is what a large transfer cost (1 MiB ping-pong over loopback, plain sockets: 467 us by 32 KiB calls,
 * 270 us by one; doc/performance.md, "ntcp: long frames while no urgent traffic"). Shorter transfers keep 32 KiB
 * frames: two ranks exchanging 64 KiB took 20% longer in one frame each. The first urgent packet after a calm
 * stretch may wait for one long frame. */
#define NM_TCP_SLICE_MAX (1024u * 1024u)
#define NM_TCP_LONG_MIN (256u * 1024u)
#define NM_TCP_URGENT_WINDOW_NS 100000000ull
/* Bytes read from one connection per progress pass (a pass also stops at the first whole packet). */
#define NM_TCP_READ_BYTES (256u * 1024u)
/* Bytes a read takes at once when it expects a frame header: a header and a short packet come in one recv(). */
#define NM_TCP_STAGE 4096u
/* Epoll data of a connection we made: its peer index with this bit (the ones we accepted: the index alone). */
#define NM_TCP_OUT_EV (1ull << 63)
/* Socket events taken per progress pass. */
#define NM_TCP_EVENTS 64
/* Packet bytes queued to one peer before send() answers -NM_EAGAIN. */
#define NM_TCP_QUEUE_MAX (8u * 1024u * 1024u)

enum nm_tcp_kind_e {
  NM_TCP_HELLO = 1, /* tag: the sender's rank; body: 8 bytes, the nonce the receiver published */
  NM_TCP_PKT = 2,   /* body: one core packet */
  NM_TCP_DATA = 3,  /* tag: the rendezvous tag; body: the next bytes of that large transfer */
};

/** What a rank publishes. */
struct nm_tcp_addr_s {
  uint64_t magic;
  uint64_t nonce; /* a sender proves it read our address from the launcher by echoing it in its HELLO */
  uint32_t ip;    /* IPv4, network order */
  uint16_t port;  /* network order */
  uint16_t pad;
};

/** A packet copied for sending: header + body, written from off. */
struct nm_tcp_out_s {
  struct nm_tcp_out_s *next;
  size_t len, off;
  uint8_t bytes[];
};

/** A large transfer: a posted receive (filled by DATA frames in order) or a send (cut into DATA frames). */
struct nm_tcp_large_s {
  struct nm_tcp_large_s *next;
  uint64_t peer, rtag, len, done; /* done: bytes received, or sent */
  uint8_t *buf;
  void *ctx;
  int err;
};

/** An accepted connection whose HELLO is not complete yet. */
struct nm_tcp_pending_s {
  struct nm_tcp_pending_s *next;
  int fd;
  size_t got;
  uint8_t hello[NM_TCP_HDR + 8];
};

/** The reading side of one connection with a peer (and its socket), allocated when the connection is made: a peer
 *  never sent to costs its address only (DESIGN.md rule 8). */
struct nm_tcp_conn_s {
  int fd;
  uint8_t in_hdr[NM_TCP_HDR];
  size_t in_hdr_got;
  uint32_t in_kind, in_len;
  size_t in_got;                 /* body bytes read of the current frame */
  uint8_t *in_pkt;               /* NM_TCP_MAX_PACKET bytes, the packet being read */
  uint8_t stage[NM_TCP_STAGE];   /* bytes read ahead of the frame being parsed: stage[st_off, st_len) */
  size_t st_off, st_len;
  struct nm_tcp_large_s *in_lr;  /* the receive a DATA frame fills */
};

/* A peer's two connections: the one we made, the one it made (accepted once its HELLO proved it). */
enum { NM_TCP_OUT = 0, NM_TCP_IN = 1 };

struct nm_tcp_peer_s {
  struct nm_tcp_addr_s addr;
  struct nm_tcp_conn_s *conn[2]; /* [NM_TCP_OUT], [NM_TCP_IN]; NULL until made */
  int wc;            /* the connection we write on (NM_TCP_OUT or NM_TCP_IN), -1 until the first write */
  int dead;          /* a connection failed or a bad frame came: every operation with it fails */
  int out_watch;     /* the write connection is in the epoll set for EPOLLOUT (something waits to be written) */
  /* sending */
  struct nm_tcp_out_s *pk_head, *pk_tail; /* packets, before any further DATA frame */
  struct nm_tcp_out_s *pk_urgent;         /* the last urgent packet queued and not yet written (send_urgent), or NULL */
  size_t pk_bytes;
  struct nm_tcp_large_s *ls_head, *ls_tail; /* large sends, in order */
  uint8_t slice_hdr[NM_TCP_HDR];
  uint64_t slice_len, slice_off; /* the DATA frame being written: body bytes, bytes written (header included) */
  int in_slice;
};

struct nm_tcp_s {
  struct nm_tcp_addr_s self;
  int self_index;
  int listen_fd, epoll_fd;
  struct nm_tcp_peer_s *peers;
  size_t n_peers, cap_peers;
  struct nm_tcp_pending_s *pending;
  uint64_t urgent_ns;            /* when this rank last sent an urgent packet (nm_drv_coarse_ns()), 0: never */
  struct nm_tcp_large_s *lrecvs; /* posted receives */
  struct nm_tcp_large_s *done;   /* finished large transfers, reported at the end of the pass */
};

#endif /* NM_TCP_PRIVATE_H */
