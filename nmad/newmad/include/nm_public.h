/**
 * @file nm_public.h
 * @brief NewMadeleine's umbrella header over nmad (issue 16, deliverable 2; doc/newmad.md): nmad's own types and
 *        error codes (native: the same names, NM_ESUCCESS, nm_tag_t, nm_gate_t, nm_session_t...), the ABI check,
 *        and the two PadicoTM/Puk helpers StarPU's NewMadeleine back end takes from NewMadeleine's headers.
 */
#ifndef NM_PUBLIC_H
#define NM_PUBLIC_H

#include <stdint.h>
#include <stdlib.h>
#include <pthread.h>
#include <nmad/nm_types.h>
#include <nmad/nm_errno.h>
#include <nmad/nm_core.h>
#include <nm_data.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Largest tag value (tags are 64-bit in nmad, as in NewMadeleine). */
#define NM_TAG_MAX ((nm_tag_t)UINT64_MAX)
/** Version of the compatibility interface's structures (nm_sr_request_t, nm_data_s, nm_mcast_t). */
#define NM_NEWMAD_ABI 1

/** @brief Library side of nm_abi_config_check(): compares the sizes the caller was compiled with.
 *  @return 0, or -NM_EINVAL after a message on stderr naming the mismatch (the caller was built against other
 *  headers than the library's). Thread-safety: any thread. */
int nm_newmad_abi_check(int abi, size_t data_size);
/** @brief NewMadeleine's check that the application and the library agree on the interface's structures (called
 *  by StarPU at start-up). Here: the compat ABI version and the descriptor's size; prints on mismatch.
 *  @return 0 or -NM_EINVAL. */
static inline int nm_abi_config_check(void) { return nm_newmad_abi_check(NM_NEWMAD_ABI, sizeof(struct nm_data_s)); }

/* ---- Puk (PadicoTM) helpers that NewMadeleine's headers bring along ---- */

/** padico_malloc(): plain malloc (memory is released with free()). */
#define padico_malloc(size) malloc(size)
#define padico_free(ptr) free(ptr)

/**
 * @brief Puk's "lock-free" LIFO stack type generator: PUK_LFSTACK_TYPE(ENAME, FIELDS) defines
 * struct ENAME_lfstack_cell_s { FIELDS ... }, ENAME_lfstack_t and ENAME_lfstack_init / push / pop / destroy.
 * Here the stack is guarded by a mutex (same semantics: any thread may push and pop concurrently; pop returns
 * NULL when empty); cells are the caller's (pushed cells are not copied, destroy frees none).
 */
#define PUK_LFSTACK_TYPE(ENAME, FIELDS)                                                                      \
  struct ENAME##_lfstack_cell_s {                                                                            \
    struct ENAME##_lfstack_cell_s *_lf_next;                                                                 \
    FIELDS                                                                                                   \
  };                                                                                                         \
  typedef struct {                                                                                           \
    struct ENAME##_lfstack_cell_s *_lf_head;                                                                 \
    pthread_mutex_t _lf_lock;                                                                                \
  } ENAME##_lfstack_t;                                                                                       \
  static inline __attribute__((unused)) void ENAME##_lfstack_init(ENAME##_lfstack_t *s)                      \
  {                                                                                                          \
    s->_lf_head = NULL;                                                                                      \
    pthread_mutex_init(&s->_lf_lock, NULL);                                                                  \
  }                                                                                                          \
  static inline __attribute__((unused)) void ENAME##_lfstack_destroy(ENAME##_lfstack_t *s)                   \
  {                                                                                                          \
    pthread_mutex_destroy(&s->_lf_lock);                                                                     \
  }                                                                                                          \
  static inline __attribute__((unused)) void ENAME##_lfstack_push(ENAME##_lfstack_t *s,                      \
                                                                  struct ENAME##_lfstack_cell_s *c)          \
  {                                                                                                          \
    pthread_mutex_lock(&s->_lf_lock);                                                                        \
    c->_lf_next = s->_lf_head;                                                                               \
    s->_lf_head = c;                                                                                         \
    pthread_mutex_unlock(&s->_lf_lock);                                                                      \
  }                                                                                                          \
  static inline __attribute__((unused)) struct ENAME##_lfstack_cell_s *ENAME##_lfstack_pop(ENAME##_lfstack_t *s) \
  {                                                                                                          \
    pthread_mutex_lock(&s->_lf_lock);                                                                        \
    struct ENAME##_lfstack_cell_s *c = s->_lf_head;                                                          \
    if (c)                                                                                                   \
      s->_lf_head = c->_lf_next;                                                                             \
    pthread_mutex_unlock(&s->_lf_lock);                                                                      \
    return c;                                                                                                \
  }

#ifdef __cplusplus
}
#endif

#include <pioman.h>

#endif /* NM_PUBLIC_H */
