/**
 * @file nm_sm_private.h
 * @brief Private: the layout of the "sm" driver's shared segment and its records (drivers/sm/nm_sm.c).
 *
 * Each rank owns one segment (a memfd, so nothing is left in /dev/shm when a rank is killed). Page 0 is the
 * header (the owner's wake-up flag); then one single-producer single-consumer byte ring per possible sender,
 * indexed by the sender's rank. A sender maps only the header page and its own ring of each peer it sends to
 * (made on first use: DESIGN.md rule 8); the owner maps the whole segment and reads the rings of its peers.
 * After the rings, NM_SM_STAGE_SLOTS staging slots: the owner copies there a large send that several peers read
 * (a broadcast's root), and those peers map the slots read-only.
 * Every field a peer writes is untrusted (rule 5): record lengths and kinds are checked before use.
 */
#ifndef NM_SM_PRIVATE_H
#define NM_SM_PRIVATE_H

#include "drivers/nm_driver.h"
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#define NM_SM_PAGE 4096u
#define NM_SM_RING_BYTES (256u * 1024u)          /* data bytes of one sender's ring */
#define NM_SM_RING_STRIDE (NM_SM_PAGE + NM_SM_RING_BYTES) /* control page + data, page-aligned */
#define NM_SM_MAX_PEERS 4096u                      /* ranks of one host; the segment is sparse */
/* The largest packet: an eager message of just under 128 KiB (oversubscribed hosts, nm_config_load()). A record
 * (header + packet, aligned) may take at most half the ring, or one that does not fit before the ring's end could
 * never be placed: the wrap skips the end, and skip + record would exceed the ring even when it is empty. */
#define NM_SM_MAX_PACKET (128u * 1024u - 64u)
#define NM_SM_REC_ALIGN 64u                        /* records start on cache lines */
#define NM_SM_REC_HDR 16u
_Static_assert(2 * ((NM_SM_REC_HDR + NM_SM_MAX_PACKET + NM_SM_REC_ALIGN - 1) / NM_SM_REC_ALIGN * NM_SM_REC_ALIGN) <=
                   NM_SM_RING_BYTES,
               "an sm record must fit twice in a ring");
#define NM_SM_MAGIC 0x6e6d61642d736d36ull /* "nmad-sm6" (sm1: no express ring, sm2: no express_from, sm3: a tail,
                                             sm4: no done marks, sm5: fixed 64 KiB chunks) */
/* The express ring (nm_sm.c, "express packets"): fixed slots in the rest of each ring's control page. */
#define NM_SM_XSLOT 512u                           /* bytes of one slot: a record header and its packet */
#define NM_SM_XSLOTS 7u
#define NM_SM_XMAX (NM_SM_XSLOT - NM_SM_REC_HDR)   /* the largest express packet */
#define NM_SM_REWIND_MAX (4096u + 128u)            /* records up to this size go at the ring's start when it is empty */
/* Ranks on the host up to which our sends skip their fence (nm_sm_wake()): each sleeper's membarrier() interrupts
 * the processors running registered peers, which a host of 64 ranks sleeping and waking every millisecond would
 * feel; up to 16, at most 15 interrupts per sleep, and sleeps come after 1-10 ms of idle waiting. */
#define NM_SM_ASYM_PEERS 16
#define NM_SM_BURST 64                             /* records read from one ring per progress pass */
#define NM_SM_PULL_STEP (64u * 1024u)             /* bytes of CMA copy per progress pass while urgent traffic flows */
/* Without urgent traffic through this rank for NM_SM_URGENT_WINDOW_NS, a large copy goes by steps of up to
 * NM_SM_STEP_MAX (a shared copy: half the transfer, at least NM_SM_PULL_STEP): fewer system calls, and a shared copy
 * of one chunk per side (nm_sm.c, "step sizes"). A multiple of NM_SM_PULL_STEP. */
#define NM_SM_STEP_MAX (1024u * 1024u)
#define NM_SM_URGENT_WINDOW_NS 100000000ull
#define NM_SM_COOP_MIN (128u * 1024u)             /* a large copy from this length on is shared with its sender */
/* Staged sends (nm_sm.c, "staged sends"): slots after the rings, each holding one large send read by several peers. */
#define NM_SM_STAGE_SLOTS 4u
#define NM_SM_STAGE_SLOT (4u * 1024u * 1024u)      /* NMAD_RDV_CHUNK's default: a get rendezvous fits in one slot */
#define NM_SM_STAGE_STEP (32u * 1024u)             /* bytes copied into a staging slot per progress pass */
#define NM_SM_STAGE_MIN (128u * 1024u)             /* shorter sends are read by CMA alone */

/** Header page of a segment. */
struct nm_sm_seg_hdr_s {
  uint64_t magic;
  uint64_t nonce;          /* the owner's, also in its address: a reused pid cannot pass for it */
  _Atomic uint32_t sleeping; /* the owner is about to block on its pipe: the next sender writes one byte */
  /* The owner's large copy shared with its sender (nm_sm.c, "cooperative copy"), on a line of their own: the claim
   * word is (generation << 32) | next chunk to copy; done counts the chunks copied (by either side); bad is the
   * generation of a copy whose sender failed to write a chunk. */
  _Alignas(64) _Atomic uint64_t coop_claim;
  _Atomic uint64_t coop_done;
  _Atomic uint64_t coop_bad;
  /* A sender posted to its express ring (set after the slot's tail, then its bit in express_from): the owner looks
   * at the express rings, first, only while it is set (one load per pass, not one per peer), and then only at the
   * rings of the senders whose bits are set (a word of 64 senders at a time, not a control page per peer). */
  _Alignas(64) _Atomic uint32_t express;
  _Alignas(64) _Atomic uint64_t express_from[NM_SM_MAX_PEERS / 64];
};
_Static_assert(sizeof(struct nm_sm_seg_hdr_s) <= NM_SM_PAGE, "a segment's header fits its page");

/** Control page of one ring: the consumer writes head, the position up to which it has read (positions grow
 *  without wrapping). The producer publishes each record by its stamp (struct nm_sm_rec_s), not by a tail: the
 *  consumer polls the record it expects, so a small packet crosses to the reader's core as one cache line instead
 *  of a tail's line and then the record's (nm_sm_putv()). */
struct nm_sm_ring_ctl_s {
  _Atomic uint64_t head;
  /* The express ring: slots posted (x_tail, by the producer) and read (x_head, by the consumer), each slot a record
   * header (kind NM_SM_PKT) and a packet of at most NM_SM_XMAX bytes. */
  _Alignas(64) _Atomic uint64_t x_tail;
  _Alignas(64) _Atomic uint64_t x_head;
  _Alignas(64) unsigned char x_slots[NM_SM_XSLOTS][NM_SM_XSLOT];
};
_Static_assert(sizeof(struct nm_sm_ring_ctl_s) <= NM_SM_PAGE, "a ring's control page holds its express ring");

enum nm_sm_kind_e {
  NM_SM_PKT = 1,  /* a core packet */
  NM_SM_WRAP = 2, /* the rest of the ring is unused: go on at its start */
  NM_SM_LRTS = 3, /* a large send is ready: nm_sm_lrts_s (the receiver copies it by CMA) */
  NM_SM_LFIN = 4, /* the receiver copied a large send: nm_sm_lfin_s */
  NM_SM_LHELP = 5, /* the receiver invites the sender to copy chunks of a large send too: nm_sm_lhelp_s */
};

/** Record header, NM_SM_REC_HDR bytes, then len bytes of body. In the main ring, stamp, stored last (release),
 *  publishes the record: it names the record's position, keyed by the owner's nonce (nm_sm_stamp() in nm_sm.c), so
 *  the reader knows the record at its head is there without a tail to read. When the reader gives back the space
 *  up to the end of a record, it first overwrites that record's stamp with a done mark (nm_sm_stamp_done()), so
 *  its sender learns that the ring is empty from the line of its last record instead of the head's line. The
 *  express ring's slots, published by x_tail, leave it 0. */
struct nm_sm_rec_s {
  uint32_t len;
  uint32_t kind;
  _Atomic uint64_t stamp;
};

struct nm_sm_lrts_s {
  uint64_t rtag, addr, len, id;
  uint64_t stage; /* 0: read addr by CMA; k + 1: the bytes are at staging slot k of the sender's segment */
};

struct nm_sm_lfin_s {
  uint64_t id;
  int64_t status; /* 0, or -NM_E* */
};

struct nm_sm_lhelp_s {
  uint64_t id;    /* the send's (its LRTS's) */
  uint64_t gen;   /* the copy's generation in the receiver's claim word */
  uint64_t dst;   /* the receive buffer, in the receiver's address space */
  uint64_t len;   /* bytes to copy: the send's length */
  uint64_t chunk; /* bytes per chunk: a multiple of NM_SM_PULL_STEP, at most NM_SM_STEP_MAX */
};

/** What a rank publishes: where its segment and its wake-up pipe are. */
struct nm_sm_addr_s {
  uint64_t magic;
  uint64_t nonce;
  int32_t pid;
  int32_t seg_fd;  /* memfd, opened by peers through /proc/<pid>/fd */
  int32_t wake_fd; /* write end of the owner's pipe, likewise */
  int32_t pad;
};

/** A peer as seen from here: its address, and (once we have sent to it) our ring in its segment. */
struct nm_sm_peer_s {
  struct nm_sm_addr_s addr;
  struct nm_sm_seg_hdr_s *hdr;   /* its header page (mapped on first send) */
  struct nm_sm_ring_ctl_s *out;  /* our ring in its segment */
  const uint8_t *stage;          /* its staging slots, read-only (mapped at its first staged send to us) */
  uint8_t *out_data;
  uint64_t out_tail;             /* our copy of out->tail */
  uint64_t out_head_seen;        /* last head read from out->head */
  uint64_t out_last;             /* position of our last record (UINT64_MAX: none yet), whose done mark we look for */
  uint64_t x_tail, x_head_seen;  /* our express ring in its segment: our copy of x_tail, the last x_head read */
  uint64_t x_in_head;            /* its express ring in our segment: slots up to here are taken */
  int x_depth;                   /* nested reads of its express ring */
  int wake_fd;                   /* write end of its pipe, or -1 */
  uint64_t in_head;              /* its ring in our segment: records up to here are taken (being handled or done) */
  uint64_t in_last;              /* position of the last record taken and not yet marked done (UINT64_MAX: none) */
  struct nm_sm_ring_ctl_s *in_ctl; /* that ring's control page; NULL for ourselves and once dead: not read */
  int in_depth;                  /* nested reads of its ring (an upcall that progresses again) */
  int in_mapped;                 /* its ring's pages are in our page table (populated at its first record) */
  int dead;                      /* a malformed record came from it: its ring is not read any more */
};

/** A large transfer posted here (send: waiting for LFIN; receive: waiting for LRTS, then being copied). */
struct nm_sm_large_s {
  struct nm_sm_large_s *next;
  uint64_t peer, rtag, id, len;
  void *buf;
  void *ctx;
  int err;
  uint64_t src, src_len, got; /* receive being copied: the sender's buffer and length (its LRTS), bytes so far */
  /* cooperative copy: receive: its generation (0: copied alone), and once closed after an error, the chunks that
   * were claimed (the copy ends when that many are done); send: the invitation's generation (0: none) and
   * destination */
  uint64_t coop_gen, coop_dst, coop_closed;
  uint64_t coop_chunk; /* bytes per chunk of the shared copy (receive: chosen at its invitation; send: as invited) */
  int no_coop; /* receive shorter than its send (truncated get rendezvous): copied alone */
  uint64_t stage; /* send: its staging slot + 1 (0: read from buf by CMA); receive: the LRTS's stage field */
  int rts_wait;   /* send: its LRTS goes once its staging slot is filled (nm_sm_stage_fill_step()) */
};

/** A staging slot: one large send's bytes, read by the peers whose LRTS name it. */
struct nm_sm_stage_s {
  const void *buf; /* the send buffer it copies (the key: buf, len) */
  uint64_t len;
  uint64_t filled; /* bytes copied so far: the slot is read (its LRTS sent) once filled == len */
  int refs;        /* sends naming it and not finished: free at 0 */
};

/** A control record to send when the peer's ring has room again. */
struct nm_sm_ctrl_s {
  struct nm_sm_ctrl_s *next;
  uint64_t peer;
  uint32_t kind;
  union {
    struct nm_sm_lrts_s rts;
    struct nm_sm_lfin_s fin;
    struct nm_sm_lhelp_s help;
  } u;
};

struct nm_sm_s {
  struct nm_sm_addr_s self;
  int self_index;                /* our rank, learnt at connect (-1 until then) */
  uint8_t *seg;                  /* our whole segment */
  size_t seg_len;
  int wake_rd;                   /* read end of our pipe: the wait fd */
  int armed;                     /* trywait set our sleeping flag: clear it and drain the pipe at progress */
  int membarrier;                /* the kernel offers membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) to this process */
  int asym_fence;                /* registered for membarrier(): our sends skip the fence of nm_sm_wake() */
  struct nm_sm_peer_s *peers;
  size_t n_peers, cap_peers;
  struct nm_sm_large_s *lsends;  /* waiting for their LFIN */
  struct nm_sm_large_s *lrecvs;  /* posted, waiting for their LRTS */
  struct nm_sm_large_s *rts_early; /* LRTS before its receive was posted */
  struct nm_sm_large_s *pulls, *pulls_tail; /* receives with their LRTS, copied a step per pass, FIFO */
  int pull_yielded;              /* the last pass skipped its copy step for packets (nm_sm_progress()) */
  struct nm_sm_large_s *done;    /* completed or cancelled, reported at the next progress */
  struct nm_sm_ctrl_s *ctrl_head, *ctrl_tail; /* control records waiting for ring room */
  uint64_t next_id;
  uint32_t coop_gen;             /* last generation of our claim word */
  int coop_on;                   /* share large copies with their senders (off when ranks outnumber cores) */
  int coop_told;                 /* coop_on comes from the launcher's count (nm_sm_host_oversubscribed()) */
  uint64_t coop_pulled, coop_pushed; /* chunks of shared copies copied here as receiver, as sender (tests) */
  int coop_invited;              /* sends with an invitation not used up (coop_gen != 0) */
  uint64_t urgent_ns;            /* CLOCK_MONOTONIC_COARSE of the last express packet sent or read here (0: none) */
  struct nm_sm_stage_s stage[NM_SM_STAGE_SLOTS];
  unsigned stage_used; /* slots with refs > 0: while none is, a progress pass does not look at the slots */
  uint64_t staged_sends, staged_reads; /* sends announced from a slot, receives copied from one (tests) */
};

#endif /* NM_SM_PRIVATE_H */
