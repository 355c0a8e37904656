/* graph-source.c: graphs at model positions with incrementally tracked versions (see
 * graph-source.h). */
#include "graph-source.h"

struct gs_graph_source {
  gs_trace_model *model;
  gs_graph_versions *versions;
  guint64 fed; /* events 0..fed-1 are in versions */
};

gs_graph_source *gs_graph_source_new(gs_trace_model *model) {
  gs_graph_source *s = g_new0(gs_graph_source, 1);
  s->model = model;
  s->versions = gs_graph_versions_new();
  return s;
}

void gs_graph_source_free(gs_graph_source *s) {
  if (!s)
    return;
  gs_graph_versions_free(s->versions);
  g_free(s);
}

static void feed_versions(gs_graph_source *s, guint64 until) {
  if (until < s->fed) {
    gs_graph_versions_free(s->versions);
    s->versions = gs_graph_versions_new();
    s->fed = 0;
  }
  for (guint64 i = s->fed; i < until; i++) {
    if (!gs_graph_versions_wants(gs_trace_model_kind_at(s->model, i)))
      continue;
    gs_trace_event e;
    if (gs_trace_model_event(s->model, i, &e))
      gs_graph_versions_apply(s->versions, &e, gs_trace_model_string(s->model, e.op));
  }
  s->fed = until;
}

gs_graph *gs_graph_source_build(gs_graph_source *s, guint64 index) {
  guint64 n = gs_trace_model_n_events(s->model);
  if (n == 0)
    return gs_graph_new();
  index = MIN(index, n - 1);
  const gs_replay *state = gs_trace_model_seek(s->model, index);
  if (!state)
    return gs_graph_new();
  feed_versions(s, index + 1);
  return gs_graph_build_with(state, s->versions);
}

guint64 gs_graph_source_find_backward(gs_graph_source *s, guint n) {
  guint64 total = gs_trace_model_n_events(s->model);
  for (guint64 i = 0; i < total; i++)
    if (gs_trace_model_kind_at(s->model, i) == GS_TRACE_BACKWARD_BEGIN && n-- == 0)
      return i;
  return G_MAXUINT64;
}
