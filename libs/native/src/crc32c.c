/*
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78): the checksum of
 * serialized states. Portable slice-by-8; tables built once, on first use.
 */
#include "internal.h"

static uint32_t table[8][256];
static int ready;

static void build(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1)));
    table[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; i++)
    for (int t = 1; t < 8; t++)
      table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
  ready = 1;
}

void hq_crc32c_init_tables(void) {
  if (!ready) build();
}

uint32_t hq_crc32c(uint32_t crc, const uint8_t *p, size_t n) {
  if (!ready) build();
  crc = ~crc;
  while (n >= 8) {
    uint32_t lo = crc ^ hq_load32_le(p);
    uint32_t hi = hq_load32_le(p + 4);
    crc = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^
          table[5][(lo >> 16) & 0xff] ^ table[4][lo >> 24] ^
          table[3][hi & 0xff] ^ table[2][(hi >> 8) & 0xff] ^
          table[1][(hi >> 16) & 0xff] ^ table[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n--) crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
  return ~crc;
}
