/* escape.h: quoting text that came from user code (tensor, scope and module names, error
 * messages, mark labels) for the formats we write: JSON strings and Graphviz DOT labels.
 * Names are arbitrary bytes from the program being traced, so nothing is written unescaped. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Appends text as a JSON string literal, quotes included. Control characters become \uXXXX
 * (or their short forms); bytes that are not valid UTF-8 become U+FFFD so the output always
 * parses. */
void gs_escape_json(GString *out, const char *text);

/* Appends text as a DOT double-quoted string, quotes included: quotes and backslashes are
 * escaped, newlines become DOT's centred line break (\n), other control characters and invalid
 * UTF-8 become spaces or U+FFFD. Safe as a node id or a label. */
void gs_escape_dot(GString *out, const char *text);

/* A string from the log (len bytes, not NUL-terminated) as valid UTF-8: invalid sequences
 * become U+FFFD, so Pango, JSON and DOT consumers never meet broken text. Newly allocated. */
char *gs_text_from_log(const char *text, gsize len);

/* text (valid UTF-8) cut to max_chars characters with a translated note of how many were left
 * out: a 64 KB name must not become a 64 KB graph label (Graphviz refuses edges that long).
 * Newly allocated. */
char *gs_text_clip(const char *text, guint max_chars);

/* The longest name a sentence or a label of the inspector shows whole (longer ones go through
 * gs_text_clip): Pango shapes a label's whole text, even one it ellipsizes, and a 64 KB name
 * held the main thread ~0.3 s per label it appeared in. */
#define GS_TEXT_SHOWN_MAX 200

G_END_DECLS
