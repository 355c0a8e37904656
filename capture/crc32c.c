/* crc32c.c: CRC-32C (Castagnoli), which checks every chunk of the event log. x86's SSE4.2
 * crc32 instruction computes exactly this polynomial (about 8 bytes a cycle): used when the
 * CPU has it; elsewhere slicing-by-8 tables (a few GB/s). */
#include <pthread.h>

#include "format.h"

static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void build_table(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++)
      c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
    table[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; i++)
    for (int t = 1; t < 8; t++)
      table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc32c_hardware(uint32_t crc, const uint8_t *p,
                                                                 size_t n) {
  uint64_t c = ~crc;
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t v;
    memcpy(&v, p, 8);
    c = __builtin_ia32_crc32di(c, v);
  }
  uint32_t c32 = (uint32_t)c;
  for (; n > 0; n--, p++)
    c32 = __builtin_ia32_crc32qi(c32, *p);
  return ~c32;
}
#endif

uint32_t gs__crc32c(uint32_t crc, const void *data, size_t n) {
#if defined(__x86_64__)
  static int hardware = -1;
  if (hardware < 0)
    hardware = __builtin_cpu_supports("sse4.2") ? 1 : 0;
  if (hardware)
    return crc32c_hardware(crc, data, n);
#endif
  pthread_once(&table_once, build_table);
  const uint8_t *p = data;
  crc = ~crc;
  while (n >= 8) {
    uint32_t lo = gs__get_u32(p) ^ crc, hi = gs__get_u32(p + 4);
    crc = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^ table[5][(lo >> 16) & 0xff] ^
          table[4][lo >> 24] ^ table[3][hi & 0xff] ^ table[2][(hi >> 8) & 0xff] ^
          table[1][(hi >> 16) & 0xff] ^ table[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n--)
    crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
  return ~crc;
}
