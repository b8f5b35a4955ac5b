/**
 * @file nm_pool.h
 * @brief Private: fixed-size object pools (DESIGN.md rule 4). Objects are recycled through a free list;
 * memory is only returned at nm_pool_destroy(). Not thread-safe (the core is used by one thread at a time).
 */
#ifndef NM_POOL_H
#define NM_POOL_H

#include <stddef.h>

struct nm_pool_s {
  size_t obj_size;
  void *free_list;  /* objects linked through their first word */
  void *blocks;     /* every malloc'd block, linked through its first word, for destroy */
};

void nm_pool_init(struct nm_pool_s *pool, size_t obj_size);
/** @return an object of obj_size bytes (contents undefined) or NULL when out of memory. */
void *nm_pool_get(struct nm_pool_s *pool);
void nm_pool_put(struct nm_pool_s *pool, void *obj);
void nm_pool_destroy(struct nm_pool_s *pool);

#endif /* NM_POOL_H */
