/* flight-recorder.h: the flight recorder's ring of chunks (flight-recorder.c), for the writer
 * (writer.c), which decides when chunks are kept and when the ring is written out. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* True while a ring is open. */
bool gs__flight_on(void);
/* Opens a ring of capacity bytes that dumps to path; header is the log's 64-byte header,
 * reason the string id (and text) the snapshot names as why it was taken. False (and no ring)
 * if memory runs out. */
bool gs__flight_open(const char *path, uint64_t capacity, const uint8_t *header,
                     uint32_t reason, const char *reason_text);
void gs__flight_close(void);
/* In a forked child: drops the parent's ring without joining its applier thread (not in this
 * process) or freeing what it may have been changing. */
void gs__flight_forget_after_fork(void);
/* Keeps one chunk: its 32-byte header, payload and the padding after it (zeros). */
void gs__flight_keep(const uint8_t *header, const uint8_t *payload, size_t len, size_t pad);
/* Starts a dump: opens a file beside the ring's path and writes the header, the snapshot of
 * what the applied chunks leave, the chunks not yet applied and every kept chunk. Returns its
 * descriptor (the caller may append chunks not yet kept, then calls _dump_close), or -1.
 * from_signal: a fatal signal's handler, which takes no lock. */
int gs__flight_dump_open(const uint8_t *header, bool from_signal);
/* Closes the dump and renames it over the ring's path. */
bool gs__flight_dump_close(int fd);
/* Chunks pushed out of the ring so far. */
uint64_t gs__flight_dropped(void);

/* Writes all of buf to fd, retrying short and interrupted writes; false if the write failed.
 * Only write(2): a signal handler may call it. (writer.c: the sink and the dumps share it.) */
bool gs__tw_write_all(int fd, const void *buf, size_t n);
