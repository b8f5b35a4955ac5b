/* uthash's hash and key comparison for the core's tables (nm_match_hash.c, nm_gate.c): included before uthash
 * (through nm_core_private.h) by every file that adds to or looks up in such a table, so that the one function
 * that placed an entry is the one that finds it. */
#ifndef NM_HASH_WORDS_H
#define NM_HASH_WORDS_H
#include <stdint.h>
#include <string.h>

/* Every key here is a few 64-bit words (gate pointer and tag, tag/session/seq, cookie) or a rank: a
 * multiply-xorshift mix per word costs a few cycles where uthash's default (Jenkins, byte-oriented) was a third of
 * the matching time. */
static inline unsigned nm_hash_words(const void *key, unsigned len)
{
  const unsigned char *p = key;
  uint64_t h = 0x9e3779b97f4a7c15ULL ^ len;
  for (; len >= 8; len -= 8, p += 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdULL;
    h ^= h >> 32;
  }
  for (; len > 0; len--, p++)
    h = (h ^ *p) * 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 29;
  return (unsigned)(h ^ (h >> 32));
}
#define HASH_FUNCTION(keyptr, keylen, hashv) ((hashv) = nm_hash_words((keyptr), (unsigned)(keylen)))

/* Keys compared word by word, inline (uthash's default is a memcmp() call per chain element). @return 0 if equal. */
static inline int nm_hash_keycmp(const void *a, const void *b, size_t len)
{
  const unsigned char *p = a, *q = b;
  for (; len >= 8; len -= 8, p += 8, q += 8) {
    uint64_t x, y;
    memcpy(&x, p, 8);
    memcpy(&y, q, 8);
    if (x != y)
      return 1;
  }
  return len ? memcmp(p, q, len) : 0;
}
#define HASH_KEYCMP(a, b, n) nm_hash_keycmp((a), (b), (n))

#endif /* NM_HASH_WORDS_H */
