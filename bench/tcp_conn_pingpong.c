/**
 * @file tcp_conn_pingpong.c
 * @brief Loopback TCP ping-pong of 8 bytes with one connection for both directions, or one connection per
 *        direction (as nmad's ntcp driver has: in_fd, out_fd), without nmad: what the kernel charges for the second
 *        layout. Both processes busy-poll recv(MSG_DONTWAIT), TCP_NODELAY, bound to processors 0 and 1.
 *
 * Build and run (not built by make; doc/performance.md, "TCP: a connection per direction"):
 *   gcc -O2 -I bench bench/tcp_conn_pingpong.c bench/bench_common.c -o /tmp/tcp_conn_pingpong
 *   /tmp/tcp_conn_pingpong 1 20000    # one connection
 *   /tmp/tcp_conn_pingpong 2 20000    # one connection per direction
 * Prints the median one-way latency (round trip / 2) of ITERS timed round trips after 1,000 warm-up ones.
 */
#define _GNU_SOURCE
#include "bench_common.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define WARMUP 1000
#define LEN 8

static struct sockaddr_in loopback(int port)
{
  return (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(0x7f000001)};
}

static int listen_on(int port)
{
  int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  struct sockaddr_in a = loopback(port);
  setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(s, (struct sockaddr *)&a, sizeof(a)) || listen(s, 4)) {
    perror("bind/listen");
    exit(1);
  }
  return s;
}

static int connect_to(int port)
{
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = loopback(port);
  while (connect(s, (struct sockaddr *)&a, sizeof(a)))
    usleep(1000);
  return s;
}

static int nodelay(int s)
{
  int one = 1;
  setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return s;
}

static void bind_cpu(int cpu)
{
  cpu_set_t m;
  CPU_ZERO(&m);
  CPU_SET(cpu, &m);
  sched_setaffinity(0, sizeof(m), &m);
}

/* Busy-poll until LEN bytes came; the peer gone (end of stream, or an error other than "nothing yet") ends the
 * process instead of spinning on a closed socket for ever. */
static void recv_all(int s, char *b)
{
  for (int got = 0; got < LEN;) {
    ssize_t r = recv(s, b + got, LEN - got, MSG_DONTWAIT);
    if (r > 0)
      got += (int)r;
    else if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
      _exit(1);
  }
}

int main(int argc, char **argv)
{
  int mode = argc > 1 ? atoi(argv[1]) : 1, iters = argc > 2 ? atoi(argv[2]) : 20000;
  if ((mode != 1 && mode != 2) || iters < 1) {
    fprintf(stderr, "usage: %s 1|2 [ITERS]\n", argv[0]);
    return 2;
  }
  int port = 20000 + getpid() % 20000;
  int l1 = listen_on(port), l2 = mode == 2 ? listen_on(port + 1) : -1;
  char b[LEN] = {0};
  pid_t child = fork();
  if (child == 0) { /* the echo side */
    bind_cpu(1);
    int in = nodelay(connect_to(port)), out = mode == 2 ? nodelay(connect_to(port + 1)) : in;
    for (int i = 0; i < WARMUP + iters + 1; i++) {
      recv_all(in, b);
      send(out, b, LEN, 0);
    }
    _exit(0);
  }
  bind_cpu(0);
  int out = nodelay(accept(l1, NULL, NULL)), in = mode == 2 ? nodelay(accept(l2, NULL, NULL)) : out;
  double *lat = malloc(sizeof(double) * (size_t)iters);
  uint64_t t0 = 0;
  for (int i = 0; i < WARMUP + iters + 1; i++) {
    send(out, b, LEN, 0);
    uint64_t t1 = bench_now_ns(); /* read while the message travels: from one read to the next is one round trip */
    if (i > WARMUP)
      lat[i - WARMUP - 1] = (double)(t1 - t0) / 2;
    t0 = t1;
    recv_all(in, b);
  }
  printf("%s: median one-way %.2f us\n", mode == 1 ? "one connection" : "a connection per direction",
         bench_median(lat, iters) / 1e3);
  waitpid(child, NULL, 0);
  return 0;
}
