/* Unit tests of the wire format: encode/decode round trips, and a validating decoder that rejects every
 * malformed or truncated packet (DESIGN.md rule 5). */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include "nmad/core/nm_wire.h"
#include <nmad/nm_errno.h>

/* A packet with one chunk of each type; returns its length. */
static size_t build_packet(uint8_t *buf)
{
  size_t len = NM_WIRE_PKT_HDR_LEN;
  const char payload[] = "hello, nmad";
  len += nm_wire_put_data_hdr(buf + len, 7, 0x1122334455667788ULL, 42, sizeof(payload), 0, 0, 0);
  memcpy(buf + len, payload, sizeof(payload));
  len += sizeof(payload);
  len += nm_wire_put_data_hdr(buf + len, 7, 9, 1, 0, 1, 0xabcdefULL, 0);
  len += nm_wire_put_rdv(buf + len, 8, 10, 3, 1 << 20, 77, 0);
  len += nm_wire_put_rtr(buf + len, 1, 77, 4096, 65536, 991);
  len += nm_wire_put_ack(buf + len, 0xabcdefULL);
  len += nm_wire_put_cancel(buf + len, NM_WIRE_CANCEL, 0, 7, 0x99, 12);
  len += nm_wire_put_cancel(buf + len, NM_WIRE_CANCEL_REPLY, 1, 7, 0x99, 12);
  nm_wire_put_pkt_hdr(buf, 7, 3, (uint32_t)len);
  return len;
}

START_TEST(test_roundtrip)
{
  uint8_t buf[512];
  size_t len = build_packet(buf);
  struct nm_wire_pkt_s pkt;
  ck_assert_int_eq(nm_wire_validate(buf, len, &pkt), 0);
  ck_assert_uint_eq(pkt.n_chunks, 7);
  ck_assert_uint_eq(pkt.src_rank, 3);
  ck_assert_uint_eq(pkt.total_len, len);
  size_t off = NM_WIRE_PKT_HDR_LEN;
  struct nm_wire_chunk_s c;
  ck_assert_int_eq(nm_wire_next_chunk(buf, len, &off, &c), 0);
  ck_assert_uint_eq(c.type, NM_WIRE_DATA);
  ck_assert_uint_eq(c.session, 7);
  ck_assert(c.tag == 0x1122334455667788ULL);
  ck_assert_uint_eq(c.seq, 42);
  ck_assert_uint_eq(c.len, 12);
  ck_assert_str_eq((const char *)c.payload, "hello, nmad");
  ck_assert_int_eq(nm_wire_next_chunk(buf, len, &off, &c), 0);
  ck_assert_uint_eq(c.type, NM_WIRE_DATA);
  ck_assert_uint_eq(c.flags, NM_WIRE_FLAG_SYNC);
  ck_assert(c.cookie == 0xabcdefULL);
  ck_assert_uint_eq(c.len, 0);
  ck_assert_int_eq(nm_wire_next_chunk(buf, len, &off, &c), 0);
  ck_assert_uint_eq(c.type, NM_WIRE_RDV);
  ck_assert(c.msg_len == 1 << 20);
  ck_assert(c.cookie == 77);
  ck_assert_int_eq(nm_wire_next_chunk(buf, len, &off, &c), 0);
  ck_assert_uint_eq(c.type, NM_WIRE_RTR);
  ck_assert_uint_eq(c.rail, 1);
  ck_assert(c.offset == 4096 && c.msg_len == 65536 && c.rtag == 991 && c.cookie == 77);
  ck_assert_int_eq(nm_wire_next_chunk(buf, len, &off, &c), 0);
  ck_assert_uint_eq(c.type, NM_WIRE_ACK);
  ck_assert_int_eq(nm_wire_next_chunk(buf, len, &off, &c), 0);
  ck_assert_uint_eq(c.type, NM_WIRE_CANCEL);
  ck_assert(c.session == 7 && c.tag == 0x99 && c.seq == 12 && c.result == 0);
  ck_assert_int_eq(nm_wire_next_chunk(buf, len, &off, &c), 0);
  ck_assert_uint_eq(c.type, NM_WIRE_CANCEL_REPLY);
  ck_assert(c.session == 7 && c.tag == 0x99 && c.seq == 12 && c.result == 1);
  ck_assert_uint_eq(off, len);
}
END_TEST

START_TEST(test_prefix_roundtrip)
{
  uint8_t buf[256];
  size_t off = NM_WIRE_PKT_HDR_LEN;
  off += nm_wire_put_data_hdr(buf + off, 3, 4, 5, 10, 1, 99, 6);
  memcpy(buf + off, "HEADERbody", 10);
  off += 10;
  size_t r = off;
  off += nm_wire_put_rdv(buf + off, 3, 4, 6, 1 << 20, 7, 6);
  memcpy(buf + off, "HEADER", 6);
  off += 6;
  nm_wire_put_pkt_hdr(buf, 2, 1, (uint32_t)off);
  struct nm_wire_pkt_s pkt;
  ck_assert_int_eq(nm_wire_validate(buf, off, &pkt), 0);
  size_t o = NM_WIRE_PKT_HDR_LEN;
  struct nm_wire_chunk_s c;
  ck_assert_int_eq(nm_wire_next_chunk(buf, off, &o, &c), 0);
  ck_assert_uint_eq(c.prefix_len, 6);
  ck_assert_uint_eq(c.len, 10);
  ck_assert(c.cookie == 99);
  ck_assert_mem_eq(c.payload, "HEADERbody", 10);
  ck_assert_uint_eq(o, r);
  ck_assert_int_eq(nm_wire_next_chunk(buf, off, &o, &c), 0);
  ck_assert_uint_eq(c.type, NM_WIRE_RDV);
  ck_assert_uint_eq(c.prefix_len, 6);
  ck_assert(c.msg_len == 1 << 20);
  ck_assert_mem_eq(c.payload, "HEADER", 6);
}
END_TEST

START_TEST(test_little_endian_layout)
{
  uint8_t buf[64];
  nm_wire_put_pkt_hdr(buf, 0x0102, 0x03040506, 0x0708090a);
  const uint8_t want[12] = {NM_WIRE_MAGIC, NM_WIRE_VERSION, 0x02, 0x01, 0x06, 0x05, 0x04, 0x03, 0x0a, 0x09, 0x08, 0x07};
  ck_assert_mem_eq(buf, want, 12);
}
END_TEST

/* Every strict prefix of a valid packet is rejected, with its header fixed up to claim the prefix length
 * (so the chunk decoder, not only the length check, sees the truncation). */
START_TEST(test_truncated_prefixes)
{
  uint8_t buf[512], copy[512];
  size_t len = build_packet(buf);
  struct nm_wire_pkt_s pkt;
  for (size_t cut = 0; cut < len; cut++) {
    memcpy(copy, buf, len);
    ck_assert_int_eq(nm_wire_validate(copy, cut, &pkt), -NM_EPROTO);
    if (cut >= NM_WIRE_PKT_HDR_LEN) {
      nm_wire_put_pkt_hdr(copy, 7, 3, (uint32_t)cut);
      ck_assert_int_eq(nm_wire_validate(copy, cut, &pkt), -NM_EPROTO);
    }
  }
}
END_TEST

START_TEST(test_bad_headers)
{
  uint8_t buf[512];
  size_t len = build_packet(buf);
  struct nm_wire_pkt_s pkt;
  buf[0] ^= 0xff; /* magic */
  ck_assert_int_eq(nm_wire_validate(buf, len, &pkt), -NM_EPROTO);
  len = build_packet(buf);
  buf[1] = NM_WIRE_VERSION + 1;
  ck_assert_int_eq(nm_wire_validate(buf, len, &pkt), -NM_EPROTO);
  len = build_packet(buf);
  nm_wire_put_pkt_hdr(buf, 6, 3, (uint32_t)len); /* claims one chunk more than present */
  ck_assert_int_eq(nm_wire_validate(buf, len, &pkt), -NM_EPROTO);
  nm_wire_put_pkt_hdr(buf, 4, 3, (uint32_t)len); /* trailing garbage after the last chunk */
  ck_assert_int_eq(nm_wire_validate(buf, len, &pkt), -NM_EPROTO);
  nm_wire_put_pkt_hdr(buf, 0, 3, (uint32_t)len); /* no chunk */
  ck_assert_int_eq(nm_wire_validate(buf, len, &pkt), -NM_EPROTO);
  nm_wire_put_pkt_hdr(buf, 5, 3, (uint32_t)len + 1); /* total length lies */
  ck_assert_int_eq(nm_wire_validate(buf, len, &pkt), -NM_EPROTO);
}
END_TEST

START_TEST(test_bad_chunks)
{
  uint8_t buf[256];
  struct nm_wire_pkt_s pkt;
  size_t off = NM_WIRE_PKT_HDR_LEN;
  /* DATA whose length field exceeds the packet */
  size_t h = nm_wire_put_data_hdr(buf + off, 1, 1, 0, 1000, 0, 0, 0);
  nm_wire_put_pkt_hdr(buf, 1, 0, (uint32_t)(off + h + 10));
  ck_assert_int_eq(nm_wire_validate(buf, off + h + 10, &pkt), -NM_EPROTO);
  /* DATA with a length of 0xffffffff (overflow bait) */
  h = nm_wire_put_data_hdr(buf + off, 1, 1, 0, 0xffffffffu, 0, 0, 0);
  nm_wire_put_pkt_hdr(buf, 1, 0, (uint32_t)(off + h));
  ck_assert_int_eq(nm_wire_validate(buf, off + h, &pkt), -NM_EPROTO);
  /* unknown chunk type */
  h = nm_wire_put_ack(buf + off, 1);
  buf[off] = NM_WIRE_TYPE_MAX + 1;
  nm_wire_put_pkt_hdr(buf, 1, 0, (uint32_t)(off + h));
  ck_assert_int_eq(nm_wire_validate(buf, off + h, &pkt), -NM_EPROTO);
  /* unknown flag bit on DATA */
  h = nm_wire_put_data_hdr(buf + off, 1, 1, 0, 0, 0, 0, 0);
  buf[off + 1] = 0x80;
  nm_wire_put_pkt_hdr(buf, 1, 0, (uint32_t)(off + h));
  ck_assert_int_eq(nm_wire_validate(buf, off + h, &pkt), -NM_EPROTO);
  /* RTR whose offset + length overflows 64 bits */
  h = nm_wire_put_rtr(buf + off, 0, 1, UINT64_MAX - 10, 100, 1);
  nm_wire_put_pkt_hdr(buf, 1, 0, (uint32_t)(off + h));
  ck_assert_int_eq(nm_wire_validate(buf, off + h, &pkt), -NM_EPROTO);
  /* RDV whose inline prefix is longer than the whole message */
  h = nm_wire_put_rdv(buf + off, 1, 1, 0, 4, 5, 8);
  memset(buf + off + h, 0, 8);
  nm_wire_put_pkt_hdr(buf, 1, 0, (uint32_t)(off + h + 8));
  ck_assert_int_eq(nm_wire_validate(buf, off + h + 8, &pkt), -NM_EPROTO);
  /* RDV announcing inline bytes that are not in the packet */
  h = nm_wire_put_rdv(buf + off, 1, 1, 0, 1 << 20, 5, 64);
  nm_wire_put_pkt_hdr(buf, 1, 0, (uint32_t)(off + h + 10));
  ck_assert_int_eq(nm_wire_validate(buf, off + h + 10, &pkt), -NM_EPROTO);
  /* DATA whose prefix is longer than its payload */
  h = nm_wire_put_data_hdr(buf + off, 1, 1, 0, 4, 0, 0, 5);
  nm_wire_put_pkt_hdr(buf, 1, 0, (uint32_t)(off + h + 4));
  ck_assert_int_eq(nm_wire_validate(buf, off + h + 4, &pkt), -NM_EPROTO);
  /* CANCEL_REPLY with a result other than 0 or 1, CANCEL with a result at all, reserved bytes set */
  h = nm_wire_put_cancel(buf + off, NM_WIRE_CANCEL_REPLY, 1, 1, 1, 0);
  buf[off + 1] = 2;
  nm_wire_put_pkt_hdr(buf, 1, 0, (uint32_t)(off + h));
  ck_assert_int_eq(nm_wire_validate(buf, off + h, &pkt), -NM_EPROTO);
  h = nm_wire_put_cancel(buf + off, NM_WIRE_CANCEL, 1, 1, 1, 0);
  nm_wire_put_pkt_hdr(buf, 1, 0, (uint32_t)(off + h));
  ck_assert_int_eq(nm_wire_validate(buf, off + h, &pkt), -NM_EPROTO);
  h = nm_wire_put_cancel(buf + off, NM_WIRE_CANCEL, 0, 1, 1, 0);
  buf[off + 21] = 1;
  nm_wire_put_pkt_hdr(buf, 1, 0, (uint32_t)(off + h));
  ck_assert_int_eq(nm_wire_validate(buf, off + h, &pkt), -NM_EPROTO);
  /* CANCEL cut short by the end of the packet */
  h = nm_wire_put_cancel(buf + off, NM_WIRE_CANCEL, 0, 1, 1, 0);
  nm_wire_put_pkt_hdr(buf, 1, 0, (uint32_t)(off + h - 4));
  ck_assert_int_eq(nm_wire_validate(buf, off + h - 4, &pkt), -NM_EPROTO);
  /* ACK with non-zero reserved bytes */
  h = nm_wire_put_ack(buf + off, 1);
  buf[off + 3] = 1;
  nm_wire_put_pkt_hdr(buf, 1, 0, (uint32_t)(off + h));
  ck_assert_int_eq(nm_wire_validate(buf, off + h, &pkt), -NM_EPROTO);
}
END_TEST

/* Random mutations of a valid packet: the decoder either accepts or rejects, never reads out of bounds
 * (run under valgrind or ASan to see the latter); every accepted chunk lies inside the packet. */
START_TEST(test_random_mutations)
{
  uint8_t buf[512], copy[512];
  size_t len = build_packet(buf);
  unsigned seed = 12345;
  int rejected = 0;
  for (int iter = 0; iter < 20000; iter++) {
    memcpy(copy, buf, len);
    int flips = 1 + rand_r(&seed) % 4;
    for (int f = 0; f < flips; f++)
      copy[rand_r(&seed) % len] = (uint8_t)rand_r(&seed);
    size_t l = len - (size_t)(rand_r(&seed) % 3);
    uint8_t *heap = malloc(l); /* exact-size allocation so an overread is caught by sanitizers */
    memcpy(heap, copy, l);
    struct nm_wire_pkt_s pkt;
    if (nm_wire_validate(heap, l, &pkt) == 0) {
      size_t off = NM_WIRE_PKT_HDR_LEN;
      struct nm_wire_chunk_s c;
      for (unsigned i = 0; i < pkt.n_chunks; i++) {
        ck_assert_int_eq(nm_wire_next_chunk(heap, l, &off, &c), 0);
        if (c.payload)
          ck_assert(c.payload >= heap && c.payload + c.len <= heap + l);
      }
    } else {
      rejected++;
    }
    free(heap);
  }
  ck_assert_int_gt(rejected, 0);
}
END_TEST

/* The one-pass validation of a lone DATA chunk (nm_wire_validate_keep() with room for a chunk) against the walk
 * (nm_wire_validate(), which never takes it): random mutations and truncations of such packets get the same verdict
 * from both, and an accepted packet the same fields. */
START_TEST(test_lone_data_same_as_walk)
{
  uint8_t buf[128], copy[128];
  const uint8_t payload[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  size_t len = NM_WIRE_PKT_HDR_LEN;
  len += nm_wire_put_data_hdr(buf + len, 5, 0x0102030405060708ULL, 77, sizeof(payload), 0, 0, 0);
  memcpy(buf + len, payload, sizeof(payload));
  len += sizeof(payload);
  nm_wire_put_pkt_hdr_key(buf, 1, 3, (uint32_t)len, 0xfeedULL);
  unsigned seed = 777;
  int accepted = 0, rejected = 0;
  for (int iter = 0; iter < 20000; iter++) {
    memcpy(copy, buf, len);
    int flips = iter == 0 ? 0 : rand_r(&seed) % 3;
    for (int f = 0; f < flips; f++)
      copy[rand_r(&seed) % len] = (uint8_t)rand_r(&seed);
    size_t l = len - (iter % 5 == 4 ? (size_t)(rand_r(&seed) % 4) : 0);
    if (iter % 7 == 6) { /* a payload length that agrees with a shorter packet: header and length cut together */
      l = NM_WIRE_PKT_HDR_LEN + NM_WIRE_MSG_HDR_LEN + (size_t)(rand_r(&seed) % 9);
      nm_wire_put_pkt_hdr_key(copy, 1, 3, (uint32_t)l, 0xfeedULL);
      copy[NM_WIRE_PKT_HDR_LEN + 20] = (uint8_t)(l - NM_WIRE_PKT_HDR_LEN - NM_WIRE_MSG_HDR_LEN);
    }
    uint8_t *heap = malloc(l); /* exact size: an overread shows under the sanitizers */
    memcpy(heap, copy, l);
    struct nm_wire_pkt_s walk_pkt, fast_pkt;
    struct nm_wire_chunk_s fast[2], walk;
    int walk_rc = nm_wire_validate(heap, l, &walk_pkt);
    int fast_rc = nm_wire_validate_keep(heap, l, &fast_pkt, fast, 2);
    ck_assert_int_eq(fast_rc, walk_rc);
    if (walk_rc == 0) {
      accepted++;
      size_t off = NM_WIRE_PKT_HDR_LEN;
      ck_assert_int_eq(nm_wire_next_chunk(heap, l, &off, &walk), 0);
      ck_assert_int_eq(fast_pkt.n_chunks, walk_pkt.n_chunks);
      ck_assert_uint_eq(fast_pkt.src_rank, walk_pkt.src_rank);
      ck_assert_uint_eq(fast_pkt.total_len, walk_pkt.total_len);
      ck_assert_uint_eq(fast_pkt.job_key, walk_pkt.job_key);
      ck_assert_int_eq(fast[0].type, walk.type);
      ck_assert_int_eq(fast[0].flags, walk.flags);
      ck_assert_uint_eq(fast[0].session, walk.session);
      ck_assert_uint_eq(fast[0].tag, walk.tag);
      ck_assert_uint_eq(fast[0].seq, walk.seq);
      ck_assert_uint_eq(fast[0].len, walk.len);
      ck_assert_uint_eq(fast[0].msg_len, walk.msg_len);
      ck_assert_uint_eq(fast[0].prefix_len, walk.prefix_len);
      ck_assert_uint_eq(fast[0].cookie, walk.cookie);
      ck_assert_uint_eq(fast[0].offset, walk.offset);
      ck_assert_ptr_eq(fast[0].payload, walk.payload);
    } else {
      rejected++;
    }
    free(heap);
  }
  ck_assert_int_gt(accepted, 100);
  ck_assert_int_gt(rejected, 100);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("wire");
  TCase *tc = tcase_create("wire");
  tcase_add_test(tc, test_roundtrip);
  tcase_add_test(tc, test_little_endian_layout);
  tcase_add_test(tc, test_prefix_roundtrip);
  tcase_add_test(tc, test_truncated_prefixes);
  tcase_add_test(tc, test_bad_headers);
  tcase_add_test(tc, test_bad_chunks);
  tcase_add_test(tc, test_random_mutations);
  tcase_add_test(tc, test_lone_data_same_as_walk);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
