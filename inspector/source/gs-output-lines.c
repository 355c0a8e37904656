/* gs-output-lines.c: cutting a program's output into lines (see the header). */
#include "gs-output-lines.h"

#include <string.h>

GsOutputLine *gs_output_line_new(GsOutputStream stream, const char *bytes, gsize n) {
  if (n > 0 && bytes[n - 1] == '\r')
    n--;
  /* A CR inside a line returns to its start: a terminal shows what was drawn last (a
   * progress bar redrawn in place), and so does the pane. */
  const char *cr = memrchr(bytes, '\r', n);
  if (cr) {
    n -= (gsize)(cr + 1 - bytes);
    bytes = cr + 1;
  }
  GsOutputLine *line = g_new(GsOutputLine, 1);
  line->stream = stream;
  /* Replaces invalid bytes and NULs alike, so the text is safe for any GTK widget. */
  line->text = g_utf8_make_valid(bytes, (gssize)n);
  /* Unicode's line and paragraph separators would break one line into several in a text
   * view: a line stays one line. */
  for (char *sep = line->text; (sep = strstr(sep, "\xe2\x80"));)
    if (sep[2] == '\xa8' || sep[2] == '\xa9')
      memcpy(sep, "\xef\xbf\xbd", 3); /* U+FFFD, as long */
    else
      sep += 2;
  return line;
}

void gs_output_line_free(GsOutputLine *line) {
  if (!line)
    return;
  g_free(line->text);
  g_free(line);
}

void gs_line_cutter_init(gs_line_cutter *cutter, GsOutputStream stream) {
  cutter->stream = stream;
  cutter->partial = g_byte_array_new();
}

void gs_line_cutter_clear(gs_line_cutter *cutter) {
  g_clear_pointer(&cutter->partial, g_byte_array_unref);
}

/* Where to cut a line too long to keep whole: at most GS_OUTPUT_LINE_MAX bytes, and not
 * inside a UTF-8 character when the bytes are UTF-8. */
static gsize long_line_cut(const guint8 *bytes) {
  gsize cut = GS_OUTPUT_LINE_MAX;
  for (int back = 0; back < 3 && (bytes[cut] & 0xC0) == 0x80; back++)
    cut--;
  return (bytes[cut] & 0xC0) == 0x80 ? GS_OUTPUT_LINE_MAX : cut;
}

/* Hands over the partial line's lines that are too long to wait for their newline: a
 * program that never prints one (a progress bar drawn with CRs) must not grow it for ever. */
static void cut_long(gs_line_cutter *cutter, GPtrArray *lines) {
  gsize used = 0;
  while (cutter->partial->len - used > GS_OUTPUT_LINE_MAX) {
    gsize cut = long_line_cut(cutter->partial->data + used);
    g_ptr_array_add(lines, gs_output_line_new(cutter->stream,
                                              (const char *)cutter->partial->data + used, cut));
    used += cut;
  }
  if (used)
    g_byte_array_remove_range(cutter->partial, 0, (guint)used);
}

void gs_line_cutter_feed(gs_line_cutter *cutter, const guint8 *bytes, gsize n, GPtrArray *lines) {
  const guint8 *end = bytes + n;
  while (bytes < end) {
    const guint8 *newline = memchr(bytes, '\n', (size_t)(end - bytes));
    const guint8 *stop = newline ? newline : end;
    if (cutter->partial->len == 0 && newline && stop - bytes <= GS_OUTPUT_LINE_MAX) {
      /* The usual case, a whole line within one read: no copy into partial. */
      g_ptr_array_add(lines, gs_output_line_new(cutter->stream, (const char *)bytes,
                                                (gsize)(stop - bytes)));
    } else {
      g_byte_array_append(cutter->partial, bytes, (guint)(stop - bytes));
      cut_long(cutter, lines);
      if (newline) {
        g_ptr_array_add(lines, gs_output_line_new(cutter->stream,
                                                  (const char *)cutter->partial->data,
                                                  cutter->partial->len));
        g_byte_array_set_size(cutter->partial, 0);
      }
    }
    bytes = newline ? newline + 1 : end;
  }
}

void gs_line_cutter_finish(gs_line_cutter *cutter, GPtrArray *lines) {
  if (cutter->partial->len == 0)
    return;
  g_ptr_array_add(lines, gs_output_line_new(cutter->stream, (const char *)cutter->partial->data,
                                            cutter->partial->len));
  g_byte_array_set_size(cutter->partial, 0);
}
