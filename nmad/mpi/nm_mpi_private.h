/**
 * @file nm_mpi_private.h
 * @brief Private: the objects of the MPI shim and the internal API its families share.
 *
 * Files (one family each): mpi_env.c (init/finalize, errors, attributes of WORLD, names), mpi_handle.c (handle
 * tables), mpi_p2p.c + mpi_request.c (point-to-point, requests, wait/test), mpi_comm.c + mpi_group.c +
 * mpi_topo.c (communicators, groups, intercommunicators, cartesian topology), mpi_datatype.c + mpi_op.c
 * (datatypes, pack/unpack, reduction operations), mpi_coll.c (+ mpi_coll_sched.c) (blocking and non-blocking
 * collectives), mpi_unsupported.c (windows, files, dist graphs: present, MPI_ERR_UNSUPPORTED_OPERATION),
 * mpi_ext.c (MPIX_ extensions).
 *
 * Global state: MPI's API has no context argument, so the shim keeps exactly one global, `nm_mpi` (defined in
 * mpi_env.c). This is the documented exception to DESIGN.md rule 1: it lives in the shim only, never in the core.
 *
 * Conventions:
 *  - every public function is defined as PMPI_X, preceded by NM_MPI_ALIAS(X) which makes MPI_X a weak alias;
 *  - inside the shim, call PMPI_X (never MPI_X), so that profiling tools see only the application's calls;
 *  - errors: `return nm_mpi_error(comm, MPI_ERR_xxx, __func__);` applies the communicator's error handler
 *    (MPI_COMM_WORLD's for functions without a communicator, e.g. datatypes);
 *  - nmad tags: ((uint64_t)context << 32) | (uint32_t)mpi_tag. A communicator owns two contexts: `context`
 *    (even, point-to-point) and `context + 1` (collectives), so collectives never match application receives.
 */
#ifndef NM_MPI_PRIVATE_H
#define NM_MPI_PRIVATE_H

#include "mpi.h"
#include <nmad/nm_launcher.h>
#include <nmad/nm_sendrecv.h>
#include <nmad/nm_mcast.h>
#include <nmad/nm_coll.h>
#include <nmad/nm_coll_bcast.h>
#include <nmad/nm_coll_model.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* Everything declared from here on is internal to libnmad_mpi: hidden symbols are called directly (no PLT, no
 * GOT for the global state) and may be inlined; only the MPI_/PMPI_/MPIX_ functions of mpi.h are exported. */
#pragma GCC visibility push(hidden)

#define NM_MPI_PRAGMA(x) _Pragma(#x)
/** Make MPI_name a weak alias of PMPI_name (write it just before the PMPI_name definition). */
#define NM_MPI_ALIAS(name) NM_MPI_PRAGMA(weak MPI_##name = PMPI_##name)
/** The same for the extensions: MPIX_name weak alias of PMPIX_name. */
#define NM_MPIX_ALIAS(name) NM_MPI_PRAGMA(weak MPIX_##name = PMPIX_##name)

#define NM_MPI_TAG_UB 0x7fffffff
#define NM_MPI_TAG_MASK_ANY ((nm_tag_t)0xffffffff00000000ULL) /* context only: MPI_ANY_TAG */

/* ---------------------------------------------------------------- handle tables (mpi_handle.c) */

/** A table of objects indexed by handle. Handles below `first` are predefined (reserved). */
struct nm_mpi_table_s {
  void **obj;
  int n;     /* entries in use up to n (some may be NULL) */
  int cap;
  int first; /* first handle given to user objects */
};
void nm_mpi_table_init(struct nm_mpi_table_s *t, int first);
void nm_mpi_table_destroy(struct nm_mpi_table_s *t);
/** Store obj under a free handle >= first. @return the handle, or -1 when out of memory. */
int nm_mpi_table_add(struct nm_mpi_table_s *t, void *obj);
/** Store obj under a given (predefined) handle. @return 0 or -1. */
int nm_mpi_table_set(struct nm_mpi_table_s *t, int handle, void *obj);
/** The object of a handle, or NULL for an unknown / freed / out-of-range handle (never crashes). Inline: every
 *  MPI call looks up its handles, this is on the latency path. (n <= cap always: n grows after a reserve.) */
static inline void *nm_mpi_table_get(const struct nm_mpi_table_s *t, int handle)
{
  return (handle > 0 && handle < t->n) ? t->obj[handle] : NULL;
}
void nm_mpi_table_remove(struct nm_mpi_table_s *t, int handle);

/* ---------------------------------------------------------------- datatypes (mpi_datatype.c) */

/** One contiguous run of bytes of a datatype's type map, relative to the element's start (buf). */
struct nm_mpi_block_s {
  MPI_Aint disp;
  MPI_Aint len;
};

struct nm_mpi_datatype_s {
  int refcount;
  int committed;                /* usable in communication (predefined types are, from MPI_Init) */
  int predefined;
  int combiner;                 /* MPI_COMBINER_* */
  MPI_Count size;               /* bytes of data in one element */
  MPI_Aint lb, extent;          /* with MPI_LB/MPI_UB markers and resizing */
  MPI_Aint true_lb, true_extent;
  int contiguous;               /* one block and extent == size: [buf + true_lb, + size) */
  int n_blocks;                 /* flattened, merged type map of one element */
  struct nm_mpi_block_s *blocks;
  MPI_Datatype basic;           /* predefined type the element is made of (homogeneous types), else
                                   MPI_DATATYPE_NULL: what reductions operate on */
  MPI_Count basic_count;        /* elements of `basic` in one element */
  char name[MPI_MAX_OBJECT_NAME];
  /* MPI_Type_get_envelope / get_contents */
  int n_ints, n_addrs, n_types;
  int *ints;
  MPI_Aint *addrs;
  MPI_Datatype *types;
};

/* nm_mpi_datatype_get(): with the global state, at the end of this file. */
/** Bytes of @p count elements once packed. */
static inline MPI_Count nm_mpi_datatype_packed_size(const struct nm_mpi_datatype_s *d, MPI_Count count)
{
  return count > 0 ? d->size * count : 0;
}
/** Pack @p count elements from @p buf into the contiguous @p out (packed_size bytes). */
void nm_mpi_datatype_pack(const struct nm_mpi_datatype_s *d, const void *buf, MPI_Count count, void *out);
/** Unpack up to @p bytes bytes from @p in into @p count elements at @p buf (a partial last element is fine). */
void nm_mpi_datatype_unpack(const struct nm_mpi_datatype_s *d, const void *in, MPI_Count bytes, void *buf,
                            MPI_Count count);
/** Contiguous data of @p count elements starts at this address (only when d->contiguous). */
static inline void *nm_mpi_datatype_contig_ptr(const struct nm_mpi_datatype_s *d, const void *buf)
{
  return (char *)buf + d->true_lb;
}
void nm_mpi_datatype_ref(MPI_Datatype dt);
void nm_mpi_datatype_unref(MPI_Datatype dt);
int nm_mpi_datatype_init(void);
void nm_mpi_datatype_finalize(void);

/* ---------------------------------------------------------------- operations (mpi_op.c) */

struct nm_mpi_op_s {
  MPI_User_function *user; /* NULL for predefined */
  int commute;
  int predefined;
  int holds;               /* pending collectives using it (user ops): MPI_Op_free waits for them */
  int freed;               /* MPI_Op_free called: no longer valid for the user */
};
/** The op of a handle the user may name (not freed), or NULL. */
struct nm_mpi_op_s *nm_mpi_op_get(MPI_Op op);
/** A pending operation (a collective's schedule) keeps a user op alive past MPI_Op_free (MPI-3.1 5.9.5). */
void nm_mpi_op_hold(MPI_Op op);
void nm_mpi_op_release(MPI_Op op);
/** inout[i] = in[i] op inout[i] for @p count elements of @p dt (predefined op on allowed types, or user op).
 *  @return MPI_SUCCESS or MPI_ERR_OP (op not defined on this type). */
int nm_mpi_op_apply(MPI_Op op, const void *in, void *inout, int count, MPI_Datatype dt);
int nm_mpi_op_init(void);
void nm_mpi_op_finalize(void);

/* ---------------------------------------------------------------- groups and communicators */

struct nm_mpi_group_s {
  int refcount;
  int size;
  int *world; /* world rank of each member */
};
struct nm_mpi_group_s *nm_mpi_group_get(MPI_Group g);
/** New group handle from world ranks (copied). @return handle or MPI_GROUP_NULL on failure. */
MPI_Group nm_mpi_group_new(int size, const int *world);
/** The group table (mpi_group.c) lives and dies with the communicator table: called by nm_mpi_comm_init /
 *  nm_mpi_comm_finalize. */
int nm_mpi_group_init(void);
void nm_mpi_group_finalize(void);

struct nm_mpi_attr_s {
  struct nm_mpi_attr_s *next;
  int keyval;
  void *value;
};

struct nm_mpi_comm_s {
  uint32_t context;           /* even; context + 1 is for collectives */
  int rank, size;             /* in the local group */
  int *world;                 /* world rank of each local member */
  int is_inter;
  int remote_size;
  int *remote_world;          /* intercommunicators: world rank of each remote member */
  int *rank_of_world;         /* world rank -> rank in the group receives come from (remote group for
                                 intercommunicators), -1 if not a member; world_size entries */
  /* The point-to-point peers, resolved once (the latency path reads no group): */
  int peer_size;              /* size of the group sends go to (remote_size for intercommunicators) */
  nm_gate_t *peer_gates;      /* gate of each rank of that group, NULL until first used (gates are made on first
                                 use, DESIGN.md rule 8; nm_mpi_comm_gate()) */
  MPI_Errhandler errhandler;
  char name[MPI_MAX_OBJECT_NAME];
  struct nm_mpi_attr_s *attrs;
  int topo;                   /* MPI_UNDEFINED or MPI_CART */
  int ndims;
  int *dims, *periods;
  unsigned coll_seq;          /* collectives started on this communicator (same order everywhere) */
  /* The broadcast model's choices by length (mpi_coll.c, nm_coll_bcast_opts(); nm_coll_bcast_auto_opts()): the
   * model costs 0.3-7.5 us a call from 8 to 6,144 members, as much as a small broadcast. */
  struct nm_coll_bcast_memo_s bcast_memo;
  unsigned idup_seq;          /* MPI_Comm_idup calls made on it (same order everywhere): mpi_comm.c */
};
/* nm_mpi_comm_get(), nm_mpi_comm_gate(): with the global state, at the end of this file. */
/** Rank (in the group messages come from) of a gate, or -1. */
int nm_mpi_comm_rank_of_gate(const struct nm_mpi_comm_s *c, nm_gate_t gate);
/** Contexts from NM_MPI_IDUP_SPACE up belong to communicators made by MPI_Comm_idup, NM_MPI_IDUP_PER_COMM per
 *  parent (mpi_comm.c); the agreed ones stay below. */
#define NM_MPI_IDUP_SPACE 0x80000000u
#define NM_MPI_IDUP_PER_COMM 1024u
/** nmad tag of an application message. */
static inline nm_tag_t nm_mpi_p2p_tag(const struct nm_mpi_comm_s *c, int tag)
{
  return ((nm_tag_t)c->context << 32) | (uint32_t)tag;
}
/** nmad tag of a collective's message (@p tag chosen by the collective, e.g. from coll_seq). */
static inline nm_tag_t nm_mpi_coll_tag(const struct nm_mpi_comm_s *c, uint32_t tag)
{
  return ((nm_tag_t)(c->context + 1) << 32) | tag;
}
/** The collective tag of every blocking collective of a communicator (mpi_coll_sched.h says why one is enough);
 *  the sequence tags of the non-blocking ones stay below it (nm_mpi_coll_seq_tag()), mpi_comm.c's above. */
#define NM_MPI_COLL_TAG_BLOCKING 0x7fffffffu
/** The next sequence tag of @p c for a non-blocking collective: 0 to NM_MPI_COLL_TAG_BLOCKING - 1, cyclic. */
static inline uint32_t nm_mpi_coll_seq_tag(struct nm_mpi_comm_s *c)
{
  return c->coll_seq++ % NM_MPI_COLL_TAG_BLOCKING;
}
/** A context an agreement of this process proposed and holds until it ends (mpi_comm.c): with
 *  MPI_THREAD_MULTIPLE, agreements of several threads run at once, and none may propose another's value. */
struct nm_mpi_ctx_resv_s {
  struct nm_mpi_ctx_resv_s *next;
  uint32_t ctx;
};
/** Create a communicator object from world ranks (copied), with a context agreed beforehand. @return handle or
 *  MPI_COMM_NULL. */
MPI_Comm nm_mpi_comm_new(uint32_t context, int size, const int *world, int rank);
int nm_mpi_comm_init(void);   /* MPI_COMM_WORLD and MPI_COMM_SELF */
void nm_mpi_comm_finalize(void);

/* ---------------------------------------------------------------- requests (mpi_request.c) */

enum nm_mpi_req_kind_e {
  NM_MPI_REQ_SEND = 1,
  NM_MPI_REQ_RECV,
  NM_MPI_REQ_COLL,    /* non-blocking collective: progress() drives it */
  NM_MPI_REQ_DONE     /* already complete at creation (e.g. PROC_NULL) */
};

struct nm_mpi_request_s {
  int kind;                   /* 0: free object, in nm_mpi.request_free */
  int handle;                 /* its MPI_Request in the table */
  struct nm_mpi_request_s *next_free; /* link of nm_mpi.request_free while free */
  /* The state, one byte each and side by side: a post sets them all with one store. */
  uint8_t persistent;
  uint8_t active;             /* started and not yet completed by wait/test */
  uint8_t user_freed;         /* MPI_Request_free while active: release on completion */
  uint8_t completed;          /* the MPI-level completion was processed (status filled) */
  uint8_t plain;              /* posted point-to-point request holding nothing but its transfer, not complete: not
                                 persistent, no packed temporary (the latency path of the waits; set by
                                 nm_mpi_p2p_post and the blocking calls, cleared by completion and recycling) */
  uint8_t mode;               /* send: 0 standard, 1 synchronous, 2 buffered, 3 ready */
  nm_sr_request_t nreq;       /* the nmad request (send or receive) */
  MPI_Comm comm;
  MPI_Datatype datatype;
  int count;
  void *buf;
  void *tmp;                  /* packed copy for non-contiguous data (freed on completion) */
  int peer, tag, prio;
  MPI_Status status;          /* filled at completion */
  /* non-blocking collectives */
  int (*progress)(struct nm_mpi_request_s *r); /* 1 when finished, 0 not yet, <0 error (MPI_ERR_*) */
  void (*release)(struct nm_mpi_request_s *r);
  void *state;
};
/** New request object. @return handle (>= 1) or MPI_REQUEST_NULL, and the object in *out. */
MPI_Request nm_mpi_request_new(int kind, struct nm_mpi_request_s **out);
struct nm_mpi_request_s *nm_mpi_request_get(MPI_Request r);
/** Progress and check one request; on completion fill its status. @return 1 completed, 0 not yet. */
int nm_mpi_request_test(struct nm_mpi_request_s *r);
/** Release a completed request (non-persistent) and set *handle to MPI_REQUEST_NULL. */
void nm_mpi_request_release(MPI_Request *handle);
int nm_mpi_request_init(void);
void nm_mpi_request_finalize(void);

/** Post the point-to-point part of a request (also used by MPI_Start and collectives). @return MPI code. */
int nm_mpi_request_start(struct nm_mpi_request_s *r);

/* ---------------------------------------------------------------- collectives (mpi_coll.c) */

int nm_mpi_coll_init(void);
void nm_mpi_coll_finalize(void);

/* ---------------------------------------------------------------- errors (mpi_env.c) */

struct nm_mpi_errhandler_s {
  MPI_Comm_errhandler_function *fn; /* NULL for the predefined ones */
  int refcount;
};
/** Apply @p comm's error handler to @p code (from function @p fn): ERRORS_ARE_FATAL prints and aborts the job,
 *  ERRORS_RETURN returns the code, a user handler is called then the code returned. */
int nm_mpi_error(MPI_Comm comm, int code, const char *fn);
/** Map an nmad error (-NM_E*) to an MPI error class. */
int nm_mpi_from_nm_err(int nm_err);

/* ---------------------------------------------------------------- the global state */

/** Scratch buffers kept between collectives (mpi_scratch.c): one free list per power-of-two size class. */
#define NM_MPI_SCRATCH_CLASSES 16 /* 64 KiB .. 2 GiB */
struct nm_mpi_scratch_s {
  struct nm_mpi_scratch_free_s *free[NM_MPI_SCRATCH_CLASSES];
  size_t cached; /* bytes on the lists */
};
/** A buffer of at least @p len bytes, from the cache when one of its class is free. @return NULL when out of
 *  memory. Thread-safety: under the core lock when a progress thread runs. */
void *nm_mpi_scratch_get(size_t len);
/** Give back a buffer from nm_mpi_scratch_get() with the same @p len (NULL is ignored). */
void nm_mpi_scratch_put(void *p, size_t len);
/** Free the cached buffers (MPI_Finalize, once no schedule is left). */
void nm_mpi_scratch_finalize(void);


struct nm_mpi_s {
  int initialized, finalized;
  int thread_level;
  nm_launcher_t launcher;
  nm_core_t core;
  nm_session_t session;         /* all MPI traffic */
  nm_mcast_service_t mcast;     /* MPIX_Dynamic_bcast */
  int world_rank, world_size;
  nm_gate_t *gates;             /* gate of each world rank, NULL until first used (nm_mpi_world_gate()) */
  uint32_t next_context;        /* next free context id (even) */
  struct nm_mpi_table_s comms, datatypes, ops, groups, requests, errhandlers, keyvals, infos, messages;
  void *bsend_buf;              /* MPI_Buffer_attach */
  int bsend_size;
  int next_keyval;
  int n_coll_reqs;              /* NM_MPI_REQ_COLL objects in the request table (0: no table scan per wait) */
  struct nm_mpi_request_s *request_free; /* free request objects, last freed first (cache-warm, O(1) claim) */
  int threaded;                 /* a progress thread runs (NMAD_PROGRESS=thread) or MPI_THREAD_MULTIPLE: public
                                   functions hold the lock */
  pthread_t main_thread;        /* the thread that called MPI_Init (MPI_Is_thread_main) */
  struct nm_mpi_ctx_resv_s *ctx_resv; /* contexts proposed by agreements in progress on this process (mpi_comm.c) */
  struct nm_mpi_scratch_s scratch;
  /* NMAD_<COLLECTIVE>_ALGO as MPI_Init read them (nm_coll_overrides_read()): the collectives' groups carry them, so
   * that no collective scans the environment (doc/collectives.md, "Overrides") */
  struct nm_coll_overrides_s coll_overrides;
  /* a freed schedule's memory for the next collective (nm_coll_sched_new_cached(): under the core lock, as every
   * public function and the progress thread run the shim's schedules) */
  struct nm_coll_sched_cache_s sched_cache;
};
extern struct nm_mpi_s nm_mpi;

/* Thread safety with a progress thread (doc/mpi.md, "Progress thread"): the body of every public function holds
 * the core lock, so the progress thread never runs the core, nor the monitors that touch the shim's requests and
 * schedules, while the application is inside MPI. Waits release it in the drivers (nm_core.h). Without a progress
 * thread this is one test of a flag on entry and one on return. */
static inline int nm_mpi_lock_enter(void)
{
  if (!nm_mpi.threaded)
    return 0;
  nm_core_lock(nm_mpi.core);
  return 1;
}
static inline void nm_mpi_lock_leave(int *held)
{
  if (*held)
    nm_core_unlock(nm_mpi.core);
}
/** First statement of a public function: hold the core lock until it returns (any return path). */
#define NM_MPI_LOCKED() int nm_mpi_held_ __attribute__((cleanup(nm_mpi_lock_leave), unused)) = nm_mpi_lock_enter()

/* Handle look-ups of the latency path, inline (they read the global tables). */

/** @return the communicator object or NULL if the handle is invalid. */
static inline struct nm_mpi_comm_s *nm_mpi_comm_get(MPI_Comm comm)
{
  return nm_mpi_table_get(&nm_mpi.comms, comm);
}

/** Gate of world rank @p w, made on first use and kept in nm_mpi.gates. NULL if out of range or out of memory. */
nm_gate_t nm_mpi_world_gate(int w);
/** nm_mpi_comm_gate()'s slow path: resolve and remember the gate of @p rank. */
nm_gate_t nm_mpi_comm_gate_resolve(const struct nm_mpi_comm_s *c, int rank);
/** Gate of @p rank (in the remote group for intercommunicators). NULL if out of range. */
static inline nm_gate_t nm_mpi_comm_gate(const struct nm_mpi_comm_s *c, int rank)
{
  if ((unsigned)rank >= (unsigned)c->peer_size)
    return NULL;
  nm_gate_t g = c->peer_gates[rank];
  return g ? g : nm_mpi_comm_gate_resolve(c, rank);
}

/** @return the datatype object or NULL if the handle is invalid (the table holds mpi_datatype.c's objects,
 *  whose first member is this public part). */
static inline struct nm_mpi_datatype_s *nm_mpi_datatype_get(MPI_Datatype dt)
{
  return nm_mpi_table_get(&nm_mpi.datatypes, dt);
}

#pragma GCC visibility pop

#endif /* NM_MPI_PRIVATE_H */
