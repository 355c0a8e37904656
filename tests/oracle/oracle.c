/* oracle.c: the differential oracle (oracle.h): probes of the live engine after each call,
 * then the replayed model compared with them, and every sentence's facts checked against the
 * model's state at its event. Compiled without oracle-wrap.h: its own engine calls are not
 * probed. */
#include "oracle.h"

#include <glib/gstdio.h>
#include <gradscope/gradscope.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "event-fields.h"
#include "replay.h"
#include "trace-model.h"

#define MAX_VALUES 16
/* Disagreements described in a report, at most (all are counted). */
#define REPORT_LINES 20

typedef struct probe_tensor {
  guint64 id, storage, owner_scope;
  gint64 version, offset;
  gboolean copy_on_write, requires_grad;
  guint32 dtype;
  int ndim;
  gint64 shape[GS_MAX_DIMS], strides[GS_MAX_DIMS];
  guint n_values;
  double values[MAX_VALUES];
} probe_tensor;

typedef struct probe_scope {
  guint64 id;
  gs_scope_info info;
} probe_scope;

typedef struct probe {
  guint64 counter;
  const char *call;
  guint first_tensor, n_tensors, first_scope, n_scopes, first_range, n_ranges;
} probe;

/* What a pack hook was given (oracle_saved_packed). */
typedef struct hook_pack {
  guint64 tensor, storage;
} hook_pack;

/* What an unpack hook gave back, for which pack (oracle_saved_unpacked). */
typedef struct hook_unpack {
  guint pack;
  guint64 tensor, storage;
} hook_unpack;

struct oracle {
  char *dir, *path;
  guint values;
  guint64 max_probes; /* GS_ORACLE_MAX_PROBES: a long program is probed this many times */
  guint64 last_counter;
  GArray *probes, *tensors, *scopes;
  GPtrArray *ranges;       /* the engine's open range names at each probe (interned by it) */
  GArray *packs, *unpacks; /* hook_pack, hook_unpack: what the hooks saw, in order */
};

static oracle *current;
static int probes_held; /* oracle_hold_probes */
static oracle_totals totals;

oracle_totals oracle_get_totals(void) { return totals; }

oracle *oracle_begin(guint values) {
  g_assert_null(current);
  oracle *o = g_new0(oracle, 1);
  o->dir = g_dir_make_tmp("gradscope-oracle-XXXXXX", NULL);
  g_assert_nonnull(o->dir);
  o->path = g_build_filename(o->dir, "run.gstrace", NULL);
  o->values = MIN(values, MAX_VALUES);
  const char *max = g_getenv("GS_ORACLE_MAX_PROBES");
  o->max_probes = max ? g_ascii_strtoull(max, NULL, 10) : 0;
  o->probes = g_array_new(FALSE, FALSE, sizeof(probe));
  o->tensors = g_array_new(FALSE, FALSE, sizeof(probe_tensor));
  o->scopes = g_array_new(FALSE, FALSE, sizeof(probe_scope));
  o->ranges = g_ptr_array_new();
  o->packs = g_array_new(FALSE, FALSE, sizeof(hook_pack));
  o->unpacks = g_array_new(FALSE, FALSE, sizeof(hook_unpack));
  g_assert_cmpint(gs_trace_open(o->path), ==, 0);
  o->last_counter = gs_event_counter();
  current = o;
  return o;
}

/* ---- probing the engine ---------------------------------------------------------------- */

static void probe_tensor_now(oracle *o, gs_tensor t, probe_tensor *p) {
  memset(p, 0, sizeof *p);
  p->id = t.id;
  p->storage = gs_storage_id(t);
  p->version = gs_version(t);
  p->copy_on_write = gs_is_copy_on_write(t);
  p->requires_grad = gs_requires_grad(t);
  p->owner_scope = gs_owner_scope(t).id;
  p->dtype = gs_dtype_of(t);
  p->ndim = gs_shape(t, p->shape);
  gs_strides(t, p->strides);
  p->offset = gs_storage_offset(t);
  guint64 numel = (guint64)gs_numel(t);
  p->n_values = (guint)MIN((guint64)o->values, numel);
  for (guint k = 0; k < p->n_values; k++) { /* logical element k, row-major */
    int64_t index[GS_MAX_DIMS] = {0};
    guint64 rest = k;
    for (int d = p->ndim - 1; d >= 0; d--) {
      index[d] = (int64_t)(rest % (guint64)MAX(p->shape[d], 1));
      rest /= (guint64)MAX(p->shape[d], 1);
    }
    p->values[k] = gs_get(t, index);
  }
}

void oracle_after_call(const char *call) {
  oracle *o = current;
  if (!o || probes_held || gs_event_counter() == o->last_counter)
    return; /* nothing the log could show happened */
  if (o->max_probes && o->probes->len >= o->max_probes)
    return;
  probe p = {.call = call,
             .first_tensor = o->tensors->len,
             .first_scope = o->scopes->len,
             .first_range = o->ranges->len};
  uint64_t n = gs_live_tensors(NULL, 0);
  g_autofree gs_tensor *alive = g_new(gs_tensor, n + 1);
  n = MIN(n, gs_live_tensors(alive, n));
  for (uint64_t i = 0; i < n; i++) {
    probe_tensor pt;
    probe_tensor_now(o, alive[i], &pt);
    g_array_append_val(o->tensors, pt);
  }
  p.n_tensors = (guint)n;
  for (gs_scope s = gs_scope_current(); s.id; s = gs_scope_outer(s)) {
    probe_scope ps = {s.id, gs_scope_get_info(s)};
    g_array_append_val(o->scopes, ps);
    p.n_scopes++;
  }
  for (const char *name; (name = gs_trace_range_name((int)p.n_ranges)); p.n_ranges++)
    g_ptr_array_add(o->ranges, (gpointer)name);
  p.counter = o->last_counter = gs_event_counter();
  g_array_append_val(o->probes, p);
}

void oracle_hold_probes(gboolean hold) { probes_held += hold ? 1 : -1; }

guint oracle_saved_packed(gs_tensor t) {
  oracle *o = current;
  if (!o)
    return 0;
  hook_pack k = {t.id, gs_storage_id(t)};
  g_array_append_val(o->packs, k);
  return o->packs->len; /* from 1: 0 is "no oracle" */
}

void oracle_saved_unpacked(guint pack, gs_tensor given) {
  oracle *o = current;
  if (!o || !pack)
    return;
  hook_unpack u = {pack, given.id, gs_storage_id(given)};
  g_array_append_val(o->unpacks, u);
}

/* ---- comparing ------------------------------------------------------------------------- */

typedef struct compare {
  GString *report;
  guint disagreements;
  const probe *p;
} compare;

static void disagree(compare *c, const char *format, ...) G_GNUC_PRINTF(2, 3);
static void disagree(compare *c, const char *format, ...) {
  if (c->disagreements++ >= REPORT_LINES)
    return;
  va_list args;
  va_start(args, format);
  g_autofree char *what = g_strdup_vprintf(format, args);
  va_end(args);
  if (c->p)
    g_string_append_printf(c->report, "after %s (event %" G_GUINT64_FORMAT "): %s\n",
                           c->p->call, c->p->counter, what);
  else
    g_string_append_printf(c->report, "%s\n", what);
}

static gboolean same_value(double a, double b) {
  return a == b || (isnan(a) && isnan(b));
}

static gboolean same_dims(const gint64 *a, const gint64 *b, int n) {
  return memcmp(a, b, sizeof *a * (gsize)n) == 0;
}

/* "f64 [2, 3] strides [3, 1] offset 0" */
static char *geometry(guint32 dtype, int ndim, const gint64 *shape, const gint64 *strides,
                      gint64 offset) {
  GString *s = g_string_new(gs_dtype_name((gs_dtype)dtype));
  g_string_append(s, " [");
  for (int d = 0; d < ndim; d++)
    g_string_append_printf(s, "%s%" G_GINT64_FORMAT, d ? ", " : "", shape[d]);
  g_string_append(s, "] strides [");
  for (int d = 0; d < ndim; d++)
    g_string_append_printf(s, "%s%" G_GINT64_FORMAT, d ? ", " : "", strides[d]);
  g_string_append_printf(s, "] offset %" G_GINT64_FORMAT, offset);
  return g_string_free(s, FALSE);
}

static void compare_tensor(compare *c, const gs_replay *r, const probe_tensor *p) {
  char h[32];
  gs_format_handle(p->id, h, sizeof h);
  const gs_replay_object *o = gs_replay_object_get(r, p->id);
  if (!o || o->composite) {
    disagree(c, "tensor %s is alive in the engine, not in the model", h);
    return;
  }
  totals.tensors++;
  if (o->storage != p->storage)
    disagree(c, "tensor %s: storage engine #%" G_GUINT64_FORMAT ", model #%" G_GUINT64_FORMAT,
             h, p->storage, o->storage);
  guint64 version;
  if (!gs_replay_storage_version(r, o->storage, &version))
    disagree(c, "tensor %s: the model does not know its version (engine %" G_GINT64_FORMAT ")",
             h, p->version);
  else if ((gint64)version != p->version)
    disagree(c, "tensor %s: version engine %" G_GINT64_FORMAT ", model %" G_GUINT64_FORMAT, h,
             p->version, version);
  gboolean cow = gs_replay_storage_shares_bytes_with(r, o->storage) != 0;
  if (cow != p->copy_on_write)
    disagree(c, "tensor %s: copy-on-write engine %d, model %d", h, p->copy_on_write, cow);
  if (o->requires_grad != p->requires_grad)
    disagree(c, "tensor %s: requires_grad engine %d, model %d (made by %s)", h, p->requires_grad,
             o->requires_grad, o->op);
  guint64 owner = o->holder == GS_TRACE_HELD_BY_SCOPE ? o->owner : 0;
  if (owner != p->owner_scope)
    disagree(c, "tensor %s: owner scope engine %" G_GUINT64_FORMAT ", model %" G_GUINT64_FORMAT
             " (holder %u)", h, p->owner_scope, owner, o->holder);
  if (o->dtype != p->dtype || o->ndim != p->ndim || !same_dims(o->shape, p->shape, p->ndim) ||
      !same_dims(o->strides, p->strides, p->ndim) || o->offset != p->offset) {
    g_autofree char *engine = geometry(p->dtype, p->ndim, p->shape, p->strides, p->offset);
    g_autofree char *model = geometry(o->dtype, o->ndim, o->shape, o->strides, o->offset);
    disagree(c, "tensor %s: engine %s, model %s", h, engine, model);
  }
  double values[MAX_VALUES];
  guint known = gs_replay_tensor_values(r, o, values, p->n_values);
  totals.unknown_values += p->n_values - known;
  for (guint k = 0; k < known; k++)
    if (!same_value(values[k], p->values[k])) {
      disagree(c, "tensor %s: value %u engine %g, model %g", h, k, p->values[k], values[k]);
      break;
    }
}

static void compare_probe(compare *c, gs_trace_model *m, oracle *o, const probe *p) {
  c->p = p;
  totals.probes++;
  guint64 index = gs_trace_model_index_through_seq(m, p->counter);
  if (index == G_MAXUINT64) {
    disagree(c, "the log has no event numbered %" G_GUINT64_FORMAT " or less", p->counter);
    return;
  }
  const gs_replay *r = gs_trace_model_seek(m, index);
  guint model_tensors = 0;
  gs_replay_iter it = {0};
  for (gs_replay_object *t; gs_replay_objects_next(r, &it, &t);)
    model_tensors += !t->composite;
  g_autoptr(GHashTable) engine_ids = g_hash_table_new(g_int64_hash, g_int64_equal);
  for (guint i = 0; i < p->n_tensors; i++) {
    const probe_tensor *pt = &g_array_index(o->tensors, probe_tensor, p->first_tensor + i);
    g_hash_table_add(engine_ids, (gpointer)&pt->id);
    compare_tensor(c, r, pt);
  }
  if (model_tensors != p->n_tensors) {
    it = (gs_replay_iter){0};
    for (gs_replay_object *obj; gs_replay_objects_next(r, &it, &obj);) {
      char h[32];
      if (!obj->composite && !g_hash_table_contains(engine_ids, &obj->id))
        disagree(c, "tensor %s is alive in the model, not in the engine (made by %s)",
                 gs_format_handle(obj->id, h, sizeof h), obj->op);
    }
  }
  /* The named ranges open on the program's thread: the ones its events fall inside. */
  guint32 thread = gs_trace_model_thread_at(m, index);
  guint open = gs_replay_ranges_open(r, thread);
  totals.ranges += p->n_ranges;
  for (guint i = 0; i < MAX(open, p->n_ranges); i++) {
    const char *engine = i < p->n_ranges ? o->ranges->pdata[p->first_range + i] : NULL;
    const char *model = gs_replay_range_name(r, thread, i);
    if (g_strcmp0(engine, model) != 0) {
      disagree(c,
               "open range %u (from the outermost): engine \"%s\", model \"%s\" (%u open "
               "in the engine, %u in the model)",
               i + 1, engine ? engine : "(none)", model ? model : "(none)", p->n_ranges, open);
      break;
    }
  }
  for (guint i = 0; i < p->n_scopes; i++) {
    const probe_scope *ps = &g_array_index(o->scopes, probe_scope, p->first_scope + i);
    const gs_replay_scope *s = gs_trace_model_scope_in(m, r, ps->id);
    char h[32];
    gs_format_handle(ps->id, h, sizeof h);
    totals.scopes++;
    if (!s || s->ended) {
      disagree(c, "scope %s is open in the engine, %s in the model", h, s ? "ended" : "unknown");
      continue;
    }
    const gs_scope_info *e = &ps->info;
    if (s->created != e->created || s->disposed != e->disposed || s->alive != e->alive ||
        s->bytes != e->bytes || s->peak_bytes != e->peak_bytes)
      disagree(c,
               "scope %s \"%s\": engine created %" G_GUINT64_FORMAT " disposed %" G_GUINT64_FORMAT
               " alive %" G_GUINT64_FORMAT " bytes %" G_GUINT64_FORMAT " peak %" G_GUINT64_FORMAT
               ", model %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT
               " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT,
               h, s->name, e->created, e->disposed, e->alive, e->bytes, e->peak_bytes, s->created,
               s->disposed, s->alive, s->bytes, s->peak_bytes);
  }
}

/* ---- sentences --------------------------------------------------------------------------- */

/* Whether two alive storages read the same bytes copy-on-write. */
static gboolean share_bytes(const gs_replay *r, guint64 a, guint64 b) {
  guint64 x = gs_replay_storage_shares_bytes_with(r, a), y = gs_replay_storage_shares_bytes_with(r, b);
  return x && y && (x == b || y == a || x == y);
}

/* One fact of the sentence of event index, against r: the replayed state just after the event
 * for a fact about after it, just before it for a fact marked before (the caller calls twice). */
static void check_fact(compare *c, gs_trace_model *m, const gs_replay *r, guint64 index,
                       const char *text, const gs_explain_fact *f) {
  if (!f->text || !strstr(text, f->text)) {
    disagree(c, "event #%" G_GUINT64_FORMAT ": the sentence does not say \"%s\": %s",
             gs_trace_model_seq_at(m, index), f->text ? f->text : "", text);
    return;
  }
  const gs_replay_object *o = f->id ? gs_replay_object_get(r, f->id) : NULL;
  gboolean ok = TRUE;
  guint64 version;
  switch (f->kind) {
  case GS_FACT_TENSOR:
    ok = o && (!f->storage || o->storage == f->storage);
    break;
  case GS_FACT_STORAGE:
    ok = gs_replay_storage(r, f->id, NULL, NULL) ||
         gs_trace_model_kind_at(m, index) == GS_TRACE_STORAGE_FREE;
    break;
  case GS_FACT_VERSION:
    ok = gs_replay_storage_version(r, f->storage, &version) && version == f->value;
    break;
  case GS_FACT_ALIAS:
    ok = o && o->storage == f->storage;
    break;
  case GS_FACT_NODE: {
    const gs_replay_node *n = gs_replay_node_get(r, f->id);
    g_autofree char *words = n ? g_strdup_printf("%s #%" G_GUINT64_FORMAT, n->kind, f->id) : NULL;
    ok = n && g_strcmp0(words, f->text) == 0;
    break;
  }
  case GS_FACT_SAVED_VERSION: {
    const gs_replay_node *n = gs_replay_node_get(r, f->id);
    gboolean saved = FALSE;
    for (guint k = 0; n && k < n->n_saved; k++)
      saved |= n->saved[k] == f->tensor;
    ok = saved && (!gs_replay_storage_version(r, f->storage, &version) || version != f->value);
    break;
  }
  case GS_FACT_OWNER:
    /* A composite's first owner is not in its event: only a tensor's is checked. */
    ok = !o || o->composite || (o->holder == f->holder && o->owner == f->value);
    break;
  case GS_FACT_SHARED_BYTES:
    ok = gs_replay_storage_shares_bytes_with(r, f->id) != 0 &&
         (!f->storage || share_bytes(r, f->id, f->storage));
    break;
  case GS_FACT_SAVED_BY: {
    const gs_replay_node *n = gs_replay_node_get(r, f->id);
    ok = FALSE;
    for (guint k = 0; n && k < n->n_saved; k++)
      ok |= n->saved[k] == f->tensor && n->saved_storages[k] == f->storage;
    break;
  }
  case GS_FACT_PACKED:
  case GS_FACT_UNPACKED: {
    const gs_replay_node *n = gs_replay_node_get(r, f->id);
    ok = n && (f->kind == GS_FACT_PACKED ? n->n_packed : n->n_unpacked) == f->value &&
         n->n_packed <= n->n_saved;
    break;
  }
  case GS_FACT_RANGE: {
    guint32 thread = gs_trace_model_thread_at(m, index);
    ok = gs_replay_ranges_open(r, thread) == f->id && f->value >= 1 &&
         g_strcmp0(gs_replay_range_name(r, thread, (guint)f->value - 1), f->text) == 0;
    break;
  }
  }
  totals.facts++;
  if (!ok)
    disagree(c, "event #%" G_GUINT64_FORMAT ": a false fact (kind %d, id %" G_GUINT64_FORMAT
             ", \"%s\"%s): %s",
             gs_trace_model_seq_at(m, index), f->kind, f->id, f->text,
             f->before ? ", before it" : "", text);
}

static const char *model_string(guint32 id, gpointer m) { return gs_trace_model_string(m, id); }

/* Every sentence up to event number until (G_MAXUINT64: all), its facts checked against a
 * replay of its own, applied event by event beside them (seeking the model back and forth for
 * the states before and after each event cost a keyframe's replay per event). */
static void check_sentences(compare *c, gs_trace_model *m, guint64 until) {
  c->p = NULL;
  g_autoptr(gs_replay) r = gs_replay_new();
  for (guint64 i = 0; i < gs_trace_model_n_events(m) && gs_trace_model_seq_at(m, i) <= until; i++) {
    GArray *facts = NULL;
    g_autofree char *text = gs_trace_model_explain_facts(m, i, &facts);
    totals.sentences++;
    totals.reshapes += gs_trace_model_kind_at(m, i) == GS_TRACE_TENSOR_SET_DATA;
    for (guint k = 0; facts && k < facts->len; k++) {
      const gs_explain_fact *f = &g_array_index(facts, gs_explain_fact, k);
      if (f->before)
        check_fact(c, m, r, i, text, f);
    }
    gs_trace_event e;
    if (gs_trace_model_event(m, i, &e))
      gs_replay_apply_with(r, &e, model_string, m);
    for (guint k = 0; facts && k < facts->len; k++) {
      const gs_explain_fact *f = &g_array_index(facts, gs_explain_fact, k);
      if (!f->before)
        check_fact(c, m, r, i, text, f);
    }
    if (facts)
      g_array_unref(facts);
  }
}

/* ---- saved-tensor hooks ------------------------------------------------------------------ */

/* The log's saved_pack and saved_unpack events up to event number until against what the
 * hooks were given and gave back (oracle_saved_packed, _unpacked): the k-th pack event is the
 * k-th pack, of the node the hook's tensor was made for (its op is the node's kind), on its
 * storage, naming the tensor it views; every unpack event names a tensor an unpack hook gave
 * back, on its storage, for the node whose pack it unpacked. An unpack the engine refused (a
 * version error) has no event. */
static void check_hooks(compare *c, gs_trace_model *m, oracle *o, guint64 until, gboolean whole) {
  c->p = NULL;
  g_autoptr(GHashTable) hook_tensors = g_hash_table_new(g_int64_hash, g_int64_equal);
  for (guint k = 0; k < o->packs->len; k++)
    g_hash_table_add(hook_tensors, &g_array_index(o->packs, hook_pack, k).tensor);
  g_autoptr(GHashTable) given = g_hash_table_new(g_int64_hash, g_int64_equal);
  for (guint k = 0; k < o->unpacks->len; k++) {
    hook_unpack *u = &g_array_index(o->unpacks, hook_unpack, k);
    g_hash_table_insert(given, &u->tensor, u);
  }
  /* tensor id -> its creation event's index, for the hooks' tensors */
  g_autoptr(GHashTable) made = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  g_autoptr(GArray) pack_nodes = g_array_new(FALSE, FALSE, sizeof(guint64));
  guint unpacks = 0;
  for (guint64 i = 0; i < gs_trace_model_n_events(m) && gs_trace_model_seq_at(m, i) <= until; i++) {
    gs_trace_kind kind = gs_trace_model_kind_at(m, i);
    if (kind != GS_TRACE_TENSOR_CREATE && kind != GS_TRACE_SAVED_PACK &&
        kind != GS_TRACE_SAVED_UNPACK)
      continue;
    gs_trace_event e;
    if (!gs_trace_model_event(m, i, &e))
      continue;
    guint64 seq = gs_trace_model_seq_at(m, i);
    if (kind == GS_TRACE_TENSOR_CREATE) {
      if (g_hash_table_contains(hook_tensors, &e.tensor)) {
        guint64 *key = g_memdup2(&e.tensor, sizeof e.tensor);
        g_hash_table_insert(made, key, GSIZE_TO_POINTER(i + 1));
      }
      continue;
    }
    if (kind == GS_TRACE_SAVED_PACK) {
      guint k = pack_nodes->len;
      g_array_append_val(pack_nodes, e.node);
      if (k >= o->packs->len) {
        disagree(c,
                 "event #%" G_GUINT64_FORMAT ": saved_pack %u, but the pack hooks ran %u "
                 "times",
                 seq, k + 1, o->packs->len);
        continue;
      }
      totals.packs++;
      const hook_pack *h = &g_array_index(o->packs, hook_pack, k);
      char th[32];
      gs_format_handle(h->tensor, th, sizeof th);
      if (h->storage != e.storage)
        disagree(c,
                 "event #%" G_GUINT64_FORMAT ": saved_pack on storage #%" G_GUINT64_FORMAT
                 ", but pack hook call %u was given tensor %s on storage #%" G_GUINT64_FORMAT,
                 seq, e.storage, k + 1, th, h->storage);
      guint64 at = GPOINTER_TO_SIZE(g_hash_table_lookup(made, &h->tensor));
      gs_trace_event te;
      const gs_replay_node *n =
          gs_replay_node_get(gs_trace_model_seek(m, i), e.node); /* the state at the pack */
      const char *node_kind = n ? n->kind : NULL;
      if (!at || !gs_trace_model_event(m, at - 1, &te))
        disagree(c,
                 "event #%" G_GUINT64_FORMAT ": the tensor %s pack hook call %u was given "
                 "was never made in the log",
                 seq, th, k + 1);
      /* A write through a view saves into the op's node, which the log shows as the
       * CopySlices node wrapping it: the hook's tensor is named for the op's node. */
      else if ((g_strcmp0(gs_trace_model_string(m, te.op), node_kind) != 0 &&
                g_strcmp0(node_kind, "CopySlices") != 0) ||
               te.source != e.tensor)
        disagree(c,
                 "event #%" G_GUINT64_FORMAT ": saved_pack of node #%" G_GUINT64_FORMAT
                 " (%s) for tensor %" G_GUINT64_FORMAT ", but pack hook call %u was given %s, "
                 "made by %s as a view of %" G_GUINT64_FORMAT,
                 seq, e.node, node_kind ? node_kind : "not alive", e.tensor, k + 1, th,
                 gs_trace_model_string(m, te.op), te.source);
      continue;
    }
    unpacks++;
    const hook_unpack *u = g_hash_table_lookup(given, &e.tensor);
    char th[32];
    gs_format_handle(e.tensor, th, sizeof th);
    if (!u) {
      disagree(c,
               "event #%" G_GUINT64_FORMAT ": saved_unpack names tensor %s, which no unpack "
               "hook gave back",
               seq, th);
      continue;
    }
    totals.unpacks++;
    guint64 node = u->pack <= pack_nodes->len ? g_array_index(pack_nodes, guint64, u->pack - 1) : 0;
    if (u->storage != e.storage || node != e.node)
      disagree(c,
               "event #%" G_GUINT64_FORMAT ": saved_unpack of node #%" G_GUINT64_FORMAT
               " gives %s on storage #%" G_GUINT64_FORMAT ", but the unpack hook gave it on "
               "storage #%" G_GUINT64_FORMAT " for pack %u, of node #%" G_GUINT64_FORMAT,
               seq, e.node, th, e.storage, u->storage, u->pack, node);
  }
  if (whole && pack_nodes->len != o->packs->len)
    disagree(c, "the log has %u saved_pack events, the pack hooks ran %u times", pack_nodes->len,
             o->packs->len);
  if (unpacks > o->unpacks->len)
    disagree(c, "the log has %u saved_unpack events, the unpack hooks ran %u times", unpacks,
             o->unpacks->len);
}

guint oracle_end(oracle *o, GString *report, gboolean keep_log, char **log_path) {
  g_assert_true(current == o);
  current = NULL;
  gs_trace_close();
  compare c = {report, 0, NULL};
  g_autoptr(GError) error = NULL;
  g_autoptr(gs_trace_model) m = gs_trace_model_load_file(o->path, NULL, NULL, NULL, &error);
  if (!m) {
    disagree(&c, "the log cannot be read: %s", error->message);
  } else {
    if (gs_trace_model_problem(m))
      disagree(&c, "the log is damaged: %s", gs_trace_model_problem(m));
    for (guint i = 0; i < o->probes->len; i++)
      compare_probe(&c, m, o, &g_array_index(o->probes, probe, i));
    /* A long program probed only at its start is checked as far as it was probed. */
    gboolean cut = o->max_probes && o->probes->len >= o->max_probes;
    guint64 until = cut ? g_array_index(o->probes, probe, o->probes->len - 1).counter : G_MAXUINT64;
    check_sentences(&c, m, until);
    check_hooks(&c, m, o, until, !cut);
  }
  totals.programs++;
  if (keep_log && log_path)
    *log_path = g_strdup(o->path);
  if (!keep_log) {
    g_remove(o->path);
    g_rmdir(o->dir);
  }
  g_free(o->path);
  g_free(o->dir);
  g_array_unref(o->probes);
  g_array_unref(o->tensors);
  g_array_unref(o->scopes);
  g_ptr_array_unref(o->ranges);
  g_array_unref(o->packs);
  g_array_unref(o->unpacks);
  g_free(o);
  return c.disagreements;
}

/* ---- a flight recorder against a full log ---------------------------------------------- */

static void compare_ring_tensor(compare *c, const gs_replay *full, const gs_replay *ring,
                                const gs_replay_object *f) {
  char h[32];
  gs_format_handle(f->id, h, sizeof h);
  const gs_replay_object *o = gs_replay_object_get(ring, f->id);
  if (!o || o->composite != f->composite) {
    disagree(c, "%s %s is alive in the full log, not in the ring's", f->composite ? "object" : "tensor",
             h);
    return;
  }
  totals.tensors++;
  if (o->holder != f->holder || o->owner != f->owner)
    disagree(c, "%s: holder %u/%" G_GUINT64_FORMAT " in the full log, %u/%" G_GUINT64_FORMAT
             " in the ring's", h, f->holder, f->owner, o->holder, o->owner);
  if (o->bytes != f->bytes) /* what it adds to its scope's bytes */
    disagree(c, "%s: counts %" G_GUINT64_FORMAT " bytes to its owner in the full log, %"
             G_GUINT64_FORMAT " in the ring's (made by %s)", h, f->bytes, o->bytes, f->op);
  if (f->composite)
    return;
  if (o->storage != f->storage)
    disagree(c, "tensor %s: storage #%" G_GUINT64_FORMAT " in the full log, #%" G_GUINT64_FORMAT
             " in the ring's", h, f->storage, o->storage);
  if (o->requires_grad != f->requires_grad)
    disagree(c, "tensor %s: requires_grad %d in the full log, %d in the ring's", h,
             f->requires_grad, o->requires_grad);
  if (o->dtype != f->dtype || o->ndim != f->ndim || !same_dims(o->shape, f->shape, f->ndim) ||
      !same_dims(o->strides, f->strides, f->ndim) || o->offset != f->offset) {
    g_autofree char *a = geometry(f->dtype, f->ndim, f->shape, f->strides, f->offset);
    g_autofree char *b = geometry(o->dtype, o->ndim, o->shape, o->strides, o->offset);
    disagree(c, "tensor %s: %s in the full log, %s in the ring's", h, a, b);
  }
  /* Made before the ring's window: the ring must say it does not know when. */
  if (!o->before_recording && o->create_seq != f->create_seq)
    disagree(c, "tensor %s: made at %" G_GUINT64_FORMAT " in the ring's log, %" G_GUINT64_FORMAT
             " in the full log", h, o->create_seq, f->create_seq);
  guint64 vf = 0, vr = 0;
  gboolean full_knows = gs_replay_storage_version(full, f->storage, &vf);
  if (gs_replay_storage_version(ring, o->storage, &vr) && (!full_knows || vr != vf))
    disagree(c, "tensor %s: version %" G_GUINT64_FORMAT " in the ring's log, %" G_GUINT64_FORMAT
             " in the full log", h, vr, vf);
  guint64 sf = gs_replay_storage_shares_bytes_with(full, f->storage);
  guint64 sr = gs_replay_storage_shares_bytes_with(ring, o->storage);
  if ((sf != 0) != (sr != 0))
    disagree(c, "tensor %s: storage #%" G_GUINT64_FORMAT " shares bytes with #%" G_GUINT64_FORMAT
             " in the full log, with #%" G_GUINT64_FORMAT " in the ring's (0: none)", h,
             f->storage, sf, sr);
  double a[MAX_VALUES], b[MAX_VALUES];
  guint na = gs_replay_tensor_values(full, f, a, MAX_VALUES);
  guint nb = gs_replay_tensor_values(ring, o, b, MAX_VALUES);
  for (guint k = 0; k < nb; k++)
    if (k >= na || !same_value(a[k], b[k])) {
      disagree(c, "tensor %s: the ring's log claims value %u is %g, the full log %s", h, k, b[k],
               k < na ? "says otherwise" : "does not know it");
      break;
    }
}

guint oracle_compare_ring(const char *full_log, const char *ring_log, GString *report) {
  compare c = {report, 0, NULL};
  g_autoptr(GError) error = NULL;
  g_autoptr(gs_trace_model) full = gs_trace_model_load_file(full_log, NULL, NULL, NULL, &error);
  g_autoptr(gs_trace_model) ring =
      full ? gs_trace_model_load_file(ring_log, NULL, NULL, NULL, &error) : NULL;
  if (!ring) {
    disagree(&c, "a log cannot be read: %s", error->message);
    return c.disagreements;
  }
  guint64 n = gs_trace_model_n_events(ring);
  if (!n) {
    disagree(&c, "the ring's log has no events");
    return c.disagreements;
  }
  totals.snapshots += gs_trace_model_snapshot(ring, NULL, NULL, NULL);
  guint64 seq = gs_trace_model_seq_at(ring, n - 1);
  guint64 at = gs_trace_model_index_through_seq(full, seq);
  if (at == G_MAXUINT64 || gs_trace_model_seq_at(full, at) != seq) {
    disagree(&c, "the full log has no event #%" G_GUINT64_FORMAT, seq);
    return c.disagreements;
  }
  totals.probes++;
  /* Both states stay valid: each model's own seek position. */
  const gs_replay *rs = gs_trace_model_seek(ring, n - 1);
  const gs_replay *fs = gs_trace_model_seek(full, at);
  if (gs_replay_n_objects(rs) != gs_replay_n_objects(fs))
    disagree(&c, "%u objects alive in the full log at #%" G_GUINT64_FORMAT ", %u in the ring's",
             gs_replay_n_objects(fs), seq, gs_replay_n_objects(rs));
  gs_replay_iter it = {0};
  for (gs_replay_object *o; gs_replay_objects_next(fs, &it, &o);)
    compare_ring_tensor(&c, fs, rs, o);
  /* The head state counts what did not add up in the whole log. */
  const gs_replay *ring_head = gs_trace_model_head(ring), *full_head = gs_trace_model_head(full);
  if (ring_head->n_warnings > full_head->n_warnings)
    disagree(&c, "the ring's log has %" G_GUINT64_FORMAT " inconsistencies (the full log %"
             G_GUINT64_FORMAT "), the first: kind %d", ring_head->n_warnings,
             full_head->n_warnings,
             ring_head->warnings->len ? (int)g_array_index(ring_head->warnings, gs_replay_warning, 0).kind : -1);
  if (rs->live_bytes != fs->live_bytes || rs->live_storages != fs->live_storages)
    disagree(&c, "bytes alive %" G_GUINT64_FORMAT " in %" G_GUINT64_FORMAT " storages in the "
             "full log, %" G_GUINT64_FORMAT " in %" G_GUINT64_FORMAT " in the ring's",
             fs->live_bytes, fs->live_storages, rs->live_bytes, rs->live_storages);
  /* Open scopes hold the same objects and bytes (their counts of the past are the ring's). */
  for (guint i = 0; i < fs->scope_list->len; i++) {
    const gs_replay_scope *s = fs->scope_list->pdata[i];
    if (s->ended)
      continue;
    const gs_replay_scope *r = gs_trace_model_scope_in(ring, rs, s->id);
    if (!r || r->ended)
      disagree(&c, "open scope \"%s\" is %s in the ring's log", s->name, r ? "ended" : "missing");
    else if (r->alive != s->alive || r->bytes != s->bytes)
      disagree(&c, "open scope \"%s\" holds %" G_GUINT64_FORMAT " objects, %" G_GUINT64_FORMAT
               " bytes in the full log, %" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT " in the ring's",
               s->name, s->alive, s->bytes, r->alive, r->bytes);
  }
  return c.disagreements;
}

/* ---- whole programs --------------------------------------------------------------------- */

oracle *oracle_begin_program(char **argv) {
  if (!getenv("GS_TRACE_VALUES")) {
    setenv("GS_TRACE_VALUES", "16", 1);
    execv("/proc/self/exe", argv);
    g_error("cannot run again with GS_TRACE_VALUES set");
  }
  return oracle_begin(16);
}

int oracle_end_program(oracle *o, int status) {
  g_autoptr(GString) report = g_string_new(NULL);
  g_autofree char *log = NULL;
  guint n = oracle_end(o, report, TRUE, &log);
  printf("oracle_probes=%" G_GUINT64_FORMAT "\noracle_tensors_compared=%" G_GUINT64_FORMAT
         "\noracle_facts=%" G_GUINT64_FORMAT "\noracle_disagreements=%u\n",
         totals.probes, totals.tensors, totals.facts, n);
  if (n)
    fprintf(stderr, "the engine and the model disagree %u times (log kept: %s):\n%s", n, log,
            report->str);
  else
    unlink(log);
  return status || n || totals.probes == 0 ? 1 : 0;
}
