/* cmd-state.c: `gradscope state FILE [--at N] [--json]`: the model's whole state after every
 * event numbered N or less (default: the end of the log): each alive tensor with its storage,
 * offset, shape, strides, dtype, version, copy-on-write sharing, owner, where it was made and
 * the values the log says it holds now; each alive storage; the open scopes and totals. A
 * program that reads gs_event_counter() just after a call and asks for that number sees the
 * state that call left: this is what the inspector believes, printed so it can be checked
 * against the engine. The JSON shape is doc/state-json.md's. */
#include <stdio.h>

#include "state-report.h"
#include "cli.h"

int cli_state(int argc, char **argv) {
  char *at_text = NULL;
  gboolean json = FALSE;
  const GOptionEntry entries[] = {
      {"at", 0, 0, G_OPTION_ARG_STRING, &at_text,
       "The state after every event numbered N or less (the engine's numbers, as "
       "gs_event_counter() and `gradscope dump` give them); default: the end of the log",
       "N"},
      {"json", 'j', 0, G_OPTION_ARG_NONE, &json, "One JSON object (doc/state-json.md)", NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  g_autoptr(GOptionContext) context = cli_option_context(
      "FILE", entries,
      "Prints what the inspector believes was alive after an event: every tensor\n"
      "(storage, offset, shape, strides, dtype, version, copy-on-write, owner, where\n"
      "it was made, values) and storage, the open scopes and totals.\n\n"
      "Example: gradscope state run.gstrace --at 412 --json");
  const char *path = cli_parse_file_args(context, &argc, &argv);
  g_autofree char *at_owned = at_text;
  if (!path)
    return 1;
  guint64 at = G_MAXUINT64;
  if (at_text && !g_ascii_string_to_unsigned(at_text, 10, 0, G_MAXUINT64, &at, NULL)) {
    cli_error("state: --at wants an event number (as gs_event_counter() or `gradscope dump` "
              "gives it), got '%s'",
              at_text);
    return 1;
  }
  g_autoptr(gs_trace_model) m = cli_load_model("state", path);
  if (!m)
    return 1;
  guint64 n = gs_trace_model_n_events(m);
  guint64 index = G_MAXUINT64, seq = 0;
  if (n > 0) {
    index = at_text ? gs_trace_model_index_through_seq(m, at) : n - 1;
    /* Before the first event the state is empty; a number past the end is the end. */
    seq = at_text ? at : gs_trace_model_seq_at(m, n - 1);
  } else {
    cli_note_no_events(path);
  }
  if (at_text && n > 0 && index == G_MAXUINT64 && gs_trace_model_snapshot(m, NULL, NULL, NULL)) {
    cli_error("state: %s begins at event #%" G_GUINT64_FORMAT " (a flight recorder's or a late "
              "log: what was alive before is not in it), got --at %" G_GUINT64_FORMAT,
              path, gs_trace_model_seq_at(m, 0), at);
    return 1;
  }
  g_autoptr(GString) out = g_string_new(NULL);
  if (json)
    gs_state_report_json(m, index, seq, out);
  else
    gs_state_report_text(m, index, seq, out);
  fputs(out->str, stdout);
  return cli_warn_damaged(gs_trace_model_problem(m));
}
