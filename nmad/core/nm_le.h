/**
 * @file nm_le.h
 * @brief Private: little-endian fixed-width field access for everything that goes on the wire.
 */
#ifndef NM_LE_H
#define NM_LE_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

static inline void nm_put8(uint8_t *p, uint8_t v) { p[0] = v; }
static inline void nm_put16(uint8_t *p, uint16_t v) { v = htole16(v); memcpy(p, &v, 2); }
static inline void nm_put32(uint8_t *p, uint32_t v) { v = htole32(v); memcpy(p, &v, 4); }
static inline void nm_put64(uint8_t *p, uint64_t v) { v = htole64(v); memcpy(p, &v, 8); }
static inline uint16_t nm_get16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return le16toh(v); }
static inline uint32_t nm_get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return le32toh(v); }
static inline uint64_t nm_get64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return le64toh(v); }

#endif /* NM_LE_H */
