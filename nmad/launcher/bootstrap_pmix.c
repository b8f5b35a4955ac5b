/**
 * @file bootstrap_pmix.c
 * @brief Bootstrap through PMIx, when started by Open MPI's mpirun, `srun --mpi=pmix` or prterun.
 *
 * - rank from PMIx_Init(), size from the job-level key PMIX_JOB_SIZE;
 * - allgather = PMIx_Put(PMIX_GLOBAL, "nmad.ag.<epoch>", byte object) + PMIx_Commit + PMIx_Fence(all procs,
 *   PMIX_COLLECT_DATA) + PMIx_Get of every rank's key (sizes validated: the data comes from other processes);
 * - barrier = PMIx_Fence without data;
 * - job key (doc/reliability.md): rank 0 makes a random one and PMIx_Put's it as "nmad.job_key" (PMIX_GLOBAL);
 *   one fence with data at init, then every rank PMIx_Get's it from rank 0. Chosen over hashing the nspace,
 *   which costs no fence but is a name other processes on the machine can read or guess;

 * - faults: an event handler for the process-termination codes runs on the PMIx progress thread and only
 *   writes the dead rank (an int32) into a pipe owned by this bootstrap; poll_fault() reads that pipe in the
 *   caller's thread, so no state is shared between threads except through the pipe;
 * - abort = PMIx_Abort on the whole namespace.
 * Compiled only when HAVE_PMIX. Not thread-safe: one thread uses a bootstrap at a time.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pipe2 */
#endif
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "nm_bootstrap.h"
#include "nmad_run_proto.h"

#include <nmad/nm_errno.h>

#include <pmix.h>

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/** Largest job accepted (bounds the per-rank tables allocated at init). */
#define NM_PMIX_MAX_SIZE (1 << 24)

struct pmix_priv_s {
  pmix_proc_t me;
  pmix_proc_t all; /**< our namespace, PMIX_RANK_WILDCARD */
  uint32_t epoch;  /**< number of allgathers so far: makes each key unique */
  int pipe_rd, pipe_wr;
  int evhdlr_registered;
  size_t evhdlr_ref;
  int size;
  int eof;        /**< the PMIx server connection was lost */
  uint8_t *dead;  /**< dead[r] != 0 once rank r is known dead */
  int *queue;     /**< dead ranks not yet returned by poll_fault() (FIFO of at most size entries) */
  int q_head, q_len;
};

/** Value written into the pipe when the server connection itself is lost. */
#define NM_PMIX_LOST (-1)

static int pmix_to_nm(pmix_status_t st)
{
  switch (st) {
  case PMIX_SUCCESS: return 0;
  case PMIX_ERR_NOMEM:
  case PMIX_ERR_OUT_OF_RESOURCE: return -NM_ENOMEM;
  case PMIX_ERR_BAD_PARAM: return -NM_EINVAL;
  case PMIX_ERR_NOT_SUPPORTED: return -NM_ENOTSUP;
  case PMIX_ERR_NOT_FOUND: return -NM_ENOTFOUND;
  case PMIX_ERR_TIMEOUT: return -NM_ETIMEDOUT;
  default: return -NM_ECLOSED; /* fence/get failures: a process or the server is gone */
  }
}

static int is_termination(pmix_status_t st)
{
#ifdef PMIX_EVENT_PROC_TERMINATED
  if (st == PMIX_EVENT_PROC_TERMINATED)
    return 1;
#endif
#ifdef PMIX_PROC_TERMINATED
  if (st == PMIX_PROC_TERMINATED)
    return 1;
#endif
  return 0;
}

static int is_lost_connection(pmix_status_t st)
{
#ifdef PMIX_ERR_LOST_CONNECTION
  if (st == PMIX_ERR_LOST_CONNECTION)
    return 1;
#endif
#ifdef PMIX_ERR_LOST_CONNECTION_TO_SERVER
  if (st == PMIX_ERR_LOST_CONNECTION_TO_SERVER)
    return 1;
#endif
  return 0;
}

/* Event callback, on the PMIx progress thread: forward the affected rank to the pipe, nothing else. */
static void fault_handler(size_t evhdlr_registration_id, pmix_status_t status, const pmix_proc_t *source,
                          pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                          pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
  (void)evhdlr_registration_id;
  (void)results;
  (void)nresults;
  struct pmix_priv_s *p = NULL;
  const pmix_proc_t *affected = NULL;
  int have_exit = 0, exit_code = 0;
  for (size_t i = 0; i < ninfo; i++) {
    if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_RETURN_OBJECT))
      p = info[i].value.data.ptr;
    else if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) && info[i].value.type == PMIX_PROC)
      affected = info[i].value.data.proc;
    else if (PMIX_CHECK_KEY(&info[i], PMIX_EXIT_CODE) && info[i].value.type == PMIX_INT) {
      have_exit = 1;
      exit_code = info[i].value.data.integer;
    }
  }
  if (affected == NULL)
    affected = source;
  if (p != NULL) {
    int32_t r = -2;
    if (is_lost_connection(status))
      r = NM_PMIX_LOST;
    else if (is_termination(status) && have_exit && exit_code == 0)
      r = -2; /* a normal exit is not a fault */
    else if (affected != NULL && PMIX_CHECK_NSPACE(affected->nspace, p->me.nspace) &&
             affected->rank != PMIX_RANK_WILDCARD && affected->rank < (pmix_rank_t)p->size &&
             affected->rank != p->me.rank)
      r = (int32_t)affected->rank;
    if (r != -2) {
      ssize_t n; /* a 4-byte write to a pipe is atomic; a full pipe drops the report (64 KiB of reports) */
      do
        n = write(p->pipe_wr, &r, sizeof(r));
      while (n < 0 && errno == EINTR);
    }
  }
  if (cbfunc != NULL)
    cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static int get_job_size(struct pmix_priv_s *p, int *size)
{
  pmix_value_t *val = NULL;
  pmix_status_t st = PMIx_Get(&p->all, PMIX_JOB_SIZE, NULL, 0, &val);
  if (st != PMIX_SUCCESS || val == NULL) {
    fprintf(stderr, "nmad: PMIx_Get(PMIX_JOB_SIZE) failed: %s\n", PMIx_Error_string(st));
    return st == PMIX_SUCCESS ? -NM_EPROTO : pmix_to_nm(st);
  }
  long v = -1;
  switch (val->type) {
  case PMIX_UINT32: v = (long)val->data.uint32; break;
  case PMIX_INT: v = val->data.integer; break;
  case PMIX_SIZE: v = (long)val->data.size; break;
  case PMIX_UINT64: v = (long)val->data.uint64; break;
  default: break;
  }
  PMIX_VALUE_RELEASE(val);
  if (v < 1 || v > NM_PMIX_MAX_SIZE) {
    fprintf(stderr, "nmad: PMIx reports an invalid job size (%ld)\n", v);
    return -NM_EPROTO;
  }
  *size = (int)v;
  return 0;
}

static int register_faults(struct pmix_priv_s *p)
{
  /* Every process-termination code this PMIx defines (the names changed between PMIx 3 and 4). */
  pmix_status_t codes[16];
  size_t ncodes = 0;
#ifdef PMIX_ERR_PROC_ABORTED
  codes[ncodes++] = PMIX_ERR_PROC_ABORTED;
#endif
#ifdef PMIX_ERR_PROC_ABORTING
  codes[ncodes++] = PMIX_ERR_PROC_ABORTING;
#endif
#ifdef PMIX_PROC_TERMINATED
  codes[ncodes++] = PMIX_PROC_TERMINATED;
#endif
#ifdef PMIX_EVENT_PROC_TERMINATED
  codes[ncodes++] = PMIX_EVENT_PROC_TERMINATED;
#endif
#ifdef PMIX_ERR_PROC_TERM_WO_SYNC
  codes[ncodes++] = PMIX_ERR_PROC_TERM_WO_SYNC;
#endif
#ifdef PMIX_ERR_PROC_ABORTED_BY_SIG
  codes[ncodes++] = PMIX_ERR_PROC_ABORTED_BY_SIG;
#endif
#ifdef PMIX_ERR_PROC_KILLED_BY_CMD
  codes[ncodes++] = PMIX_ERR_PROC_KILLED_BY_CMD;
#endif
#ifdef PMIX_ERR_EXIT_NONZERO_TERM
  codes[ncodes++] = PMIX_ERR_EXIT_NONZERO_TERM;
#endif
#ifdef PMIX_ERR_PROC_REQUESTED_ABORT
  codes[ncodes++] = PMIX_ERR_PROC_REQUESTED_ABORT;
#endif
#ifdef PMIX_ERR_LOST_CONNECTION
  codes[ncodes++] = PMIX_ERR_LOST_CONNECTION;
#endif
#ifdef PMIX_ERR_LOST_CONNECTION_TO_SERVER
  codes[ncodes++] = PMIX_ERR_LOST_CONNECTION_TO_SERVER;
#endif
  pmix_info_t info[2];
  PMIX_INFO_CONSTRUCT(&info[0]);
  PMIX_INFO_CONSTRUCT(&info[1]);
  PMIX_INFO_LOAD(&info[0], PMIX_EVENT_RETURN_OBJECT, p, PMIX_POINTER);
  PMIX_INFO_LOAD(&info[1], PMIX_EVENT_HDLR_NAME, "nmad-fault", PMIX_STRING);
  /* NULL registration callback: blocking, returns the handler reference (>= 0) or an error (< 0). */
  pmix_status_t st = PMIx_Register_event_handler(codes, ncodes, info, 2,
                                                 fault_handler, NULL, NULL);
  PMIX_INFO_DESTRUCT(&info[0]);
  PMIX_INFO_DESTRUCT(&info[1]);
  if (st < 0)
    return pmix_to_nm(st);
  p->evhdlr_ref = (size_t)st;
  p->evhdlr_registered = 1;
  return 0;
}

static void priv_free(struct pmix_priv_s *p)
{
  if (p->pipe_rd >= 0)
    close(p->pipe_rd);
  if (p->pipe_wr >= 0)
    close(p->pipe_wr);
  free(p->dead);
  free(p->queue);
  free(p);
}

#define NM_PMIX_KEY_NAME "nmad.job_key"

static int fence(struct pmix_priv_s *p, bool collect);

/* Rank 0's random job key, for every rank (file comment). */
static int share_job_key(struct pmix_priv_s *p, uint64_t *key)
{
  if (p->me.rank == 0) {
    if (nmad_run_key_new(key))
      return -NM_EUNKNOWN;
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_UINT64;
    v.data.uint64 = *key;
    pmix_status_t st = PMIx_Put(PMIX_GLOBAL, NM_PMIX_KEY_NAME, &v);
    if (st == PMIX_SUCCESS)
      st = PMIx_Commit();
    if (st != PMIX_SUCCESS)
      return pmix_to_nm(st);
  }
  int rc = fence(p, true);
  if (rc || p->me.rank == 0)
    return rc;
  pmix_proc_t proc;
  PMIX_LOAD_PROCID(&proc, p->me.nspace, 0);
  pmix_value_t *val = NULL;
  pmix_status_t st = PMIx_Get(&proc, NM_PMIX_KEY_NAME, NULL, 0, &val);
  if (st != PMIX_SUCCESS || val == NULL)
    return st == PMIX_SUCCESS ? -NM_EPROTO : pmix_to_nm(st);
  rc = val->type == PMIX_UINT64 ? 0 : -NM_EPROTO;
  *key = val->data.uint64;
  PMIX_VALUE_RELEASE(val);
  return rc;
}

static int pmix_boot_init(struct nm_bootstrap_s *bs)
{
  struct pmix_priv_s *p = calloc(1, sizeof(*p));
  if (p == NULL)
    return -NM_ENOMEM;
  p->pipe_rd = p->pipe_wr = -1;
  pmix_status_t st = PMIx_Init(&p->me, NULL, 0);
  if (st != PMIX_SUCCESS) {
    fprintf(stderr, "nmad: PMIx_Init failed: %s (PMIX_RANK is set: was this process started by a PMIx launcher?)\n",
            PMIx_Error_string(st));
    free(p);
    return -NM_ECLOSED;
  }
  PMIX_LOAD_PROCID(&p->all, p->me.nspace, PMIX_RANK_WILDCARD);
  int rc = get_job_size(p, &p->size);
  if (rc == 0 && (p->me.rank >= (pmix_rank_t)p->size)) {
    fprintf(stderr, "nmad: PMIx rank %u is outside the job size %d\n", p->me.rank, p->size);
    rc = -NM_EPROTO;
  }
  if (rc == 0) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
      rc = -NM_ENOMEM;
    } else {
      p->pipe_rd = fds[0];
      p->pipe_wr = fds[1];
    }
  }
  if (rc == 0) {
    p->dead = calloc((size_t)p->size, 1);
    p->queue = calloc((size_t)p->size, sizeof(int));
    if (p->dead == NULL || p->queue == NULL)
      rc = -NM_ENOMEM;
  }
  if (rc == 0) {
    rc = register_faults(p);
    if (rc)
      fprintf(stderr, "nmad: cannot register the PMIx fault handler: %s\n", nm_strerror(rc));
  }
  if (rc == 0 && (rc = share_job_key(p, &bs->job_key)))
    fprintf(stderr, "nmad: cannot share the job key through PMIx: %s\n", nm_strerror(rc));
  if (rc) {
    PMIx_Finalize(NULL, 0);
    priv_free(p);
    return rc;
  }
  bs->rank = (int)p->me.rank;
  bs->size = p->size;
  bs->priv = p;
  return 0;
}

/* Move the reports from the pipe to the queue (each dead rank once). */
static void drain_pipe(struct pmix_priv_s *p)
{
  int32_t r;
  for (;;) {
    ssize_t n = read(p->pipe_rd, &r, sizeof(r));
    if (n < 0 && errno == EINTR)
      continue;
    if (n != (ssize_t)sizeof(r))
      return; /* empty (EAGAIN); writes of 4 bytes are atomic, so no partial value */
    if (r == NM_PMIX_LOST) {
      p->eof = 1;
    } else if (r >= 0 && r < p->size && !p->dead[r]) {
      p->dead[r] = 1;
      p->queue[(p->q_head + p->q_len) % p->size] = r;
      p->q_len++;
    }
  }
}

/* A fence including a dead process never completes: fail collectives once a death is known. */
static int check_alive(struct pmix_priv_s *p)
{
  drain_pipe(p);
  if (p->eof)
    return -NM_ECLOSED;
  for (int r = 0; r < p->size; r++)
    if (p->dead[r])
      return -NM_ECLOSED;
  return 0;
}

static int fence(struct pmix_priv_s *p, bool collect)
{
  pmix_info_t info;
  PMIX_INFO_CONSTRUCT(&info);
  PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
  pmix_status_t st = PMIx_Fence(&p->all, 1, &info, 1);
  PMIX_INFO_DESTRUCT(&info);
  return pmix_to_nm(st);
}

static int pmix_boot_allgather(struct nm_bootstrap_s *bs, const void *mine, size_t len, void *all)
{
  struct pmix_priv_s *p = bs->priv;
  if (len > 0 && (mine == NULL || all == NULL))
    return -NM_EINVAL;
  int rc = check_alive(p);
  if (rc)
    return rc;
  if (len == 0)
    return fence(p, false);
  if (len > (size_t)UINT32_MAX || len > SIZE_MAX / (size_t)p->size)
    return -NM_EINVAL;

  char key[PMIX_MAX_KEYLEN + 1];
  snprintf(key, sizeof(key), "nmad.ag.%u", (unsigned)p->epoch++);
  pmix_value_t v;
  PMIX_VALUE_CONSTRUCT(&v);
  v.type = PMIX_BYTE_OBJECT;
  v.data.bo.bytes = (char *)(uintptr_t)mine; /* PMIx_Put copies; it does not modify the bytes */
  v.data.bo.size = len;
  pmix_status_t st = PMIx_Put(PMIX_GLOBAL, key, &v);
  /* not PMIX_VALUE_DESTRUCT: the bytes are the caller's */
  if (st == PMIX_SUCCESS)
    st = PMIx_Commit();
  if (st != PMIX_SUCCESS)
    return pmix_to_nm(st);
  rc = fence(p, true);
  if (rc)
    return rc;
  for (int r = 0; r < p->size; r++) {
    uint8_t *dst = (uint8_t *)all + (size_t)r * len;
    if (r == bs->rank) {
      memmove(dst, mine, len);
      continue;
    }
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, p->me.nspace, (pmix_rank_t)r);
    pmix_value_t *val = NULL;
    st = PMIx_Get(&proc, key, NULL, 0, &val);
    if (st != PMIX_SUCCESS || val == NULL)
      return st == PMIX_SUCCESS ? -NM_EPROTO : pmix_to_nm(st);
    if (val->type != PMIX_BYTE_OBJECT || val->data.bo.size != len || val->data.bo.bytes == NULL) {
      PMIX_VALUE_RELEASE(val);
      return -NM_EPROTO; /* another rank contributed a different length, or foreign data under our key */
    }
    memcpy(dst, val->data.bo.bytes, len);
    PMIX_VALUE_RELEASE(val);
  }
  return 0;
}

static int pmix_boot_barrier(struct nm_bootstrap_s *bs)
{
  struct pmix_priv_s *p = bs->priv;
  int rc = check_alive(p);
  if (rc)
    return rc;
  return fence(p, false);
}

/* PMIx_Fence_nb's completion, called on PMIx's progress thread. */
struct pmix_fence_done_s {
  int done;
  pmix_status_t status;
};

static void pmix_fence_done(pmix_status_t status, void *cbdata)
{
  struct pmix_fence_done_s *d = cbdata;
  d->status = status;
  __atomic_store_n(&d->done, 1, __ATOMIC_RELEASE);
}

static int pmix_boot_barrier_progress(struct nm_bootstrap_s *bs, int (*progress)(void *), void *arg)
{
  struct pmix_priv_s *p = bs->priv;
  int rc = check_alive(p);
  if (rc)
    return rc;
  struct pmix_fence_done_s d = { 0, PMIX_SUCCESS };
  pmix_status_t st = PMIx_Fence_nb(&p->all, 1, NULL, 0, pmix_fence_done, &d);
  if (st != PMIX_SUCCESS)
    return pmix_to_nm(st);
  unsigned backoff_us = 0;
  while (!__atomic_load_n(&d.done, __ATOMIC_ACQUIRE))
    (void)nm_bootstrap_idle(-1, progress, arg, &backoff_us);
  return pmix_to_nm(d.status);
}

static int pmix_boot_poll_fault(struct nm_bootstrap_s *bs, int *rank)
{
  struct pmix_priv_s *p = bs->priv;
  drain_pipe(p);
  if (p->q_len > 0) {
    *rank = p->queue[p->q_head];
    p->q_head = (p->q_head + 1) % p->size;
    p->q_len--;
    return 1;
  }
  return p->eof ? -NM_ECLOSED : 0;
}

static int pmix_boot_fault_fd(struct nm_bootstrap_s *bs)
{
  struct pmix_priv_s *p = bs->priv;
  return p->pipe_rd;
}

/* PMIx_Abort with no process list aborts our whole namespace: the launcher (mpirun, srun) kills every rank
 * and reports @p code; it may kill the caller before the call returns. */
static int pmix_boot_abort(struct nm_bootstrap_s *bs, int code)
{
  char msg[96];
  snprintf(msg, sizeof(msg), "nmad: rank %d called abort with code %d", bs->rank, code);
  return pmix_to_nm(PMIx_Abort(code, msg, NULL, 0));
}

static int pmix_boot_fini(struct nm_bootstrap_s *bs)
{
  struct pmix_priv_s *p = bs->priv;
  if (p == NULL)
    return 0;
  if (p->evhdlr_registered)
    (void)PMIx_Deregister_event_handler(p->evhdlr_ref, NULL, NULL);
  /* After PMIx_Finalize the progress thread is gone, so the handler can no longer touch the pipe. */
  pmix_status_t st = PMIx_Finalize(NULL, 0);
  priv_free(p);
  bs->priv = NULL;
  return st == PMIX_SUCCESS ? 0 : pmix_to_nm(st);
}

const struct nm_bootstrap_ops_s nm_bootstrap_pmix_ops = {
  .name = "pmix",
  .init = pmix_boot_init,
  .allgather = pmix_boot_allgather,
  .barrier = pmix_boot_barrier,
  .barrier_progress = pmix_boot_barrier_progress,
  .poll_fault = pmix_boot_poll_fault,
  .fault_fd = pmix_boot_fault_fd,
  .abort = pmix_boot_abort,
  .fini = pmix_boot_fini,
};
