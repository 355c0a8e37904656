/* common.c: the pieces every `gradscope` command shares (see cli.h). */
#include <glib/gi18n.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "cli.h"

void cli_error(const char *format, ...) {
  va_list args;
  va_start(args, format);
  g_autofree char *message = g_strdup_vprintf(format, args);
  va_end(args);
  /* One line, whatever the message carries (file names are user input too). */
  g_autofree char *line = cli_printable(message);
  fprintf(stderr, "gradscope: %s\n", line);
}

/* gettext in the domain main() made the default. */
static const char *translate(const char *text, gpointer data) {
  (void)data;
  return _(text);
}

void cli_translate_options(GOptionContext *context) {
  g_option_context_set_translate_func(context, translate, NULL, NULL);
}

GOptionContext *cli_option_context(const char *parameters, const GOptionEntry *entries,
                                   const char *summary) {
  GOptionContext *context = g_option_context_new(parameters);
  g_option_context_add_main_entries(context, entries, NULL);
  g_option_context_set_summary(context, summary);
  return context;
}

const char *cli_parse_file_args(GOptionContext *context, int *argc, char ***argv) {
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(context, argc, argv, &error)) {
    cli_error("%s: %s", (*argv)[0], error->message);
    return NULL;
  }
  if (*argc < 2) {
    cli_error("%s: no log file given (see gradscope %s --help)", (*argv)[0], (*argv)[0]);
    return NULL;
  }
  if (*argc > 2) {
    cli_error("%s: one log file expected, got also '%s'", (*argv)[0], (*argv)[2]);
    return NULL;
  }
  return (*argv)[1];
}

int cli_parse_files_args(GOptionContext *context, int *argc, char ***argv) {
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(context, argc, argv, &error)) {
    cli_error("%s: %s", (*argv)[0], error->message);
    return -1;
  }
  if (*argc < 2) {
    cli_error("%s: no log file given (see gradscope %s --help)", (*argv)[0], (*argv)[0]);
    return -1;
  }
  return *argc - 1;
}

typedef struct read_with_progress {
  gs_trace_event_fn on_event;
  gpointer user_data;
  cli_progress *progress;
  guint64 events; /* not counting the string table and call sites, as the model counts */
} read_with_progress;

static gboolean forward_event(const gs_trace_event *event, const gs_trace_reader *reader,
                              gpointer user_data) {
  read_with_progress *r = user_data;
  if (event->kind != GS_TRACE_STRING && event->kind != GS_TRACE_SITE &&
      event->kind != GS_TRACE_BINARY)
    r->events++;
  return r->on_event(event, reader, r->user_data);
}

void cli_note_no_events(const char *path) {
  fprintf(stderr, "gradscope: note: %s holds no events (only a header and strings)\n", path);
}

static void forward_progress(guint64 done, guint64 total, gpointer user_data) {
  read_with_progress *r = user_data;
  cli_progress_update(done, total, r->progress);
}

gboolean cli_read_log(const char *path, gs_trace_event_fn on_event, gpointer user_data,
                      gs_trace_read_result *result) {
  read_with_progress r = {on_event, user_data, cli_progress_new("reading"), 0};
  g_autoptr(GError) error = NULL;
  gboolean ok = gs_trace_file_read(path, forward_event, forward_progress, &r, result, &error);
  cli_progress_free(r.progress);
  if (!ok) {
    cli_error("%s", error->message);
    return FALSE;
  }
  /* Without even a header nothing valid was read: bad input, not a damaged log. */
  if (!result->has_header) {
    cli_not_a_log(path, gs_trace_read_result_problem(result));
    gs_trace_read_result_clear(result);
    return FALSE;
  }
  g_autofree char *problem = gs_trace_read_result_problem(result);
  if (r.events == 0 && !problem)
    cli_note_no_events(path);
  return TRUE;
}

void cli_not_a_log(const char *path, char *problem) {
  g_autofree char *said = problem;
  g_autofree char *why = gs_trace_file_not_a_log(path);
  if (why)
    cli_error("%s", why);
  else /* a whole header, then nothing readable: say what the reader found */
    cli_error("%s holds no readable events: %s", path, said ? said : "?");
}

gs_trace_model *cli_load_model(const char *command, const char *path) {
  cli_progress *progress = cli_progress_new("reading");
  g_autoptr(GError) error = NULL;
  gs_trace_model *m = gs_trace_model_load_file(path, cli_progress_update, progress, NULL, &error);
  cli_progress_free(progress);
  if (!m) {
    cli_error("%s: %s", command, error->message);
    return NULL;
  }
  const char *problem = gs_trace_model_problem(m);
  if (gs_trace_model_n_events(m) == 0 && problem) {
    cli_not_a_log(path, g_strdup(problem));
    gs_trace_model_free(m);
    return NULL;
  }
  cli_note_warnings(gs_trace_model_head(m));
  return m;
}

void cli_note_warnings(const gs_replay *state) {
  if (!state->n_warnings)
    return;
  g_autofree char *first =
      gs_replay_warning_describe(&g_array_index(state->warnings, gs_replay_warning, 0));
  g_autofree char *safe = cli_printable(first);
  fprintf(stderr,
          "gradscope: note: the log has %" G_GUINT64_FORMAT " inconsistenc%s, stepped over "
          "(%s%s); `gradscope stats` lists them\n",
          state->n_warnings, state->n_warnings == 1 ? "y" : "ies",
          state->n_warnings == 1 ? "" : "the first: ", safe);
}

int cli_report_damage(const gs_trace_read_result *result) {
  g_autofree char *problem = gs_trace_read_result_problem(result);
  if (!problem)
    return 0;
  fflush(stdout); /* the valid part first, then the warning */
  fprintf(stderr, "gradscope: warning: %s\n", problem); /* it counts the events itself */
  return CLI_EXIT_DAMAGED;
}

int cli_warn_damaged(const char *warning) {
  if (!warning)
    return 0;
  fflush(stdout); /* the valid part first, then the warning */
  fprintf(stderr, "gradscope: warning: %s\n", warning);
  return CLI_EXIT_DAMAGED;
}

char *cli_printable(const char *text) {
  /* Only what could break the line or drive the terminal is escaped: quotes and backslashes
   * stay plain text (a name "x" printed as \"x\" is C's escaping leaking into prose, as
   * g_strescape did); UTF-8 is kept. */
  GString *out = g_string_new(NULL);
  for (const unsigned char *p = (const unsigned char *)(text ? text : ""); *p; p++) {
    switch (*p) {
    case '\n': g_string_append(out, "\\n"); break;
    case '\t': g_string_append(out, "\\t"); break;
    case '\r': g_string_append(out, "\\r"); break;
    default:
      if (*p < 0x20 || *p == 0x7f)
        g_string_append_printf(out, "\\%03o", *p);
      else
        g_string_append_c(out, (char)*p);
    }
  }
  return g_string_free(out, FALSE);
}

char *cli_format_bytes(guint64 bytes) {
  gulong n = (gulong)MIN(bytes, G_MAXULONG);
  if (bytes < 1024)
    return g_strdup_printf(ngettext("%" PRIu64 " byte", "%" PRIu64 " bytes", n), bytes);
  g_autofree char *size = g_format_size_full(bytes, G_FORMAT_SIZE_IEC_UNITS);
  /* TRANSLATORS: "1.5 MiB (1572864 bytes)" */
  return g_strdup_printf(ngettext("%s (%" PRIu64 " byte)", "%s (%" PRIu64 " bytes)", n), size,
                         bytes);
}

/* Columns a terminal gives text: wide (CJK) characters take two, combining marks none. */
static int display_width(const char *text) {
  int width = 0;
  for (const char *p = text; *p; p = g_utf8_next_char(p)) {
    gunichar c = g_utf8_get_char(p);
    if (g_unichar_iszerowidth(c))
      continue;
    width += g_unichar_iswide(c) ? 2 : 1;
  }
  return width;
}

char *cli_align(const char *text, int width, gboolean right) {
  int pad = MAX(0, width - display_width(text));
  g_autofree char *spaces = g_strnfill((gsize)pad, ' ');
  return right ? g_strconcat(spaces, text, NULL) : g_strconcat(text, spaces, NULL);
}
