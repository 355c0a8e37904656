/* gs-output-lines.h: a spawned program's output cut into lines, one cutter per stream. A read
 * may end anywhere (mid-line, mid-character): the cutter keeps the unfinished part until its
 * newline comes, and hands it over as a last line when the stream ends without one. Private
 * to the sources (gs-source-spawn.c); the line type is public in gs-trace-source.h. */
#pragma once

#include "gs-trace-source.h"

G_BEGIN_DECLS

typedef struct gs_line_cutter {
  GsOutputStream stream;
  GByteArray *partial; /* bytes after the last newline */
} gs_line_cutter;

void gs_line_cutter_init(gs_line_cutter *cutter, GsOutputStream stream);
void gs_line_cutter_clear(gs_line_cutter *cutter);
/* Appends to lines (GsOutputLine*) every line that n more bytes complete. */
void gs_line_cutter_feed(gs_line_cutter *cutter, const guint8 *bytes, gsize n, GPtrArray *lines);
/* The stream ended: what is left is its last line (appended to lines unless empty). */
void gs_line_cutter_finish(gs_line_cutter *cutter, GPtrArray *lines);

/* A line from raw bytes (without the newline): a CR before it goes (CRLF output), and a CR
 * inside it keeps what follows (what a terminal shows last); bytes that are not UTF-8, NULs
 * and Unicode's line separators become U+FFFD. */
GsOutputLine *gs_output_line_new(GsOutputStream stream, const char *bytes, gsize n);

G_END_DECLS
