/* escape.c: JSON and DOT quoting for names that come from user code (see escape.h). */
#include "escape.h"

#include <glib/gi18n-lib.h>
#include <string.h>

/* Walks text as UTF-8, calling put for each code point; invalid sequences yield U+FFFD so a
 * hostile or truncated name cannot break the output's encoding. */
typedef void (*put_char_fn)(GString *out, gunichar c);

static void walk_utf8(GString *out, const char *text, put_char_fn put) {
  const char *p = text ? text : "";
  const char *end = p + strlen(p);
  while (p < end) {
    gunichar c = g_utf8_get_char_validated(p, end - p);
    if (c == (gunichar)-1 || c == (gunichar)-2) {
      put(out, 0xfffd);
      p++;
      continue;
    }
    put(out, c);
    p = g_utf8_next_char(p);
  }
}

static void put_json_char(GString *out, gunichar c) {
  switch (c) {
  case '"': g_string_append(out, "\\\""); return;
  case '\\': g_string_append(out, "\\\\"); return;
  case '\n': g_string_append(out, "\\n"); return;
  case '\r': g_string_append(out, "\\r"); return;
  case '\t': g_string_append(out, "\\t"); return;
  case '\b': g_string_append(out, "\\b"); return;
  case '\f': g_string_append(out, "\\f"); return;
  default: break;
  }
  /* U+2028/2029 are valid JSON but break JavaScript parsers that viewers may use. */
  if (c < 0x20 || c == 0x7f || c == 0x2028 || c == 0x2029)
    g_string_append_printf(out, "\\u%04x", (unsigned)c);
  else
    g_string_append_unichar(out, c);
}

void gs_escape_json(GString *out, const char *text) {
  g_string_append_c(out, '"');
  walk_utf8(out, text, put_json_char);
  g_string_append_c(out, '"');
}

static void put_dot_char(GString *out, gunichar c) {
  switch (c) {
  case '"': g_string_append(out, "\\\""); return;
  /* A lone backslash would start one of DOT's label escapes (\N, \G, \l...): double it. */
  case '\\': g_string_append(out, "\\\\"); return;
  case '\n': g_string_append(out, "\\n"); return;
  /* Graphviz decodes HTML entities in every label (&amp; &lt; &#0;): a name that holds one
   * must reach it as text, so its ampersand is itself an entity. */
  case '&': g_string_append(out, "&amp;"); return;
  default: break;
  }
  if (c < 0x20 || c == 0x7f)
    g_string_append_c(out, ' ');
  else
    g_string_append_unichar(out, c);
}

void gs_escape_dot(GString *out, const char *text) {
  g_string_append_c(out, '"');
  walk_utf8(out, text, put_dot_char);
  g_string_append_c(out, '"');
}

char *gs_text_from_log(const char *text, gsize len) {
  return g_utf8_make_valid(text ? text : "", text ? (gssize)len : 0);
}

char *gs_text_clip(const char *text, guint max_chars) {
  const char *p = text ? text : "";
  if (!g_utf8_validate(p, -1, NULL))
    return g_utf8_make_valid(p, -1); /* callers pass log text already made valid */
  if (g_utf8_strlen(p, (gssize)max_chars * 4 + 4) <= max_chars)
    return g_strdup(p);
  const char *cut = g_utf8_offset_to_pointer(p, max_chars);
  /* TRANSLATORS: a name cut short for a graph label or a sentence: its start and how many
   * characters were left out. */
  return g_strdup_printf(_("%.*s\xe2\x80\xa6 (%u more characters)"), (int)(cut - p), p,
                         (guint)g_utf8_strlen(cut, -1));
}
