/* graph-at.c: the autograd graph at an event of a log, for `export-dot` and `export-graph`:
 * replays the log up to the event (with storage versions, for the version checks) and builds
 * the graph there.
 *
 * Without --at, the moment is the last node_create event of the log: the last time a graph
 * grew, so the last step's graph is complete there. (The end of a log usually has no graph at
 * all: every node is released when its outputs are disposed; and the last moment any node
 * existed is midway through that teardown, one node left.) */
#include <stdio.h>

#include "cli.h"

typedef struct replay_until {
  gs_replay *replay;
  gs_graph_versions *versions;
  guint64 at;
  guint64 max_seq;
} replay_until;

/* Events are applied up to and including seq `at`. Later ones are skipped rather than ending
 * the read, since threads' chunks interleave and a later chunk may hold earlier events. */
static gboolean replay_event(const gs_trace_event *e, const gs_trace_reader *reader,
                             gpointer user_data) {
  replay_until *u = user_data;
  u->max_seq = MAX(u->max_seq, e->seq);
  if (e->seq > u->at)
    return TRUE;
  gs_replay_apply(u->replay, e, reader);
  if (gs_graph_versions_wants(e->kind))
    gs_graph_versions_apply(u->versions, e, gs_trace_reader_string(reader, e->op));
  return TRUE;
}

typedef struct last_graph {
  gboolean found;
  guint64 seq;
} last_graph;

static gboolean find_last_node_create(const gs_trace_event *e, const gs_trace_reader *reader,
                                      gpointer user_data) {
  (void)reader;
  last_graph *last = user_data;
  if (e->kind == GS_TRACE_NODE_CREATE && (!last->found || e->seq > last->seq)) {
    last->found = TRUE;
    last->seq = e->seq;
  }
  return TRUE;
}

gs_graph *cli_graph_at(const char *command, const char *path, const char *at_text,
                       guint64 *at_out, int *status) {
  guint64 at = 0;
  if (at_text && !g_ascii_string_to_unsigned(at_text, 10, 0, G_MAXUINT64, &at, NULL)) {
    cli_error("%s: --at wants an event number (a seq as `gradscope dump` prints), got '%s'",
              command, at_text);
    return NULL;
  }
  gs_trace_read_result result;
  if (!at_text) {
    last_graph last = {FALSE, 0};
    if (!cli_read_log(path, find_last_node_create, &last, &result))
      return NULL;
    gs_trace_read_result_clear(&result);
    if (!last.found)
      fprintf(stderr, "gradscope: note: the log has no graph nodes; the graph is empty\n");
    at = last.found ? last.seq : G_MAXUINT64;
  }
  g_autoptr(gs_replay) replay = gs_replay_new();
  g_autoptr(gs_graph_versions) versions = gs_graph_versions_new();
  replay_until until = {replay, versions, at, 0};
  if (!cli_read_log(path, replay_event, &until, &result))
    return NULL;
  if (at_text && at > until.max_seq) {
    cli_error("%s: --at %" G_GUINT64_FORMAT " is past the log's last event (%" G_GUINT64_FORMAT
              ")",
              command, at, until.max_seq);
    gs_trace_read_result_clear(&result);
    return NULL;
  }
  *at_out = at == G_MAXUINT64 ? replay->last_seq : at;
  *status = cli_report_damage(&result);
  gs_trace_read_result_clear(&result);
  return gs_graph_build_with(replay, versions);
}
