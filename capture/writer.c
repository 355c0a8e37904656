/* writer.c: the writing side of the format itself: a log's 64-byte header and a chunk's
 * 32-byte header (its CRC-32C over the header's rest and the payload). The engine's recorder
 * (engine/trace/writer.c) and its flight recorder (engine/trace/flight-state.c) frame every
 * chunk they write with these, so the framing is made in one place, next to the reader that
 * checks it.
 *
 * Why the rest of the recorder stays in the engine: its per-thread buffers take the engine's
 * spinlock, thread-local storage model and fork guard (engine/base/), and every event takes
 * the engine's own event number, the one its error messages cite. Those are the engine's, not
 * the format's; what is here depends on libc only. */
#include "format.h"

void gs__trace_file_header(uint8_t *header, uint64_t start_monotonic_ns,
                           uint64_t start_realtime_ns, uint32_t pid) {
  uint8_t *h = header;
  memset(h, 0, GS__TRACE_HEADER_SIZE);
  memcpy(h, GS__TRACE_MAGIC, 8);
  h[GS__TRACE_HDR_MAJOR] = GS_TRACE_VERSION_MAJOR;
  h[GS__TRACE_HDR_MINOR] = GS_TRACE_VERSION_MINOR;
  h[GS__TRACE_HDR_LITTLE] = 1;
  gs__put_u32(h + GS__TRACE_HDR_SIZE, GS__TRACE_HEADER_SIZE);
  gs__put_u64(h + GS__TRACE_HDR_REALTIME, start_realtime_ns);
  gs__put_u64(h + GS__TRACE_HDR_MONOTONIC, start_monotonic_ns);
  gs__put_u32(h + GS__TRACE_HDR_PID, pid);
  gs__put_u32(h + GS__TRACE_HDR_CRC, gs__crc32c(0, h, GS__TRACE_HDR_CRC));
}

void gs__trace_chunk_header(uint8_t *header, uint32_t thread, uint64_t base_seq,
                            uint64_t base_time, const uint8_t *payload, size_t len) {
  gs__put_u32(header, GS__TRACE_CHUNK_MAGIC);
  gs__put_u32(header + 4, (uint32_t)len);
  gs__put_u32(header + 12, thread);
  gs__put_u64(header + 16, base_seq);
  gs__put_u64(header + 24, base_time);
  uint32_t crc = gs__crc32c(0, header + 12, GS__TRACE_CHUNK_HEADER_SIZE - 12);
  crc = gs__crc32c(crc, payload, len);
  gs__put_u32(header + 8, crc);
}
