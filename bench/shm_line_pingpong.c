/**
 * @file shm_line_pingpong.c
 * @brief What the host charges for moving a message's cache lines between two cores, with no library at all:
 *        two processes, one per core, ping-pong SIZE bytes through shared memory, each message copied into a
 *        slot by its sender and out of it by its receiver (the two copies of an eager message over sm).
 *
 * Build and run (not part of the library's build; a reference for the sm figures in doc/performance.md):
 *   cc -O2 -o shm_line_pingpong bench/shm_line_pingpong.c
 *   ./shm_line_pingpong SIZE RING ITERS [OFFSET]
 * SIZE: bytes per message; RING: 0 = every message in the same slot, else the slots cycle through RING bytes
 * (sm's ring is 256 KiB); OFFSET: bytes between a slot's start and the message (sm's records put a header
 * first). Prints the one-way time in us (round trip / 2, mean over ITERS after 1,000 warm-up round trips).
 * Processes pinned to CPUs 0 and 1. Exit status 0, 1 on bad arguments or a failed system call.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_RING (1024 * 1024)
#define WARMUP 1000

/* One direction: the sender's count of messages on its own line, then the slots. */
struct channel {
  _Alignas(64) _Atomic uint64_t sent;
  _Alignas(64) unsigned char data[MAX_RING + 64];
};

static double now_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static size_t slot_of(uint64_t k, size_t step, size_t ring) { return ring ? (k * step) % (ring - ring % step) : 0; }

int main(int argc, char **argv)
{
  if (argc < 4) {
    fprintf(stderr, "usage: %s SIZE RING ITERS [OFFSET]\n", argv[0]);
    return 1;
  }
  size_t size = strtoul(argv[1], NULL, 0), ring = strtoul(argv[2], NULL, 0);
  size_t off = argc > 4 ? strtoul(argv[4], NULL, 0) : 0;
  long iters = strtol(argv[3], NULL, 0);
  size_t step = (size + off + 63) & ~(size_t)63;
  if (size == 0 || iters <= 0 || off > 64 || step > MAX_RING || ring > MAX_RING || (ring && ring < step)) {
    fprintf(stderr, "%s: need 0 < SIZE, OFFSET <= 64, SIZE + OFFSET and RING <= %d, RING 0 or >= SIZE + OFFSET\n",
            argv[0], MAX_RING);
    return 1;
  }
  struct channel *ch = mmap(NULL, 2 * sizeof(*ch), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (ch == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  pid_t child = fork();
  if (child < 0) {
    perror("fork");
    return 1;
  }
  int me = child == 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(me, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0)
    perror("sched_setaffinity (the processes are not pinned)");
  unsigned char *src = aligned_alloc(64, step), *dst = aligned_alloc(64, step);
  if (!src || !dst)
    return 1;
  memset(src, me + 1, size);
  memset(dst, 0, size);
  struct channel *out = &ch[me], *in = &ch[!me];
  double t0 = 0;
  for (long k = 0; k < iters + WARMUP; k++) {
    if (k == WARMUP)
      t0 = now_ns();
    for (int turn = 0; turn < 2; turn++) {
      if ((turn == 0) == (me == 0)) { /* rank 0 sends first, rank 1 answers */
        memcpy(out->data + slot_of((uint64_t)k, step, ring) + off, src, size);
        atomic_store_explicit(&out->sent, (uint64_t)k + 1, memory_order_release);
      } else {
        while (atomic_load_explicit(&in->sent, memory_order_acquire) <= (uint64_t)k)
          ;
        memcpy(dst, in->data + slot_of((uint64_t)k, step, ring) + off, size);
      }
    }
  }
  if (me)
    return 0;
  printf("size %zu ring %zu offset %zu: one-way %.3f us\n", size, ring, off, (now_ns() - t0) / (double)iters / 2e3);
  int status;
  waitpid(child, &status, 0);
  return 0;
}
