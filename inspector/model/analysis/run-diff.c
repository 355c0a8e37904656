/* run-diff.c: matching two run summaries (scopes by name, sites by text, passes by step mark
 * or number, nodes by signature), the moments both runs share, and the rows of differences
 * the Compare view lists. */
#include "run-diff.h"

#include <glib/gi18n-lib.h>
#include <string.h>

static void pass_free(gpointer p) {
  gs_run_diff_pass *d = p;
  g_array_unref(d->kinds);
  g_array_unref(d->removed);
  g_array_unref(d->added);
  g_free(d);
}

/* ---- scopes and sites: by name ------------------------------------------------------- */

static void match_scopes(gs_run_diff *d) {
  g_autoptr(GHashTable) index = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint i = 0; i < d->a->scopes->len; i++) {
    const gs_run_scope *s = d->a->scopes->pdata[i];
    gs_run_diff_scope *row = g_new0(gs_run_diff_scope, 1);
    row->name = s->name;
    row->a = s;
    g_hash_table_insert(index, s->name, row);
    g_ptr_array_add(d->scopes, row);
  }
  for (guint i = 0; i < d->b->scopes->len; i++) {
    const gs_run_scope *s = d->b->scopes->pdata[i];
    gs_run_diff_scope *row = g_hash_table_lookup(index, s->name);
    if (!row) {
      row = g_new0(gs_run_diff_scope, 1);
      row->name = s->name;
      g_ptr_array_add(d->scopes, row);
    }
    row->b = s;
  }
}

static void match_sites(gs_run_diff *d) {
  g_autoptr(GHashTable) index = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint i = 0; i < d->a->sites->len; i++) {
    const gs_run_site *s = d->a->sites->pdata[i];
    gs_run_diff_site *row = g_new0(gs_run_diff_site, 1);
    row->where = s->where;
    row->a = s;
    g_hash_table_insert(index, s->where, row);
    g_ptr_array_add(d->sites, row);
  }
  for (guint i = 0; i < d->b->sites->len; i++) {
    const gs_run_site *s = d->b->sites->pdata[i];
    gs_run_diff_site *row = g_hash_table_lookup(index, s->where);
    if (!row) {
      row = g_new0(gs_run_diff_site, 1);
      row->where = s->where;
      g_ptr_array_add(d->sites, row);
    }
    row->b = s;
  }
}

/* ---- passes: by step mark or number, nodes by signature ------------------------------- */

static gboolean has_step_passes(const gs_run_summary *s) {
  for (guint i = 0; i < s->passes->len; i++)
    if (((const gs_run_pass *)s->passes->pdata[i])->step)
      return TRUE;
  return FALSE;
}

static char *pass_key(const gs_run_pass *p, gboolean by_step) {
  if (by_step)
    return g_strdup_printf("%s\x1f%u", p->step ? p->step : "", p->in_step);
  return g_strdup_printf("%u", p->number);
}

static gint by_kind_name(gconstpointer a, gconstpointer b) {
  return strcmp(((const gs_run_diff_kind *)a)->kind, ((const gs_run_diff_kind *)b)->kind);
}

static void count_kinds(GArray *kinds, GHashTable *index, const gs_run_pass *p, gboolean in_b) {
  for (guint i = 0; p && i < p->nodes->len; i++) {
    const gs_run_node *n = &g_array_index(p->nodes, gs_run_node, i);
    gpointer at = NULL;
    if (!g_hash_table_lookup_extended(index, n->kind, NULL, &at)) {
      gs_run_diff_kind k = {n->kind, 0, 0};
      g_array_append_val(kinds, k);
      at = GUINT_TO_POINTER(kinds->len - 1);
      g_hash_table_insert(index, (gpointer)n->kind, at);
    }
    gs_run_diff_kind *k = &g_array_index(kinds, gs_run_diff_kind, GPOINTER_TO_UINT(at));
    if (in_b)
      k->b++;
    else
      k->a++;
  }
}

/* The nodes of `from` whose signature `other` has fewer of: each signature of other matches
 * one node of from (a graph may repeat one path's kind at one slot only once, but a hostile
 * log may not: count them). */
static void unmatched(const gs_run_pass *from, const gs_run_pass *other, GArray *out) {
  if (!from)
    return;
  g_autoptr(GHashTable) counts = g_hash_table_new_full(gs_id_hash, gs_id_equal, g_free, NULL);
  for (guint i = 0; other && i < other->nodes->len; i++) {
    guint64 sig = g_array_index(other->nodes, gs_run_node, i).signature;
    gsize n = GPOINTER_TO_SIZE(g_hash_table_lookup(counts, &sig));
    g_hash_table_replace(counts, g_memdup2(&sig, sizeof sig), GSIZE_TO_POINTER(n + 1));
  }
  for (guint i = 0; i < from->nodes->len; i++) {
    const gs_run_node *node = &g_array_index(from->nodes, gs_run_node, i);
    gsize n = GPOINTER_TO_SIZE(g_hash_table_lookup(counts, &node->signature));
    if (n)
      g_hash_table_replace(counts, g_memdup2(&node->signature, sizeof node->signature),
                           GSIZE_TO_POINTER(n - 1));
    else
      g_array_append_val(out, *node);
  }
}

static void add_pass(gs_run_diff *d, const gs_run_pass *a, const gs_run_pass *b) {
  gs_run_diff_pass *p = g_new0(gs_run_diff_pass, 1);
  p->a = a;
  p->b = b;
  p->kinds = g_array_new(FALSE, FALSE, sizeof(gs_run_diff_kind));
  p->removed = g_array_new(FALSE, FALSE, sizeof(gs_run_node));
  p->added = g_array_new(FALSE, FALSE, sizeof(gs_run_node));
  g_autoptr(GHashTable) kind_index = g_hash_table_new(g_str_hash, g_str_equal);
  count_kinds(p->kinds, kind_index, a, FALSE);
  count_kinds(p->kinds, kind_index, b, TRUE);
  g_array_sort(p->kinds, by_kind_name);
  unmatched(a, b, p->removed);
  unmatched(b, a, p->added);
  g_ptr_array_add(d->passes, p);
}

static void match_passes(gs_run_diff *d) {
  d->passes_by_step = has_step_passes(d->a) && has_step_passes(d->b);
  g_autoptr(GHashTable) b_index = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < d->b->passes->len; i++) {
    const gs_run_pass *p = d->b->passes->pdata[i];
    char *key = pass_key(p, d->passes_by_step);
    if (g_hash_table_contains(b_index, key))
      g_free(key); /* the first pass of a key is its match */
    else
      g_hash_table_insert(b_index, key, (gpointer)p);
  }
  g_autoptr(GHashTable) used = g_hash_table_new(g_direct_hash, g_direct_equal);
  for (guint i = 0; i < d->a->passes->len; i++) {
    const gs_run_pass *a = d->a->passes->pdata[i];
    g_autofree char *key = pass_key(a, d->passes_by_step);
    const gs_run_pass *b = g_hash_table_lookup(b_index, key);
    if (b && g_hash_table_contains(used, b))
      b = NULL;
    if (b)
      g_hash_table_add(used, (gpointer)b);
    add_pass(d, a, b);
  }
  for (guint i = 0; i < d->b->passes->len; i++) {
    const gs_run_pass *b = d->b->passes->pdata[i];
    if (!g_hash_table_contains(used, b))
      add_pass(d, NULL, b);
  }
}

/* ---- anchors: the same moment in both runs -------------------------------------------- */

static void add_anchor(GArray *anchors, guint64 a, guint64 b) {
  /* Only moments that keep both runs in order: a mark out of step with the others (a label
   * one run repeats more often) would fold the axis back. */
  if (anchors->len) {
    guint64 last_a = g_array_index(anchors, guint64, anchors->len - 2);
    guint64 last_b = g_array_index(anchors, guint64, anchors->len - 1);
    if (a <= last_a || b <= last_b)
      return;
  }
  g_array_append_val(anchors, a);
  g_array_append_val(anchors, b);
}

static void find_anchors(gs_run_diff *d) {
  add_anchor(d->anchors, 0, 0);
  /* The n-th occurrence of each label in b, by label and n. */
  g_autoptr(GHashTable) b_marks = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < d->b->marks->len; i++) {
    const gs_run_mark *m = &g_array_index(d->b->marks, gs_run_mark, i);
    guint n = GPOINTER_TO_UINT(g_hash_table_lookup(seen, m->label));
    g_hash_table_replace(seen, g_strdup(m->label), GUINT_TO_POINTER(n + 1));
    g_hash_table_insert(b_marks, g_strdup_printf("%s\x1f%u", m->label, n), (gpointer)m);
  }
  g_hash_table_remove_all(seen);
  for (guint i = 0; i < d->a->marks->len; i++) {
    const gs_run_mark *m = &g_array_index(d->a->marks, gs_run_mark, i);
    guint n = GPOINTER_TO_UINT(g_hash_table_lookup(seen, m->label));
    g_hash_table_replace(seen, g_strdup(m->label), GUINT_TO_POINTER(n + 1));
    g_autofree char *key = g_strdup_printf("%s\x1f%u", m->label, n);
    const gs_run_mark *other = g_hash_table_lookup(b_marks, key);
    if (other)
      add_anchor(d->anchors, m->seq, other->seq);
  }
  add_anchor(d->anchors, MAX(d->a->last_seq, 1), MAX(d->b->last_seq, 1));
}

/* Maps pos between the anchors around it in one run (from: 0 for a, 1 for b) to the other.
 * A binary search: the Compare chart maps every event of a run, and a long run has a mark per
 * step. */
static double map_between(const gs_run_diff *d, double pos, guint from) {
  guint n = d->anchors->len / 2;
  const guint64 *at = (const guint64 *)(gpointer)d->anchors->data;
  if (n < 2)
    return pos;
  guint to = 1 - from;
  /* The first anchor i >= 1 with pos <= its position, or the last one (past the end). */
  guint lo = 1, hi = n - 1;
  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;
    if (pos <= (double)at[2 * mid + from])
      hi = mid;
    else
      lo = mid + 1;
  }
  double f0 = (double)at[2 * lo - 2 + from], t0 = (double)at[2 * lo - 2 + to];
  double f1 = (double)at[2 * lo + from], t1 = (double)at[2 * lo + to];
  return t0 + (pos - f0) * (t1 - t0) / (f1 > f0 ? f1 - f0 : 1);
}

double gs_run_diff_align(const gs_run_diff *d, guint64 b_seq) {
  return map_between(d, (double)b_seq, 1);
}

double gs_run_diff_unalign(const gs_run_diff *d, double a_pos) {
  return map_between(d, a_pos, 0);
}

gs_run_diff *gs_run_diff_new(const gs_run_summary *a, const gs_run_summary *b) {
  gs_run_diff *d = g_new0(gs_run_diff, 1);
  d->a = a;
  d->b = b;
  d->scopes = g_ptr_array_new_with_free_func(g_free);
  d->sites = g_ptr_array_new_with_free_func(g_free);
  d->passes = g_ptr_array_new_with_free_func(pass_free);
  d->anchors = g_array_new(FALSE, FALSE, sizeof(guint64));
  match_scopes(d);
  match_sites(d);
  match_passes(d);
  find_anchors(d);
  return d;
}

void gs_run_diff_free(gs_run_diff *d) {
  if (!d)
    return;
  g_ptr_array_unref(d->scopes);
  g_ptr_array_unref(d->sites);
  g_ptr_array_unref(d->passes);
  g_array_unref(d->anchors);
  g_free(d);
}

/* ---- rows ------------------------------------------------------------------------------ */

static void row_free(gpointer p) {
  gs_run_diff_row *r = p;
  g_free(r->what);
  g_free(r->a_text);
  g_free(r->b_text);
  g_free(r->change);
  g_free(r);
}

static gs_run_diff_row *add_row(GPtrArray *rows, char *what, guint64 a_seq, guint64 b_seq) {
  gs_run_diff_row *r = g_new0(gs_run_diff_row, 1);
  r->what = what;
  r->a_seq = a_seq;
  r->b_seq = b_seq;
  r->pass = -1;
  g_ptr_array_add(rows, r);
  return r;
}

static char *signed_bytes(guint64 a, guint64 b) {
  g_autofree char *size = g_format_size_full(a > b ? a - b : b - a, G_FORMAT_SIZE_IEC_UNITS);
  return g_strdup_printf("%s%s", a > b ? "−" : "+", size);
}

/* A value a run lacks counts as 0: a call site only one run has, whose objects are all gone
 * by the end, is no difference in what is alive. */
static void bytes_row(GPtrArray *rows, char *what, gboolean in_a, guint64 a, gboolean in_b,
                      guint64 b, guint64 a_seq, guint64 b_seq) {
  if ((in_a ? a : 0) == (in_b ? b : 0)) {
    g_free(what);
    return;
  }
  gs_run_diff_row *r = add_row(rows, what, in_a ? a_seq : G_MAXUINT64, in_b ? b_seq : G_MAXUINT64);
  r->a_text = in_a ? g_format_size_full(a, G_FORMAT_SIZE_IEC_UNITS) : g_strdup("—");
  r->b_text = in_b ? g_format_size_full(b, G_FORMAT_SIZE_IEC_UNITS) : g_strdup("—");
  r->change = signed_bytes(in_a ? a : 0, in_b ? b : 0);
}

static void count_row(GPtrArray *rows, char *what, gboolean in_a, guint64 a, gboolean in_b,
                      guint64 b, guint64 a_seq, guint64 b_seq) {
  if ((in_a ? a : 0) == (in_b ? b : 0)) {
    g_free(what);
    return;
  }
  gs_run_diff_row *r = add_row(rows, what, in_a ? a_seq : G_MAXUINT64, in_b ? b_seq : G_MAXUINT64);
  r->a_text = in_a ? g_strdup_printf("%" G_GUINT64_FORMAT, a) : g_strdup("—");
  r->b_text = in_b ? g_strdup_printf("%" G_GUINT64_FORMAT, b) : g_strdup("—");
  guint64 x = in_a ? a : 0, y = in_b ? b : 0;
  r->change = g_strdup_printf("%s%" G_GUINT64_FORMAT, x > y ? "−" : "+", x > y ? x - y : y - x);
}

/* Named after A's pass when both runs have it. */
char *gs_run_diff_pass_name(const gs_run_diff_pass *p) {
  const gs_run_pass *pass = p->a ? p->a : p->b;
  if (pass->step)
    /* Translators: a backward pass, its number and the step mark before it */
    return g_strdup_printf(_("Backward pass %u (%s)"), pass->number, pass->step);
  return g_strdup_printf(_("Backward pass %u"), pass->number);
}

static void pass_rows(const gs_run_diff *d, GPtrArray *rows) {
  for (guint i = 0; i < d->passes->len; i++) {
    const gs_run_diff_pass *p = d->passes->pdata[i];
    if (p->a && p->b && !p->removed->len && !p->added->len)
      continue;
    g_autofree char *name = gs_run_diff_pass_name(p);
    gs_run_diff_row *r = add_row(rows, g_strdup_printf(_("%s: graph nodes"), name),
                                 p->a ? p->a->seq : G_MAXUINT64, p->b ? p->b->seq : G_MAXUINT64);
    r->pass = (gint)i;
    r->a_text = p->a ? g_strdup_printf("%u", p->a->nodes->len) : g_strdup("—");
    r->b_text = p->b ? g_strdup_printf("%u", p->b->nodes->len) : g_strdup("—");
    r->change = g_strdup_printf(_("%u removed, %u added"), p->removed->len, p->added->len);
  }
}

GPtrArray *gs_run_diff_rows(const gs_run_diff *d) {
  GPtrArray *rows = g_ptr_array_new_with_free_func(row_free);
  const gs_run_summary *a = d->a, *b = d->b;
  bytes_row(rows, g_strdup(_("Peak memory")), TRUE, a->peak_bytes, TRUE, b->peak_bytes,
            a->peak_seq, b->peak_seq);
  count_row(rows, g_strdup(_("Objects alive at the end")), TRUE, a->live_objects, TRUE,
            b->live_objects, a->last_seq, b->last_seq);
  bytes_row(rows, g_strdup(_("Memory alive at the end")), TRUE, a->live_bytes, TRUE,
            b->live_bytes, a->last_seq, b->last_seq);
  pass_rows(d, rows);
  for (guint i = 0; i < d->sites->len; i++) {
    const gs_run_diff_site *s = d->sites->pdata[i];
    guint64 a_seq = s->a ? s->a->first_seq : 0, b_seq = s->b ? s->b->first_seq : 0;
    count_row(rows, g_strdup_printf(_("Alive at the end, made at %s"), s->where), s->a != NULL,
              s->a ? s->a->alive : 0, s->b != NULL, s->b ? s->b->alive : 0, a_seq, b_seq);
    count_row(rows, g_strdup_printf(_("Created at %s"), s->where), s->a != NULL,
              s->a ? s->a->created : 0, s->b != NULL, s->b ? s->b->created : 0, a_seq, b_seq);
  }
  for (guint i = 0; i < d->scopes->len; i++) {
    const gs_run_diff_scope *s = d->scopes->pdata[i];
    guint64 a_seq = s->a ? s->a->peak_seq : 0, b_seq = s->b ? s->b->peak_seq : 0;
    const char *name = *s->name ? s->name : _("(unnamed)");
    bytes_row(rows, g_strdup_printf(_("Scope “%s”: peak"), name), s->a != NULL,
              s->a ? s->a->peak_bytes : 0, s->b != NULL, s->b ? s->b->peak_bytes : 0, a_seq,
              b_seq);
    count_row(rows, g_strdup_printf(_("Scope “%s”: instances"), name), s->a != NULL,
              s->a ? s->a->instances : 0, s->b != NULL, s->b ? s->b->instances : 0, a_seq,
              b_seq);
    count_row(rows, g_strdup_printf(_("Scope “%s”: objects disposed"), name), s->a != NULL,
              s->a ? s->a->disposed : 0, s->b != NULL, s->b ? s->b->disposed : 0, a_seq, b_seq);
  }
  for (int k = 1; k < GS_TRACE_KIND_COUNT; k++)
    count_row(rows, g_strdup_printf(_("Events: %s"), gs_trace_kind_name((gs_trace_kind)k)), TRUE,
              a->by_kind[k], TRUE, b->by_kind[k], G_MAXUINT64, G_MAXUINT64);
  return rows;
}

/* ---- sizes ----------------------------------------------------------------------------- */

gboolean gs_run_diff_parse_size(const char *text, guint64 *bytes) {
  if (!text)
    return FALSE;
  char *end = NULL;
  while (g_ascii_isspace(*text))
    text++;
  if (!g_ascii_isdigit(*text))
    return FALSE;
  guint64 number = g_ascii_strtoull(text, &end, 10);
  while (g_ascii_isspace(*end))
    end++;
  static const struct {
    const char *suffix;
    guint64 factor;
  } units[] = {
      {"", 1},           {"b", 1},
      {"k", 1024},       {"kib", 1024},       {"kb", 1000},
      {"m", 1u << 20},   {"mib", 1u << 20},   {"mb", 1000000},
      {"g", 1u << 30},   {"gib", 1u << 30},   {"gb", 1000000000},
  };
  for (guint i = 0; i < G_N_ELEMENTS(units); i++)
    if (!g_ascii_strcasecmp(end, units[i].suffix)) {
      if (number > G_MAXUINT64 / units[i].factor)
        return FALSE;
      *bytes = number * units[i].factor;
      return TRUE;
    }
  return FALSE;
}
