/* graph-at.c: the autograd graph at an event of a log, for `export-dot` and `export-graph`:
 * the log is loaded into the trace model and the graph is built at the event by the same code
 * as the inspector's graph view (inspector/graph/layout/graph-source.c): versions, version checks,
 * storage relations and a cluster per scope the nodes were created in.
 *
 * With --backward N, the moment is the N-th backward_begin: the graph that backward pass
 * walks, complete, just before it frees anything. Without --at or --backward, the moment is
 * the last node_create event of the log: the last time a graph
 * grew, so the last step's graph is complete there. (The end of a log usually has no graph at
 * all: every node is released when its outputs are disposed; and the last moment any node
 * existed is midway through that teardown, one node left.) */
#include <stdio.h>

#include "graph-source.h"
#include "trace-model.h"
#include "cli.h"

static guint64 last_node_create(gs_trace_model *m) {
  guint64 best = G_MAXUINT64, best_seq = 0;
  for (guint64 i = 0; i < gs_trace_model_n_events(m); i++)
    if (gs_trace_model_kind_at(m, i) == GS_TRACE_NODE_CREATE &&
        (best == G_MAXUINT64 || gs_trace_model_seq_at(m, i) > best_seq)) {
      best = i;
      best_seq = gs_trace_model_seq_at(m, i);
    }
  return best;
}

/* The index of the last event whose seq is at most seq (threads' chunks interleave, so log
 * order is not seq order: the state "at seq" is the one after every event up to it). */
static guint64 index_at_seq(gs_trace_model *m, guint64 seq, guint64 *max_seq) {
  guint64 found = G_MAXUINT64, found_seq = 0;
  *max_seq = 0;
  for (guint64 i = 0; i < gs_trace_model_n_events(m); i++) {
    guint64 s = gs_trace_model_seq_at(m, i);
    *max_seq = MAX(*max_seq, s);
    if (s <= seq && (found == G_MAXUINT64 || s >= found_seq)) {
      found = i;
      found_seq = s;
    }
  }
  return found;
}

void cli_add_moment_options(GOptionContext *context, char **at_text, char **backward_text) {
  const GOptionEntry entries[] = {
      {"at", 'a', 0, G_OPTION_ARG_STRING, at_text,
       "The event (sequence number) at which to show the graph; default: the last node_create",
       "EVENT"},
      {"backward", 'b', 0, G_OPTION_ARG_STRING, backward_text,
       "Show the graph backward pass number N (from 1) walks, as it starts", "N"},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  /* GOption copies the entries: a local array is fine. */
  g_option_context_add_main_entries(context, entries, NULL);
}

gs_graph *cli_graph_at(const char *command, gboolean picture, const char *path,
                       const char *at_text, const char *backward_text, guint64 *at_out,
                       char **warning) {
  guint64 at = 0, backward = 0;
  if (at_text && backward_text) {
    cli_error("%s: give --at or --backward, not both", command);
    return NULL;
  }
  if (backward_text &&
      !g_ascii_string_to_unsigned(backward_text, 10, 1, G_MAXUINT, &backward, NULL)) {
    cli_error("%s: --backward wants the number of a backward pass, from 1, got '%s'", command,
              backward_text);
    return NULL;
  }
  if (at_text && !g_ascii_string_to_unsigned(at_text, 10, 0, G_MAXUINT64, &at, NULL)) {
    cli_error("%s: --at wants an event number (a seq as `gradscope dump` prints), got '%s'",
              command, at_text);
    return NULL;
  }
  g_autoptr(gs_trace_model) m = cli_load_model(command, path);
  if (!m)
    return NULL;
  if (gs_trace_model_n_events(m) == 0 && !gs_trace_model_problem(m)) {
    /* A picture of nothing would read as a failure to draw: say there is nothing instead. */
    if (picture) {
      cli_error("%s: %s holds no events (only a header and strings): nothing to draw", command,
                path);
      return NULL;
    }
    cli_note_no_events(path);
  }
  guint64 index;
  g_autoptr(gs_graph_source) source = gs_graph_source_new(m);
  if (backward_text) {
    index = gs_graph_source_find_backward(source, (guint)backward - 1);
    if (index == G_MAXUINT64) {
      guint n = 0;
      for (guint64 i = 0; i < gs_trace_model_n_events(m); i++)
        n += gs_trace_model_kind_at(m, i) == GS_TRACE_BACKWARD_BEGIN;
      cli_error("%s: --backward %" G_GUINT64_FORMAT ": the log has %u backward passes", command,
                backward, n);
      return NULL;
    }
  } else if (at_text) {
    guint64 max_seq;
    index = index_at_seq(m, at, &max_seq);
    if (at > max_seq) {
      cli_error("%s: --at %" G_GUINT64_FORMAT " is past the log's last event (%" G_GUINT64_FORMAT
                ")",
                command, at, max_seq);
      return NULL;
    }
  } else {
    index = last_node_create(m);
    if (index == G_MAXUINT64 && gs_trace_model_n_events(m)) {
      fprintf(stderr, "gradscope: note: the log has no graph nodes; the graph is empty\n");
      index = gs_trace_model_n_events(m) ? gs_trace_model_n_events(m) - 1 : G_MAXUINT64;
    }
  }
  gs_graph *graph = index == G_MAXUINT64 ? gs_graph_new() : gs_graph_source_build(source, index);
  /* What the graph changed to draw a nonsensical log (a scope cycle cut, deep scopes folded):
   * the picture is not the log's literal word, so say why. */
  if (graph->notes) {
    g_auto(GStrv) lines = g_strsplit(graph->notes, "\n", -1);
    for (char **line = lines; *line; line++)
      fprintf(stderr, "gradscope: note: %s\n", *line);
  }
  *at_out = at_text ? at : index == G_MAXUINT64 ? 0 : gs_trace_model_seq_at(m, index);
  /* The model's problems are whole sentences that already say how many events are used. */
  const char *problem = gs_trace_model_problem(m);
  *warning = problem ? g_strdup(problem) : NULL;
  return graph;
}
