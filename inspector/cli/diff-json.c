/* diff-json.c: writes a run diff as JSON. Every name from the log goes through gs_escape_json,
 * so the output parses whatever the program called its scopes; a side a run lacks is null. */
#include "diff-json.h"

#include <stdio.h>

#include "escape.h"

static void key(GString *out, const char *name) {
  gs_escape_json(out, name);
  g_string_append_c(out, ':');
}

static void u64(GString *out, const char *name, guint64 value) {
  key(out, name);
  g_string_append_printf(out, "%" G_GUINT64_FORMAT, value);
}

static void text_or_null(GString *out, const char *name, const char *text) {
  key(out, name);
  if (text)
    gs_escape_json(out, text);
  else
    g_string_append(out, "null");
}

/* u64 and text_or_null after another field. */
static void then_u64(GString *out, const char *name, guint64 value) {
  g_string_append_c(out, ',');
  u64(out, name, value);
}

static void then_text(GString *out, const char *name, const char *text) {
  g_string_append_c(out, ',');
  text_or_null(out, name, text);
}

static void run(GString *out, const char *path, const gs_run_summary *s) {
  g_string_append_c(out, '{');
  text_or_null(out, "path", path);
  then_u64(out, "events", s->events);
  then_u64(out, "peak_bytes", s->peak_bytes);
  then_u64(out, "peak_event", s->peak_seq);
  then_text(out, "peak_scope", s->peak_scope);
  then_text(out, "peak_site", s->peak_site);
  then_u64(out, "live_objects", s->live_objects);
  then_u64(out, "live_bytes", s->live_bytes);
  g_string_append_c(out, ',');
  key(out, "has_sites");
  g_string_append(out, s->has_sites ? "true" : "false");
  then_text(out, "problem", s->problem);
  g_string_append_c(out, '}');
}

static void scope(GString *out, gconstpointer side) {
  const gs_run_scope *s = side;
  if (!s) {
    g_string_append(out, "null");
    return;
  }
  g_string_append_printf(out,
                         "{\"instances\":%" G_GUINT64_FORMAT ",\"created\":%" G_GUINT64_FORMAT
                         ",\"disposed\":%" G_GUINT64_FORMAT ",\"peak_bytes\":%" G_GUINT64_FORMAT
                         ",\"mean_peak_bytes\":%" G_GUINT64_FORMAT "}",
                         s->instances, s->created, s->disposed, s->peak_bytes, s->mean_bytes);
}

static void site(GString *out, gconstpointer side) {
  const gs_run_site *s = side;
  if (s)
    g_string_append_printf(out,
                           "{\"created\":%" G_GUINT64_FORMAT ",\"alive\":%" G_GUINT64_FORMAT "}",
                           s->created, s->alive);
  else
    g_string_append(out, "null");
}

/* {"KEY": name, "a": ..., "b": ...}: a scope or a call site of both runs, each side written by
 * write_side (null where that run has none). */
static void named_pair(GString *out, gboolean first, const char *key, const char *name,
                       void (*write_side)(GString *, gconstpointer), gconstpointer a,
                       gconstpointer b) {
  g_string_append(out, first ? "{" : ",{");
  text_or_null(out, key, name);
  g_string_append(out, ",\"a\":");
  write_side(out, a);
  g_string_append(out, ",\"b\":");
  write_side(out, b);
  g_string_append_c(out, '}');
}

static void pass(GString *out, const gs_run_pass *p) {
  if (!p) {
    g_string_append(out, "null");
    return;
  }
  g_string_append_printf(out, "{\"number\":%u,\"event\":%" G_GUINT64_FORMAT ",", p->number, p->seq);
  text_or_null(out, "step", p->step);
  g_string_append_printf(out, ",\"in_step\":%u,\"nodes\":%u}", p->in_step, p->nodes->len);
}

static void nodes(GString *out, const char *name, const GArray *list) {
  key(out, name);
  g_string_append_c(out, '[');
  for (guint i = 0; i < list->len; i++) {
    const gs_run_node *n = &g_array_index(list, gs_run_node, i);
    g_string_append_printf(out, "%s{\"node\":%" G_GUINT64_FORMAT ",", i ? "," : "", n->id);
    text_or_null(out, "kind", n->kind);
    g_string_append_c(out, '}');
  }
  g_string_append_c(out, ']');
}

static void passes(GString *out, const gs_run_diff *d) {
  g_string_append_printf(out, "\"passes_matched_by\":\"%s\",\"passes\":[",
                         d->passes_by_step ? "step" : "number");
  for (guint i = 0; i < d->passes->len; i++) {
    const gs_run_diff_pass *p = d->passes->pdata[i];
    g_string_append(out, i ? ",{\"a\":" : "{\"a\":");
    pass(out, p->a);
    g_string_append(out, ",\"b\":");
    pass(out, p->b);
    g_string_append(out, ",\"kinds\":{");
    for (guint k = 0; k < p->kinds->len; k++) {
      const gs_run_diff_kind *kind = &g_array_index(p->kinds, gs_run_diff_kind, k);
      if (k)
        g_string_append_c(out, ',');
      key(out, kind->kind);
      g_string_append_printf(out, "{\"a\":%u,\"b\":%u}", kind->a, kind->b);
    }
    g_string_append(out, "},");
    nodes(out, "removed", p->removed);
    g_string_append_c(out, ',');
    nodes(out, "added", p->added);
    g_string_append_c(out, '}');
  }
  g_string_append_c(out, ']');
}

static void check(GString *out, const char *option, const guint64 *limit, guint64 a, guint64 b) {
  g_string_append_c(out, '{');
  text_or_null(out, "option", option);
  g_string_append(out, ",\"limit\":");
  if (limit)
    g_string_append_printf(out, "%" G_GUINT64_FORMAT, *limit);
  else
    g_string_append(out, "null");
  g_string_append_printf(out, ",\"a\":%" G_GUINT64_FORMAT ",\"b\":%" G_GUINT64_FORMAT
                              ",\"failed\":%s}",
                         a, b, limit && b > a && b - a > *limit ? "true" : "false");
}

void diff_json_print(const gs_run_diff *d, const char *path_a, const char *path_b,
                     const guint64 *peak_limit, const guint64 *live_limit) {
  GString *out = g_string_new("{\"a\":");
  run(out, path_a, d->a);
  g_string_append(out, ",\"b\":");
  run(out, path_b, d->b);
  g_string_append(out, ",\"checks\":[");
  check(out, "fail-peak-increase", peak_limit, d->a->peak_bytes, d->b->peak_bytes);
  g_string_append_c(out, ',');
  check(out, "fail-live-increase", live_limit, d->a->live_objects, d->b->live_objects);
  g_string_append(out, "],\"scopes\":[");
  for (guint i = 0; i < d->scopes->len; i++) {
    const gs_run_diff_scope *s = d->scopes->pdata[i];
    named_pair(out, i == 0, "name", s->name, scope, s->a, s->b);
  }
  g_string_append(out, "],\"sites\":[");
  for (guint i = 0; i < d->sites->len; i++) {
    const gs_run_diff_site *s = d->sites->pdata[i];
    named_pair(out, i == 0, "where", s->where, site, s->a, s->b);
  }
  g_string_append(out, "],\"events_by_kind\":{");
  gboolean first = TRUE;
  for (int k = 1; k < GS_TRACE_KIND_COUNT; k++) {
    if (!d->a->by_kind[k] && !d->b->by_kind[k])
      continue;
    if (!first)
      g_string_append_c(out, ',');
    first = FALSE;
    key(out, gs_trace_kind_name((gs_trace_kind)k));
    g_string_append_printf(out, "{\"a\":%" G_GUINT64_FORMAT ",\"b\":%" G_GUINT64_FORMAT "}",
                           d->a->by_kind[k], d->b->by_kind[k]);
  }
  g_string_append(out, "},");
  passes(out, d);
  g_string_append(out, "}\n");
  fputs(out->str, stdout);
  g_string_free(out, TRUE);
}
