/* Fixed-size object pools: allocate in blocks, recycle through a free list. */
#include "nm_pool.h"
#include <stdlib.h>

#define NM_POOL_BLOCK_OBJS 16

/* Each object is preceded by nothing; a block is [link word][obj][obj]...; objects are max-aligned. */
struct nm_pool_block_s {
  struct nm_pool_block_s *next;
  max_align_t objs[];
};

void nm_pool_init(struct nm_pool_s *pool, size_t obj_size)
{
  size_t align = sizeof(max_align_t);
  if (obj_size < sizeof(void *))
    obj_size = sizeof(void *);
  pool->obj_size = (obj_size + align - 1) / align * align;
  pool->free_list = NULL;
  pool->blocks = NULL;
}

static int nm_pool_grow(struct nm_pool_s *pool)
{
  struct nm_pool_block_s *b = malloc(sizeof(*b) + NM_POOL_BLOCK_OBJS * pool->obj_size);
  if (!b)
    return -1;
  b->next = pool->blocks;
  pool->blocks = b;
  char *p = (char *)b->objs;
  for (int i = 0; i < NM_POOL_BLOCK_OBJS; i++)
    nm_pool_put(pool, p + (size_t)i * pool->obj_size);
  return 0;
}

void *nm_pool_get(struct nm_pool_s *pool)
{
  if (!pool->free_list && nm_pool_grow(pool))
    return NULL;
  void *obj = pool->free_list;
  pool->free_list = *(void **)obj;
  return obj;
}

void nm_pool_put(struct nm_pool_s *pool, void *obj)
{
  *(void **)obj = pool->free_list;
  pool->free_list = obj;
}

void nm_pool_destroy(struct nm_pool_s *pool)
{
  struct nm_pool_block_s *b = pool->blocks;
  while (b) {
    struct nm_pool_block_s *next = b->next;
    free(b);
    b = next;
  }
  pool->blocks = pool->free_list = NULL;
}
