/* cmd-diff.c: `gradscope diff A B [--json] [--fail-peak-increase=SIZE]
 * [--fail-live-increase=N]`: two runs of a program side by side, so a change can be checked
 * ("did the fix remove the leak, lower the peak, cut the graph?") by a person (text) or a CI
 * job (JSON, and an exit status of 1 when B's peak or its objects alive at the end grow past
 * A's by more than allowed). The matching lives in model/analysis/run-diff.c, shared with the
 * inspector's Compare view; this file prints it in the user's language (diff-json.c writes the
 * JSON, whose keys are an API and stay as they are). */
#include <glib/gi18n.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "run-diff.h"
#include "cli.h"
#include "diff-json.h"

/* Past this many backward passes, text output prints only those that differ (and the first). */
#define PASSES_SHOWN 20
G_STATIC_ASSERT(PASSES_SHOWN == 20); /* --all-passes' help says so, in words translators see */

static char *size_text(guint64 bytes) {
  return g_format_size_full(bytes, G_FORMAT_SIZE_IEC_UNITS);
}

/* "3 → 5" for two counts, "3" when equal, "— → 5" when a has none. */
static char *counts(gboolean in_a, guint64 a, gboolean in_b, guint64 b) {
  if (in_a && in_b && a == b)
    return g_strdup_printf("%" G_GUINT64_FORMAT, a);
  g_autofree char *x = in_a ? g_strdup_printf("%" G_GUINT64_FORMAT, a) : g_strdup("—");
  g_autofree char *y = in_b ? g_strdup_printf("%" G_GUINT64_FORMAT, b) : g_strdup("—");
  return g_strdup_printf("%s → %s", x, y);
}

static char *sizes(gboolean in_a, guint64 a, gboolean in_b, guint64 b) {
  g_autofree char *x = in_a ? size_text(a) : g_strdup("—");
  g_autofree char *y = in_b ? size_text(b) : g_strdup("—");
  if (in_a && in_b && a == b)
    return g_steal_pointer(&x);
  return g_strdup_printf("%s → %s", x, y);
}

static void print_peak(const char *label, const gs_run_summary *s) {
  g_autofree char *peak = size_text(s->peak_bytes);
  g_autofree char *scope = s->peak_scope ? cli_printable(s->peak_scope) : NULL;
  g_autofree char *site = s->peak_site ? cli_printable(s->peak_site) : NULL;
  GString *line = g_string_new(NULL);
  /* TRANSLATORS: "A peak 1.4 KiB at event 269": A or B (the run), its peak, the event */
  g_string_append_printf(line, _("%s peak %s at event %" PRIu64), label, peak, s->peak_seq);
  if (scope)
    g_string_append_printf(line, _(" in scope \"%s\""), scope);
  if (site)
    /* TRANSLATORS: where the program made what was alive at the peak: " at main (x.c:42)" */
    g_string_append_printf(line, _(" at %s"), site);
  printf("  %s\n", line->str);
  g_string_free(line, TRUE);
}

static void print_memory(const gs_run_diff *d) {
  const gs_run_summary *a = d->a, *b = d->b;
  printf("%s\n", _("memory:"));
  print_peak("A", a);
  print_peak("B", b);
  g_autofree char *peak = sizes(TRUE, a->peak_bytes, TRUE, b->peak_bytes);
  g_autofree char *live = counts(TRUE, a->live_objects, TRUE, b->live_objects);
  g_autofree char *bytes = sizes(TRUE, a->live_bytes, TRUE, b->live_bytes);
  printf(_("  peak: %s\n"), peak);
  printf(_("  objects alive at the end: %s\n"), live);
  printf(_("  memory alive at the end: %s\n"), bytes);
}

static void print_scopes(const gs_run_diff *d) {
  printf("\n%s\n", _("scopes by name (A → B):"));
  if (!d->scopes->len)
    printf("  %s\n", _("none"));
  for (guint i = 0; i < d->scopes->len; i++) {
    const gs_run_diff_scope *s = d->scopes->pdata[i];
    gboolean x = s->a != NULL, y = s->b != NULL;
    g_autofree char *name = cli_printable(*s->name ? s->name : _("(unnamed)"));
    g_autofree char *instances = counts(x, x ? s->a->instances : 0, y, y ? s->b->instances : 0);
    g_autofree char *created = counts(x, x ? s->a->created : 0, y, y ? s->b->created : 0);
    g_autofree char *disposed = counts(x, x ? s->a->disposed : 0, y, y ? s->b->disposed : 0);
    g_autofree char *peak = sizes(x, x ? s->a->peak_bytes : 0, y, y ? s->b->peak_bytes : 0);
    g_autofree char *mean = sizes(x, x ? s->a->mean_bytes : 0, y, y ? s->b->mean_bytes : 0);
    /* TRANSLATORS: a scope's name, then its counts in both runs ("3 → 5", or "3" when
     * equal) and sizes */
    printf(_("  \"%s\": instances %s, created %s, disposed %s, peak %s, mean peak %s\n"), name,
           instances, created, disposed, peak, mean);
  }
}

static void print_sites(const gs_run_diff *d) {
  printf("\n%s\n", _("call sites (objects created, alive at the end; A → B):"));
  if (!d->a->has_sites || !d->b->has_sites)
    /* TRANSLATORS: %s is A or B, the run */
    printf(_("  (%s records no call sites: it was written before format 1.3)\n"),
           !d->a->has_sites ? "A" : "B");
  for (guint i = 0; i < d->sites->len; i++) {
    const gs_run_diff_site *s = d->sites->pdata[i];
    gboolean x = s->a != NULL, y = s->b != NULL;
    g_autofree char *where = cli_printable(s->where);
    g_autofree char *created = counts(x, x ? s->a->created : 0, y, y ? s->b->created : 0);
    g_autofree char *alive = counts(x, x ? s->a->alive : 0, y, y ? s->b->alive : 0);
    printf(_("  %s: created %s, alive %s\n"), where, created, alive);
  }
}

static void print_kinds(const gs_run_diff *d) {
  printf("\n%s\n", _("events by kind (A → B):"));
  for (int k = 1; k < GS_TRACE_KIND_COUNT; k++) {
    guint64 a = d->a->by_kind[k], b = d->b->by_kind[k];
    if (!a && !b)
      continue;
    g_autofree char *text = counts(TRUE, a, TRUE, b);
    printf("  %-20s %s\n", gs_trace_kind_name((gs_trace_kind)k), text);
  }
}

/* "MulBackward ×2, AccumulateGrad": a pass's unmatched nodes, by kind in graph order. */
static char *kinds_of(const GArray *nodes) {
  g_autoptr(GPtrArray) order = g_ptr_array_new();
  g_autoptr(GHashTable) n = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint i = 0; i < nodes->len; i++) {
    const char *kind = g_array_index(nodes, gs_run_node, i).kind;
    guint count = GPOINTER_TO_UINT(g_hash_table_lookup(n, kind));
    if (!count)
      g_ptr_array_add(order, (gpointer)kind);
    g_hash_table_insert(n, (gpointer)kind, GUINT_TO_POINTER(count + 1));
  }
  GString *out = g_string_new(NULL);
  for (guint i = 0; i < order->len; i++) {
    guint count = GPOINTER_TO_UINT(g_hash_table_lookup(n, order->pdata[i]));
    g_autofree char *kind = cli_printable(order->pdata[i]);
    g_string_append_printf(out, "%s%s", i ? ", " : "", kind);
    if (count > 1)
      g_string_append_printf(out, " ×%u", count);
  }
  return g_string_free(out, FALSE);
}

static char *pass_label(const gs_run_pass *p) {
  if (!p)
    return g_strdup(_("none"));
  g_autofree char *step = p->step ? cli_printable(p->step) : NULL;
  if (step)
    /* TRANSLATORS: a backward pass: its number, event, the step mark before it and which
     * pass after that mark it is */
    return g_strdup_printf(_("pass %u at event %" PRIu64 " (\"%s\", #%u after it)"), p->number,
                           p->seq, step, p->in_step);
  return g_strdup_printf(_("pass %u at event %" PRIu64), p->number, p->seq);
}

/* A pass both runs have with the same graph. */
static gboolean pass_unchanged(const gs_run_diff_pass *p) {
  return p->a && p->b && !p->removed->len && !p->added->len;
}

static void print_passes(const gs_run_diff *d, gboolean every_pass) {
  printf("\n%s\n", d->passes_by_step
                       ? _("backward passes (matched by the step or epoch mark before them):")
                       : _("backward passes (matched by number):"));
  if (!d->passes->len)
    printf("  %s\n", _("none"));
  /* A training run has thousands of passes, most alike: past a screenful, the unchanged ones
   * after the first are counted, not printed (the JSON has them all). */
  gboolean elide = !every_pass && d->passes->len > PASSES_SHOWN;
  guint elided = 0;
  for (guint i = 0; i < d->passes->len; i++) {
    const gs_run_diff_pass *p = d->passes->pdata[i];
    if (elide && i > 0 && pass_unchanged(p)) {
      elided++;
      continue;
    }
    g_autofree char *a = pass_label(p->a), *b = pass_label(p->b);
    printf("  A %s\n  B %s\n", a, b);
    g_autofree char *nodes = counts(p->a != NULL, p->a ? p->a->nodes->len : 0, p->b != NULL,
                                    p->b ? p->b->nodes->len : 0);
    /* TRANSLATORS: "nodes 9 → 6: 3 removed, 0 added" */
    printf(_("    nodes %s: %u removed, %u added\n"), nodes, p->removed->len, p->added->len);
    GString *kinds = g_string_new(NULL);
    for (guint k = 0; k < p->kinds->len; k++) {
      const gs_run_diff_kind *kind = &g_array_index(p->kinds, gs_run_diff_kind, k);
      g_autofree char *name = cli_printable(kind->kind);
      g_autofree char *n = counts(TRUE, kind->a, TRUE, kind->b);
      g_string_append_printf(kinds, "%s%s %s", k ? ", " : "", name, n);
    }
    printf(_("    kinds: %s\n"), kinds->len ? kinds->str : _("none"));
    g_string_free(kinds, TRUE);
    if (p->removed->len) {
      g_autofree char *removed = kinds_of(p->removed);
      printf(_("    removed: %s\n"), removed);
    }
    if (p->added->len) {
      g_autofree char *added = kinds_of(p->added);
      printf(_("    added: %s\n"), added);
    }
  }
  if (elided)
    printf(ngettext("  ... and %u more pass with the same graph in both runs (--all-passes "
                    "prints them)\n",
                    "  ... and %u more passes with the same graph in both runs (--all-passes "
                    "prints them)\n",
                    elided),
           elided);
}

/* The CI guards: B may grow past A by at most the limit. */
typedef struct guard {
  const char *option;
  gboolean set;
  guint64 limit;
  guint64 a, b;
  gboolean bytes;
} guard;

static gboolean guard_failed(const guard *g) {
  return g->set && g->b > g->a && g->b - g->a > g->limit;
}

static void report_guard(const guard *g) {
  if (!guard_failed(g))
    return;
  g_autofree char *a = g->bytes ? size_text(g->a) : g_strdup_printf("%" G_GUINT64_FORMAT, g->a);
  g_autofree char *b = g->bytes ? size_text(g->b) : g_strdup_printf("%" G_GUINT64_FORMAT, g->b);
  g_autofree char *limit =
      g->bytes ? size_text(g->limit) : g_strdup_printf("%" G_GUINT64_FORMAT, g->limit);
  /* TRANSLATORS: the option, then B's and A's value and the option's limit */
  cli_error(_("diff: %s: B has %s, A %s: more than the %s allowed"), g->option, b, a, limit);
}

static gs_run_summary *load(const char *path) {
  g_autoptr(GError) error = NULL;
  gs_run_summary *s = gs_run_summary_read(path, &error);
  if (!s)
    cli_error("diff: %s", error->message);
  return s;
}

/* A against B: text or JSON, then the guards. Returns the exit status. */
static int diff_pair(const char *path_a, const char *path_b, gboolean json, gboolean every_pass,
                     guard *peak_guard, guard *live_guard) {
  guard peak = *peak_guard, live = *live_guard;
  g_autoptr(gs_run_summary) a = load(path_a);
  if (!a)
    return 1;
  g_autoptr(gs_run_summary) b = load(path_b);
  if (!b)
    return 1;
  g_autoptr(gs_run_diff) d = gs_run_diff_new(a, b);
  peak.a = a->peak_bytes, peak.b = b->peak_bytes;
  live.a = a->live_objects, live.b = b->live_objects;
  if (json) {
    diff_json_print(d, path_a, path_b, peak.set ? &peak.limit : NULL,
                    live.set ? &live.limit : NULL);
  } else {
    g_autofree char *file_a = cli_printable(path_a), *file_b = cli_printable(path_b);
    g_autofree char *events_a = g_strdup_printf(
        ngettext("%" PRIu64 " event", "%" PRIu64 " events", (gulong)MIN(a->events, G_MAXULONG)),
        a->events);
    g_autofree char *events_b = g_strdup_printf(
        ngettext("%" PRIu64 " event", "%" PRIu64 " events", (gulong)MIN(b->events, G_MAXULONG)),
        b->events);
    printf("A: %s (%s)\nB: %s (%s)\n\n", file_a, events_a, file_b, events_b);
    print_memory(d);
    print_passes(d, every_pass);
    print_sites(d);
    print_scopes(d);
    print_kinds(d);
  }
  fflush(stdout);
  int status = 0;
  if (a->problem)
    cli_error(_("warning: %s: %s"), path_a, a->problem), status = CLI_EXIT_DAMAGED;
  if (b->problem)
    cli_error(_("warning: %s: %s"), path_b, b->problem), status = CLI_EXIT_DAMAGED;
  report_guard(&peak);
  report_guard(&live);
  return guard_failed(&peak) || guard_failed(&live) ? 1 : status;
}

/* The logs of two distributed runs (grouped by their run ids, A's the first file's), compared
 * rank by rank: rank 0 of A against rank 0 of B, and so on. JSON: an array of the ranks'
 * objects, in rank order. */
static int diff_ranks(char **paths, int n, gboolean json, gboolean every_pass, guard *peak,
                      guard *live) {
  g_autoptr(GArray) logs = cli_rank_logs_read("diff", paths, n);
  if (!logs)
    return 1;
  g_autoptr(GArray) run_a = g_array_new(FALSE, TRUE, sizeof(cli_rank_log));
  g_autoptr(GArray) run_b = g_array_new(FALSE, TRUE, sizeof(cli_rank_log));
  GArray *runs[2] = {run_a, run_b};
  for (guint i = 0; i < logs->len; i++) {
    const cli_rank_log *l = &g_array_index(logs, cli_rank_log, i);
    const cli_rank_log *a0 = &g_array_index(logs, cli_rank_log, 0);
    guint which = l->run == a0->run ? 0 : 1;
    if (which == 1 && runs[1]->len && l->run != g_array_index(runs[1], cli_rank_log, 0).run) {
      g_autofree char *file = cli_printable(l->path);
      cli_error(_("diff: the logs are of more than two runs (%s is of a third, run %016" PRIx64
                  "): give the ranks' logs of run A, then of run B"),
                file, l->run);
      return 1;
    }
    g_array_append_val(runs[which], *l);
  }
  if (!runs[1]->len) {
    cli_error("%s", _("diff: all the logs are of one run: give the ranks' logs of run A, then "
                      "of run B (gradscope stats compares one run's ranks)"));
    return 1;
  }
  if (!cli_rank_logs_one_run("diff", runs[0]) || !cli_rank_logs_one_run("diff", runs[1]))
    return 1;
  gboolean same = runs[0]->len == runs[1]->len;
  for (guint i = 0; same && i < runs[0]->len; i++)
    same = g_array_index(runs[0], cli_rank_log, i).rank ==
           g_array_index(runs[1], cli_rank_log, i).rank;
  if (!same) {
    cli_error(_("diff: run A (%016" PRIx64 ") has the logs of %u ranks and run B (%016" PRIx64
                ") of %u, not the same ranks: give the same ranks' logs of both runs"),
              g_array_index(runs[0], cli_rank_log, 0).run, runs[0]->len,
              g_array_index(runs[1], cli_rank_log, 0).run, runs[1]->len);
    return 1;
  }
  int status = 0;
  if (json)
    printf("[\n");
  for (guint i = 0; i < runs[0]->len; i++) {
    const cli_rank_log *a = &g_array_index(runs[0], cli_rank_log, i);
    const cli_rank_log *b = &g_array_index(runs[1], cli_rank_log, i);
    if (json && i)
      printf(",\n");
    else if (!json)
      /* TRANSLATORS: the heading of one rank's comparison in `diff A0 A1 B0 B1` */
      printf(_("%s== rank %u ==\n"), i ? "\n" : "", a->rank);
    int got = diff_pair(a->path, b->path, json, every_pass, peak, live);
    status = got == 1 || status == 1 ? 1 : MAX(status, got);
  }
  if (json)
    printf("]\n");
  return status;
}

int cli_diff(int argc, char **argv) {
  g_autoptr(GOptionContext) context =
      g_option_context_new(_("A.gstrace B.gstrace, or A-0 A-1... B-0 B-1..."));
  cli_translate_options(context);
  g_option_context_set_summary(
      context, _("Compares two runs (A before a change, B after): scopes by name, call sites,\n"
                 "events by kind, the memory peak and where, objects alive at the end, and the\n"
                 "graph of each backward pass (matched by the step or epoch mark before it when\n"
                 "both runs have them, else by number), with the nodes added and removed.\n"
                 "Several logs, the ranks' logs of two distributed runs, are compared rank by\n"
                 "rank (grouped by run: run A is the first file's).\n"
                 "Exit status: 1 when a --fail option's limit is passed or a file cannot be\n"
                 "read, 2 when a log is damaged (its valid part is compared), else 0."));
  gboolean json = FALSE, every_pass = FALSE;
  char *peak_text = NULL, *live_text = NULL;
  const GOptionEntry entries[] = {
      {"json", 0, 0, G_OPTION_ARG_NONE, &json, N_("Write one JSON object instead of text"), NULL},
      {"all-passes", 0, 0, G_OPTION_ARG_NONE, &every_pass,
       N_("Print every backward pass (default: past 20, only those that differ and the first)"),
       NULL},
      {"fail-peak-increase", 0, 0, G_OPTION_ARG_STRING, &peak_text,
       N_("Exit 1 if B's peak memory exceeds A's by more than SIZE (bytes, or 512K, 1MiB, "
          "2MB...)"),
       "SIZE"},
      {"fail-live-increase", 0, 0, G_OPTION_ARG_STRING, &live_text,
       N_("Exit 1 if B has more than N more objects alive at the end than A (0: any more)"), "N"},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  g_option_context_add_main_entries(context, entries, NULL);
  g_autoptr(GError) error = NULL;
  gboolean parsed = g_option_context_parse(context, &argc, &argv, &error);
  g_autofree char *peak_owned = peak_text, *live_owned = live_text;
  if (!parsed) {
    cli_error("diff: %s", error->message);
    return 1;
  }
  if (argc < 3) {
    cli_error("%s", _("diff: give two logs, A (before) and B (after): gradscope diff A.gstrace "
                      "B.gstrace"));
    return 1;
  }
  guard peak = {"--fail-peak-increase", peak_text != NULL, 0, 0, 0, TRUE};
  guard live = {"--fail-live-increase", live_text != NULL, 0, 0, 0, FALSE};
  if (peak.set && !gs_run_diff_parse_size(peak_text, &peak.limit)) {
    cli_error(_("diff: --fail-peak-increase wants a size (4096, 512K, 1MiB, 2MB), got '%s'"),
              peak_text);
    return 1;
  }
  if (live.set && !g_ascii_string_to_unsigned(live_text, 10, 0, G_MAXUINT64, &live.limit, NULL)) {
    cli_error(_("diff: --fail-live-increase wants a count of objects (0 or more), got '%s'"),
              live_text);
    return 1;
  }
  if (argc > 3)
    return diff_ranks(argv + 1, argc - 1, json, every_pass, &peak, &live);
  return diff_pair(argv[1], argv[2], json, every_pass, &peak, &live);
}
