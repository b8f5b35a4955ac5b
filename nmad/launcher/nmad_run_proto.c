/**
 * @file nmad_run_proto.c
 * @brief Framing of the nmad-run launcher <-> child messages (see nmad_run_proto.h for the wire format).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "nmad_run_proto.h"

#include <nmad/nm_errno.h>

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

static void put_u32(uint8_t *p, uint32_t v)
{
  for (int i = 0; i < 4; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

static void put_u64(uint8_t *p, uint64_t v)
{
  for (int i = 0; i < 8; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_u32(const uint8_t *p)
{
  uint32_t v = 0;
  for (int i = 3; i >= 0; i--)
    v = (v << 8) | p[i];
  return v;
}

static uint64_t get_u64(const uint8_t *p)
{
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--)
    v = (v << 8) | p[i];
  return v;
}

const char *nmad_run_msg_name(uint32_t type)
{
  switch (type) {
  case NMAD_RUN_MSG_ALLGATHER: return "ALLGATHER";
  case NMAD_RUN_MSG_BARRIER: return "BARRIER";
  case NMAD_RUN_MSG_FAULT: return "FAULT";
  case NMAD_RUN_MSG_FINI: return "FINI";
  case NMAD_RUN_MSG_ABORT: return "ABORT";
  default: return "unknown";
  }
}

void nmad_run_hdr_encode(uint8_t out[NMAD_RUN_HDR_SIZE], uint32_t type, uint32_t arg, uint64_t len)
{
  put_u32(out, type);
  put_u32(out + 4, arg);
  put_u64(out + 8, len);
}

int nmad_run_hdr_decode(const uint8_t in[NMAD_RUN_HDR_SIZE], struct nmad_run_hdr_s *h)
{
  h->type = get_u32(in);
  h->arg = get_u32(in + 4);
  h->len = get_u64(in + 8);
  switch (h->type) {
  case NMAD_RUN_MSG_ALLGATHER:
    return h->len <= NMAD_RUN_PROTO_MAX_PAYLOAD ? 0 : -NM_EPROTO;
  case NMAD_RUN_MSG_BARRIER:
  case NMAD_RUN_MSG_FAULT:
  case NMAD_RUN_MSG_FINI:
    return h->len == 0 ? 0 : -NM_EPROTO;
  case NMAD_RUN_MSG_ABORT:
    return h->len == NMAD_RUN_ABORT_LEN ? 0 : -NM_EPROTO;
  default:
    return -NM_EPROTO;
  }
}

void nmad_run_abort_encode(uint8_t out[NMAD_RUN_ABORT_LEN], int32_t code)
{
  put_u32(out, (uint32_t)code);
}

int32_t nmad_run_abort_decode(const uint8_t in[NMAD_RUN_ABORT_LEN])
{
  uint32_t v = get_u32(in);
  return v > INT32_MAX ? -(int32_t)(UINT32_MAX - v) - 1 : (int32_t)v; /* two's complement without UB */
}

/* Wait until fd is ready for @p events; used when a caller hands us a non-blocking fd. */
static int wait_fd(int fd, short events)
{
  struct pollfd p = { .fd = fd, .events = events, .revents = 0 };
  for (;;) {
    int rc = poll(&p, 1, -1);
    if (rc >= 0)
      return 0;
    if (errno != EINTR)
      return -NM_EUNKNOWN;
  }
}

static int errno_to_nm(int e)
{
  switch (e) {
  case EPIPE:
  case ECONNRESET:
  case ENOTCONN:
    return -NM_ECLOSED;
  case ENOMEM:
  case ENOBUFS:
    return -NM_ENOMEM;
  default:
    return -NM_EUNKNOWN;
  }
}

int nmad_run_write_full(int fd, const void *buf, size_t len)
{
  const uint8_t *p = buf;
  int is_socket = 1;
  while (len > 0) {
    ssize_t n = is_socket ? send(fd, p, len, MSG_NOSIGNAL) : write(fd, p, len);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      if (errno == ENOTSOCK && is_socket) {
        is_socket = 0; /* a pipe or a file in tests: plain write (SIGPIPE is then the caller's business) */
        continue;
      }
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        int rc = wait_fd(fd, POLLOUT);
        if (rc)
          return rc;
        continue;
      }
      return errno_to_nm(errno);
    }
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

int nmad_run_read_full(int fd, void *buf, size_t len)
{
  uint8_t *p = buf;
  while (len > 0) {
    ssize_t n = read(fd, p, len);
    if (n == 0)
      return -NM_ECLOSED;
    if (n < 0) {
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        int rc = wait_fd(fd, POLLIN);
        if (rc)
          return rc;
        continue;
      }
      return errno_to_nm(errno);
    }
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

int nmad_run_send(int fd, uint32_t type, uint32_t arg, const void *payload, uint64_t len)
{
  if (len > NMAD_RUN_PROTO_MAX_PAYLOAD || (len > 0 && payload == NULL))
    return -NM_EINVAL;
  uint8_t hdr[NMAD_RUN_HDR_SIZE];
  nmad_run_hdr_encode(hdr, type, arg, len);
  /* Small frames go out in one write so the peer usually sees a whole frame at once. */
  if (len <= 4096) {
    uint8_t frame[NMAD_RUN_HDR_SIZE + 4096];
    memcpy(frame, hdr, sizeof(hdr));
    if (len > 0)
      memcpy(frame + NMAD_RUN_HDR_SIZE, payload, (size_t)len);
    return nmad_run_write_full(fd, frame, NMAD_RUN_HDR_SIZE + (size_t)len);
  }
  int rc = nmad_run_write_full(fd, hdr, sizeof(hdr));
  if (rc)
    return rc;
  return nmad_run_write_full(fd, payload, (size_t)len);
}

int nmad_run_recv(int fd, struct nmad_run_hdr_s *h, void **payload)
{
  uint8_t hdr[NMAD_RUN_HDR_SIZE];
  *payload = NULL;
  int rc = nmad_run_read_full(fd, hdr, sizeof(hdr));
  if (rc)
    return rc;
  rc = nmad_run_hdr_decode(hdr, h);
  if (rc)
    return rc;
  if (h->len == 0)
    return 0;
  void *buf = malloc((size_t)h->len);
  if (buf == NULL)
    return -NM_ENOMEM;
  rc = nmad_run_read_full(fd, buf, (size_t)h->len);
  if (rc) {
    free(buf);
    return rc;
  }
  *payload = buf;
  return 0;
}

void nmad_run_rx_init(struct nmad_run_rx_s *rx)
{
  memset(rx, 0, sizeof(*rx));
}

void nmad_run_rx_reset(struct nmad_run_rx_s *rx)
{
  free(rx->payload);
  nmad_run_rx_init(rx);
}

int nmad_run_rx_progress(int fd, struct nmad_run_rx_s *rx)
{
  for (;;) {
    if (rx->got >= NMAD_RUN_HDR_SIZE && rx->got == NMAD_RUN_HDR_SIZE + rx->hdr.len)
      return 1;
    uint8_t *dst;
    size_t want;
    if (rx->got < NMAD_RUN_HDR_SIZE) {
      dst = rx->hdr_buf + rx->got;
      want = NMAD_RUN_HDR_SIZE - rx->got;
    } else {
      size_t off = rx->got - NMAD_RUN_HDR_SIZE;
      dst = rx->payload + off;
      want = (size_t)rx->hdr.len - off;
    }
    ssize_t n = read(fd, dst, want);
    if (n == 0)
      return -NM_ECLOSED;
    if (n < 0) {
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK)
        return 0;
      return errno_to_nm(errno);
    }
    rx->got += (size_t)n;
    if (rx->got == NMAD_RUN_HDR_SIZE) {
      int rc = nmad_run_hdr_decode(rx->hdr_buf, &rx->hdr);
      if (rc)
        return rc;
      if (rx->hdr.len > 0) {
        rx->payload = malloc((size_t)rx->hdr.len);
        if (rx->payload == NULL)
          return -NM_ENOMEM;
      }
    }
  }
}

void nmad_run_job_name(long self, char out[NMAD_RUN_JOB_CHARS])
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  snprintf(out, NMAD_RUN_JOB_CHARS, "%lxx%llx", (unsigned long)self,
           (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec);
}

int nmad_run_key_new(uint64_t *key)
{
  uint64_t k = 0;
  while (k == 0) /* 0 is NM_WIRE_KEY_NONE: a core no launcher configured */
    if (getrandom(&k, sizeof(k), 0) != (ssize_t)sizeof(k) && errno != EINTR)
      return -NM_EUNKNOWN;
  *key = k;
  return 0;
}

void nmad_run_key_format(uint64_t key, char *buf)
{
  snprintf(buf, NMAD_RUN_KEY_CHARS, "%016llx", (unsigned long long)key);
}

static int hex_digit(char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

int nmad_run_key_parse(const char *s, uint64_t *key)
{
  uint64_t k = 0;
  for (int i = 0; i < NMAD_RUN_KEY_CHARS - 1; i++) {
    int v = hex_digit(s[i]); /* stops at the NUL of a short string */
    if (v < 0)
      return -NM_EINVAL;
    k = k << 4 | (uint64_t)v;
  }
  if (s[NMAD_RUN_KEY_CHARS - 1] != '\0')
    return -NM_EINVAL;
  *key = k;
  return 0;
}
