/* flight-recorder.c: the flight recorder's ring (GS_TRACE_RING=64M, gs_trace_open_ring): the
 * newest chunks of the log, kept in memory instead of written, and written out as a whole log
 * when asked (gs_trace_dump), on an error, on a fatal signal and at exit (writer.c decides
 * when; this file keeps the chunks and writes them).
 *
 * The ring holds whole chunks, as the writer makes them, up to its size in bytes. A chunk that
 * no longer fits pushes out the oldest ones; each chunk pushed out is decoded and applied to
 * the state it leaves (flight-state.c), so a dump can begin with a snapshot of what was alive
 * at its first kept chunk and every string, site and binary its chunks name. A dump is:
 * the header, that snapshot, the kept chunks in the order they were made.
 *
 * Callers hold the writer's sink lock, or are its fatal signal handler, which cannot take it
 * (then the dump is best effort, as the writer's own crash flush is). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flight-recorder.h"
#include "flight-state.h"
#include "format.h"

typedef struct ring_chunk {
  struct ring_chunk *next;
  size_t size; /* header, payload and padding */
  uint8_t bytes[];
} ring_chunk;

static struct {
  char *path;
  uint64_t capacity, used;
  ring_chunk *oldest, *newest;
  gs__flight_state *state; /* what the chunks pushed out leave */
  gs_trace_reader *decoder; /* fed the header once, then each chunk pushed out */
  uint32_t reason;           /* string id of the snapshot's reason */
  const char *reason_text;
  uint64_t dropped;          /* chunks pushed out so far */
} ring;

bool gs__flight_on(void) { return ring.path != NULL; }

bool gs__flight_open(const char *path, uint64_t capacity, const uint8_t *header,
                     uint32_t reason, const char *reason_text) {
  gs__flight_close();
  ring.path = strdup(path);
  ring.state = gs__flight_state_new();
  ring.decoder = gs_trace_reader_new();
  if (!ring.path || !ring.state || !ring.decoder) {
    gs__flight_close();
    return false;
  }
  ring.capacity = capacity;
  ring.reason = reason;
  ring.reason_text = reason_text;
  gs_trace_reader_feed(ring.decoder, header, GS__TRACE_HEADER_SIZE);
  return true;
}

void gs__flight_close(void) {
  while (ring.oldest) {
    ring_chunk *c = ring.oldest;
    ring.oldest = c->next;
    free(c);
  }
  free(ring.path);
  gs__flight_state_free(ring.state);
  if (ring.decoder)
    gs_trace_reader_free(ring.decoder);
  memset(&ring, 0, sizeof ring);
}

/* Applies the oldest chunk to the state and frees it. */
static void push_out_oldest(void) {
  ring_chunk *c = ring.oldest;
  ring.oldest = c->next;
  if (!ring.oldest)
    ring.newest = NULL;
  ring.used -= c->size;
  ring.dropped++;
  gs_trace_reader_feed(ring.decoder, c->bytes, c->size);
  gs_trace_event e;
  while (gs_trace_reader_next(ring.decoder, &e) == GS_TRACE_EVENT)
    gs__flight_state_apply(ring.state, &e);
  free(c);
}

void gs__flight_keep(const uint8_t *header, const uint8_t *payload, size_t len, size_t pad) {
  size_t size = GS__TRACE_CHUNK_HEADER_SIZE + len + pad;
  while (ring.oldest && ring.used + size > ring.capacity)
    push_out_oldest();
  ring_chunk *c = malloc(sizeof *c + size);
  if (!c) { /* no memory: the chunk is lost, and so is what the snapshot would know of it */
    return;
  }
  c->next = NULL;
  c->size = size;
  memcpy(c->bytes, header, GS__TRACE_CHUNK_HEADER_SIZE);
  memcpy(c->bytes + GS__TRACE_CHUNK_HEADER_SIZE, payload, len);
  memset(c->bytes + GS__TRACE_CHUNK_HEADER_SIZE + len, 0, pad);
  if (ring.newest)
    ring.newest->next = c;
  else
    ring.oldest = c;
  ring.newest = c;
  ring.used += size;
}

static bool write_fd(const void *bytes, size_t n, void *ctx) {
  return gs__tw_write_all(*(int *)ctx, bytes, n);
}

int gs__flight_dump_open(const uint8_t *header) {
  if (!ring.path)
    return -1;
  /* Written beside, then renamed over: a crash during the dump leaves the previous one. The
   * name is built without allocating (a signal handler may be here). */
  char tmp[4096];
  size_t n = strlen(ring.path);
  if (n + 5 > sizeof tmp)
    return -1;
  memcpy(tmp, ring.path, n);
  memcpy(tmp + n, ".tmp", 5);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return -1;
  bool ok = write_fd(header, GS__TRACE_HEADER_SIZE, &fd);
  /* An incomplete state (memory ran out while applying) still writes what it has. */
  if (ok && !gs__flight_state_empty(ring.state))
    gs__flight_state_write(ring.state, ring.reason, ring.reason_text, write_fd, &fd);
  for (ring_chunk *c = ring.oldest; ok && c; c = c->next)
    ok = write_fd(c->bytes, c->size, &fd);
  if (!ok) {
    close(fd);
    unlink(tmp);
    return -1;
  }
  return fd;
}

bool gs__flight_dump_close(int fd) {
  char tmp[4096];
  size_t n = strlen(ring.path);
  memcpy(tmp, ring.path, n);
  memcpy(tmp + n, ".tmp", 5);
  bool ok = close(fd) == 0;
  return ok && rename(tmp, ring.path) == 0;
}

uint64_t gs__flight_dropped(void) { return ring.dropped; }
