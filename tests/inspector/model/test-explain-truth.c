/* test-explain-truth.c: the explanation sentences tell the truth about the log.
 *
 * Real programs are recorded with tracing on (the clone/detach/in-place scenario, the classic
 * detach + in-place bug with two MulBackward nodes, a small leak loop with views and detached
 * writers, writes that fail no check, and examples/tensor-tour). Each log is
 * loaded into the trace model, and for every event the facts its sentence states
 * (gs_trace_model_explain_facts) are checked against an oracle kept here from the raw events
 * by a plain reader: the tensors named exist and sit on the storage the sentence puts them
 * on, storages exist, versions are what the writes made them, owners are the log's, every
 * alive alias of a written storage is named and nothing else, a node that "will fail" saved
 * that tensor at that version. Each fact must also be in the sentence, in its own words. Not
 * a golden text: any wording passes if what it states is true.
 *
 * The engine's version error and the graph say the same: the error names the node by the id
 * the log gives it and the saved input, and `gradscope export-dot` / `export-graph` draw the
 * alias that wrote in place, checked in the DOT text and in the PNG's pixels. */
#include <cairo.h>
#include <glib/gstdio.h>
#include <string.h>

#include "model-test-util.h"

/* ---- the programs ----------------------------------------------------------------------- */

static gs_tensor named(gs_tensor t, const char *name) {
  gs_trace_name(t, name);
  return t;
}

static gs_tensor leaf3(const char *name) {
  gs_tensor x = gs_from_data(GS_F64, (int64_t[]){3}, 1, (double[]){1, 2, 3});
  gs_set_requires_grad(x, true);
  return named(x, name);
}

/* h = 2x; c = clone(h); d = detach(h); h*h saves h; c += 100 (its own bytes); d *= 10
 * (h's storage: h sees it); backward refuses. */
static void clone_detach_workload(void) {
  gs_tensor x = leaf3("x");
  gs_tensor h = named(gs_mul_scalar(x, 2.0), "h");
  gs_tensor c = named(gs_clone(h), "c");
  gs_tensor d = named(gs_detach(h), "d");
  gs_tensor hh = gs_mul(h, h);
  gs_add_scalar_(c, 100.0);
  gs_mul_scalar_(d, 10.0);
  gs_tensor y = gs_sum(hh, NULL, 0, false);
  gs_backward(y);
  gs_tensor all[] = {x, h, c, d, hh, y};
  for (guint i = 0; i < G_N_ELEMENTS(all); i++)
    gs_dispose(all[i]);
}

/* The same, but backward reads the clone: c * c saves c, whose bytes are its own since
 * c += 100. Backward's copy of the saved c is c's storage, not a copy-on-write share with h. */
static void clone_saved_workload(void) {
  gs_tensor x = leaf3("x");
  gs_tensor h = named(gs_mul_scalar(x, 2.0), "h");
  gs_tensor c = named(gs_clone(h), "c");
  gs_tensor d = named(gs_detach(h), "d");
  gs_add_scalar_(c, 100.0);
  gs_mul_scalar_(d, 10.0);
  gs_tensor cc = gs_mul(c, c);
  gs_tensor loss = gs_sum(cc, NULL, 0, false);
  gs_backward(loss);
  gs_tensor all[] = {x, h, c, d, cc, loss};
  for (guint i = 0; i < G_N_ELEMENTS(all); i++)
    gs_dispose(all[i]);
}

/* Two MulBackward nodes: x * w saves x and w, a * a saves a; the detached alias of a writes
 * into a, and the error must say which MulBackward. */
static void detach_bug_workload(void) {
  gs_tensor x = leaf3("x"), w = leaf3("w");
  gs_tensor a = named(gs_mul(x, w), "a");
  gs_tensor b = gs_mul(a, a);
  gs_tensor d = named(gs_detach(a), "d");
  gs_mul_scalar_(d, 0.5);
  gs_tensor loss = gs_sum(b, NULL, 0, false);
  gs_backward(loss);
  gs_tensor all[] = {x, w, a, b, d, loss};
  for (guint i = 0; i < G_N_ELEMENTS(all); i++)
    gs_dispose(all[i]);
}

/* Two writes through detached aliases that fail no check: p's alias writes before p * p
 * saves p (the graph used the new values: nothing to show), h's after h = 2x made it (the
 * output the graph holds changed under it: shown). */
static void silent_writes_workload(void) {
  gs_tensor x = leaf3("x");
  gs_tensor p = named(gs_mul_scalar(x, 3.0), "p");
  gs_tensor pd = named(gs_detach(p), "pd");
  gs_add_scalar_(pd, 1.0);
  gs_tensor pp = gs_mul(p, p);
  gs_tensor h = named(gs_mul_scalar(x, 2.0), "h");
  gs_tensor d = named(gs_detach(h), "d");
  gs_mul_scalar_(d, 10.0);
  gs_tensor all[] = {x, p, pd, pp, h, d};
  for (guint i = 0; i < G_N_ELEMENTS(all); i++)
    gs_dispose(all[i]);
}

/* Steps in scopes, each with views and detached writers of its tensors, one tensor a step
 * left to the caller on purpose, and a write through a view of a scoped tensor. */
static void leak_loop_workload(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 3);
  gs_tensor leaked[4];
  for (int step = 0; step < 4; step++) {
    gs_scope scope = gs_scope_begin("step");
    gs_tensor t = gs_randn(GS_F64, (int64_t[]){4, 3}, 2, &rng);
    gs_tensor row = gs_narrow(t, 0, 1, 2);
    gs_tensor alias = gs_detach(t);
    gs_add_scalar_(alias, 1.0);
    gs_mul_scalar_(row, 2.0); /* t, alias and row all see it */
    leaked[step] = gs_detach_from_scopes(gs_mul_scalar(t, 3.0));
    gs_scope_end(scope);
  }
  for (int i = 0; i < 4; i++)
    gs_dispose(leaked[i]);
}

/* ---- the oracle: what the raw events say ------------------------------------------------ */

typedef struct tensor_truth {
  guint64 storage;
  gboolean alive;
  guint32 holder;
  guint64 owner;
} tensor_truth;

typedef struct node_truth {
  char *kind;
  guint n_saved;
  guint64 *saved, *storages, *versions; /* per saved tensor: its storage and its version then */
} node_truth;

typedef struct oracle {
  GHashTable *tensors;  /* id -> tensor_truth */
  GHashTable *storages; /* alive storage ids */
  GHashTable *versions; /* storage -> version after its last write */
  GHashTable *writes;   /* storage -> in-place writes counted */
  GHashTable *nodes;    /* alive node id -> node_truth */
  GHashTable *composites; /* id -> tensor_truth (no storage): owners once an owner_change says */
  GHashTable *buffers;  /* alive storage -> the bytes it reads (a number per allocation): a
                         * clone's storage reads its source's until either materialises */
  guint64 next_buffer;
} oracle;

static void node_truth_free(gpointer p) {
  node_truth *n = p;
  g_free(n->kind);
  g_free(n->saved);
  g_free(n->storages);
  g_free(n->versions);
  g_free(n);
}

static void oracle_init(oracle *o) {
  o->tensors = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
  o->storages = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  o->versions = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
  o->writes = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
  o->nodes = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, node_truth_free);
  o->composites = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
  o->buffers = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
  o->next_buffer = 0;
}

static void oracle_clear(oracle *o) {
  g_hash_table_unref(o->tensors);
  g_hash_table_unref(o->storages);
  g_hash_table_unref(o->versions);
  g_hash_table_unref(o->writes);
  g_hash_table_unref(o->nodes);
  g_hash_table_unref(o->composites);
  g_hash_table_unref(o->buffers);
}

static guint64 *key(guint64 id) { return g_memdup2(&id, sizeof id); }

static guint64 lookup_u64(GHashTable *table, guint64 id) {
  guint64 *value = g_hash_table_lookup(table, &id);
  return value ? *value : 0;
}

static tensor_truth *tensor_of(oracle *o, guint64 id) {
  return g_hash_table_lookup(o->tensors, &id);
}

/* The owner the log last gave a tensor or a composite (a composite's first owner is not in
 * its composite_create: holder G_MAXUINT32 until an owner_change says). */
static tensor_truth *owned_of(oracle *o, guint64 id) {
  tensor_truth *t = tensor_of(o, id);
  return t ? t : g_hash_table_lookup(o->composites, &id);
}

static gboolean tensor_alive(oracle *o, guint64 id) {
  tensor_truth *t = tensor_of(o, id);
  return t && t->alive;
}

static void oracle_apply(oracle *o, const gs_trace_event *e, const gs_trace_reader *reader) {
  switch (e->kind) {
  case GS_TRACE_STORAGE_ALLOC:
  case GS_TRACE_STORAGE_SHARE:
  case GS_TRACE_STORAGE_MATERIALISE: {
    g_hash_table_add(o->storages, key(e->storage));
    guint64 buffer = e->kind == GS_TRACE_STORAGE_SHARE ? lookup_u64(o->buffers, e->source)
                                                       : ++o->next_buffer;
    g_hash_table_replace(o->buffers, key(e->storage), key(buffer));
    break;
  }
  case GS_TRACE_STORAGE_FREE:
    g_hash_table_remove(o->storages, &e->storage);
    g_hash_table_remove(o->buffers, &e->storage);
    break;
  case GS_TRACE_TENSOR_CREATE: {
    tensor_truth *t = g_new0(tensor_truth, 1);
    *t = (tensor_truth){e->storage, TRUE, e->holder, e->owner};
    g_hash_table_replace(o->tensors, key(e->tensor), t);
    break;
  }
  case GS_TRACE_TENSOR_DISPOSE: {
    tensor_truth *t = tensor_of(o, e->tensor);
    if (t)
      t->alive = FALSE;
    break;
  }
  case GS_TRACE_TENSOR_MOVE: {
    tensor_truth *from = tensor_of(o, e->tensor);
    g_assert_nonnull(from);
    tensor_truth *to = g_memdup2(from, sizeof *from);
    from->alive = FALSE;
    to->alive = TRUE;
    g_hash_table_replace(o->tensors, key(e->target), to);
    break;
  }
  case GS_TRACE_COMPOSITE_CREATE: {
    tensor_truth *c = g_new0(tensor_truth, 1);
    *c = (tensor_truth){0, TRUE, G_MAXUINT32, 0};
    g_hash_table_replace(o->composites, key(e->object), c);
    break;
  }
  case GS_TRACE_OWNER_CHANGE: {
    tensor_truth *t = owned_of(o, e->object);
    if (t)
      t->holder = e->holder, t->owner = e->owner;
    break;
  }
  case GS_TRACE_INPLACE_WRITE: {
    g_hash_table_replace(o->versions, key(e->storage), key(e->version));
    g_hash_table_replace(o->writes, key(e->storage), key(lookup_u64(o->writes, e->storage) + 1));
    break;
  }
  case GS_TRACE_NODE_CREATE: {
    node_truth *n = g_new0(node_truth, 1);
    n->kind = g_strdup(gs_trace_reader_string(reader, e->name));
    n->n_saved = e->n_saved;
    n->saved = g_memdup2(e->saved, sizeof(guint64) * e->n_saved);
    n->storages = g_new0(guint64, e->n_saved);
    n->versions = g_new0(guint64, e->n_saved);
    for (guint i = 0; i < e->n_saved; i++) {
      tensor_truth *t = tensor_of(o, e->saved[i]);
      n->storages[i] = t ? t->storage : 0;
      n->versions[i] = lookup_u64(o->versions, n->storages[i]);
    }
    g_hash_table_replace(o->nodes, key(e->node), n);
    break;
  }
  case GS_TRACE_NODE_RELEASE: g_hash_table_remove(o->nodes, &e->node); break;
  default: break;
  }
}

/* ---- checking one event's facts -------------------------------------------------------- */

/* "#N" for a storage, not followed by more of a number or handle ("#5" is not in "#52"). */
static gboolean says_storage(const char *text, guint64 id) {
  g_autofree char *needle = g_strdup_printf("#%" G_GUINT64_FORMAT, id);
  for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle)) {
    char next = p[strlen(needle)];
    if (!g_ascii_isdigit(next) && next != '.')
      return TRUE;
  }
  return FALSE;
}

typedef struct checked {
  guint events, facts, aliases, failing;
} checked;

static void fail_fact(const char *why, guint64 index, const char *text,
                      const gs_explain_fact *f) {
  g_error("event %" G_GUINT64_FORMAT ": %s (fact kind %d, id %" G_GUINT64_FORMAT
          ", storage %" G_GUINT64_FORMAT ", text \"%s\") in: %s",
          index, why, f->kind, f->id, f->storage, f->text, text);
}

/* Facts of the state before the event, checked before the oracle applies it. */
static void check_before(oracle *o, guint64 index, const char *text, GArray *facts) {
  for (guint i = 0; i < facts->len; i++) {
    const gs_explain_fact *f = &g_array_index(facts, gs_explain_fact, i);
    if (!f->before)
      continue;
    switch (f->kind) {
    case GS_FACT_TENSOR:
      if (!tensor_alive(o, f->id))
        fail_fact("names a tensor not alive before the event", index, text, f);
      break;
    case GS_FACT_NODE:
      if (!g_hash_table_contains(o->nodes, &f->id))
        fail_fact("names a node not alive before the event", index, text, f);
      break;
    case GS_FACT_OWNER: {
      tensor_truth *t = owned_of(o, f->id);
      if (t && t->holder != G_MAXUINT32 && (t->holder != f->holder || t->owner != f->value))
        fail_fact("gives a previous owner the log does not", index, text, f);
      break;
    }
    case GS_FACT_RANGE: /* the programs here open no ranges: tests/oracle checks them */
      fail_fact("a range in a program that opened none", index, text, f);
      break;
    default: fail_fact("a fact of this kind is never about the state before", index, text, f);
    }
  }
}

static void check_after(oracle *o, const gs_trace_event *e, guint64 index, const char *text,
                        GArray *facts, checked *count) {
  gboolean has_version = FALSE, has_created = FALSE;
  g_autoptr(GHashTable) aliases = g_hash_table_new(g_int64_hash, g_int64_equal);
  for (guint i = 0; i < facts->len; i++) {
    const gs_explain_fact *f = &g_array_index(facts, gs_explain_fact, i);
    count->facts++;
    if (!f->text || !strstr(text, f->text))
      fail_fact("the sentence does not say it", index, text, f);
    if (f->before)
      continue;
    switch (f->kind) {
    case GS_FACT_TENSOR: {
      char h[32];
      if (!strstr(f->text, gs_format_handle(f->id, h, sizeof h)))
        fail_fact("a tensor's words lack its handle", index, text, f);
      if (!tensor_alive(o, f->id))
        fail_fact("names a tensor that is not alive", index, text, f);
      if (f->storage && tensor_of(o, f->id)->storage != f->storage)
        fail_fact("puts a tensor on a storage it is not on", index, text, f);
      if (f->storage && !says_storage(text, f->storage))
        fail_fact("puts a tensor on a storage it does not name", index, text, f);
      has_created |= e->kind == GS_TRACE_TENSOR_CREATE && f->id == e->tensor &&
                     f->storage == e->storage;
      break;
    }
    case GS_FACT_STORAGE:
      if (!says_storage(f->text, f->id) || !says_storage(text, f->id))
        fail_fact("a storage not named as #N", index, text, f);
      if (!g_hash_table_contains(o->storages, &f->id) && e->kind != GS_TRACE_STORAGE_FREE)
        fail_fact("names a storage that is not alive", index, text, f);
      break;
    case GS_FACT_VERSION: {
      g_autofree char *words = g_strdup_printf("version %" G_GUINT64_FORMAT, f->value);
      if (e->kind != GS_TRACE_INPLACE_WRITE || f->storage != e->storage || f->id != e->tensor)
        fail_fact("a version fact about another write", index, text, f);
      /* Every write bumps the storage's counter by one, whichever alias it went through. */
      if (lookup_u64(o->versions, f->storage) != f->value ||
          lookup_u64(o->writes, f->storage) != f->value)
        fail_fact("a version the writes did not make", index, text, f);
      if (!strstr(text, words))
        fail_fact("the version is not in the sentence", index, text, f);
      has_version = TRUE;
      break;
    }
    case GS_FACT_ALIAS: {
      tensor_truth *t = tensor_of(o, f->id);
      if (!t || !t->alive || t->storage != e->storage || f->id == e->tensor)
        fail_fact("an alias that does not share the written storage", index, text, f);
      g_hash_table_add(aliases, (gpointer)&f->id);
      count->aliases++;
      break;
    }
    case GS_FACT_NODE: {
      node_truth *n = g_hash_table_lookup(o->nodes, &f->id);
      g_autofree char *words =
          n ? g_strdup_printf("%s #%" G_GUINT64_FORMAT, n->kind, f->id) : NULL;
      if (!n || g_strcmp0(words, f->text) != 0)
        fail_fact("names a node that is not alive, or by another kind", index, text, f);
      break;
    }
    case GS_FACT_SAVED_VERSION: {
      node_truth *n = g_hash_table_lookup(o->nodes, &f->id);
      gboolean found = FALSE;
      for (guint k = 0; n && k < n->n_saved; k++)
        found |= n->saved[k] == f->tensor && n->storages[k] == f->storage &&
                 n->versions[k] == f->value;
      if (!found)
        fail_fact("the node did not save that tensor on that storage at that version", index,
                  text, f);
      if (lookup_u64(o->versions, f->storage) == f->value)
        fail_fact("says backward will fail while the versions agree", index, text, f);
      count->failing++;
      break;
    }
    case GS_FACT_OWNER: {
      tensor_truth *t = owned_of(o, f->id);
      if (!t || t->holder != f->holder || t->owner != f->value)
        fail_fact("gives an owner the log does not", index, text, f);
      break;
    }
    case GS_FACT_SHARED_BYTES: {
      /* It reads bytes some other alive storage reads too (that one, if named). */
      guint64 buffer = lookup_u64(o->buffers, f->id);
      gboolean shared = FALSE;
      GHashTableIter it;
      gpointer k, v;
      g_hash_table_iter_init(&it, o->buffers);
      while (buffer && g_hash_table_iter_next(&it, &k, &v))
        shared |= *(guint64 *)k != f->id && *(guint64 *)v == buffer &&
                  (!f->storage || *(guint64 *)k == f->storage);
      if (!shared)
        fail_fact("says a storage shares bytes copy-on-write that it does not share", index,
                  text, f);
      break;
    }
    case GS_FACT_SAVED_BY: {
      node_truth *n = g_hash_table_lookup(o->nodes, &f->id);
      gboolean found = FALSE;
      for (guint k = 0; n && k < n->n_saved; k++)
        found |= n->saved[k] == f->tensor && n->storages[k] == f->storage;
      if (!found)
        fail_fact("the node did not save that tensor from that storage", index, text, f);
      break;
    }
    /* The programs here push no saved-tensor hooks and open no ranges: tests/oracle checks
     * these against the live engine. */
    case GS_FACT_PACKED:
    case GS_FACT_UNPACKED:
    case GS_FACT_RANGE: fail_fact("a hook or range in a program that used none", index, text, f);
    }
  }
  if (e->kind == GS_TRACE_TENSOR_CREATE && !has_created)
    g_error("event %" G_GUINT64_FORMAT ": a creation that does not say the tensor's storage: %s",
            index, text);
  if (e->kind != GS_TRACE_INPLACE_WRITE)
    return;
  if (!has_version)
    g_error("event %" G_GUINT64_FORMAT ": an in-place write without its version: %s", index,
            text);
  /* Every alive alias of the written storage is named. */
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init(&it, o->tensors);
  while (g_hash_table_iter_next(&it, &k, &v)) {
    const tensor_truth *t = v;
    guint64 id = *(guint64 *)k;
    if (t->alive && t->storage == e->storage && id != e->tensor &&
        !g_hash_table_contains(aliases, &id)) {
      char h[32];
      g_error("event %" G_GUINT64_FORMAT ": the write shows in tensor %s, which is not named: %s",
              index, gs_format_handle(id, h, sizeof h), text);
    }
  }
}

/* Every event of the log at path, explained and checked. */
static checked check_log(const char *path) {
  g_autoptr(GBytes) bytes = read_log_bytes(path);
  g_autoptr(gs_trace_model) m = model_from_bytes(bytes, 64); /* seeks cross keyframes */
  g_assert_null(gs_trace_model_problem(m));
  gs_trace_reader *reader = reader_of_bytes(bytes);
  oracle o;
  oracle_init(&o);
  checked count = {0};
  guint64 index = 0;
  gs_trace_event e;
  while (gs_trace_reader_next(reader, &e) == GS_TRACE_EVENT) {
    if (gs_trace_kind_is_table(e.kind))
      continue;
    GArray *facts = NULL;
    g_autofree char *text = gs_trace_model_explain_facts(m, index, &facts);
    g_assert_nonnull(text);
    g_assert_cmpint(gs_trace_model_kind_at(m, index), ==, e.kind);
    check_before(&o, index, text, facts);
    oracle_apply(&o, &e, reader);
    check_after(&o, &e, index, text, facts, &count);
    g_array_unref(facts);
    index++;
    count.events++;
  }
  g_assert_cmpuint(index, ==, gs_trace_model_n_events(m));
  oracle_clear(&o);
  gs_trace_reader_free(reader);
  return count;
}

/* ---- the CLI's graph ------------------------------------------------------------------ */

static char *run_cli(const char *const *args) {
  const char *cli = g_getenv("GS_CLI");
  g_assert_nonnull(cli);
  g_autoptr(GPtrArray) argv = g_ptr_array_new();
  g_ptr_array_add(argv, (gpointer)cli);
  for (guint i = 0; args[i]; i++)
    g_ptr_array_add(argv, (gpointer)args[i]);
  g_ptr_array_add(argv, NULL);
  char *out = NULL;
  int status = 0;
  g_autoptr(GError) error = NULL;
  /* The test's own environment (the sanitizers' options, the library path), in English. */
  g_auto(GStrv) env = g_get_environ();
  env = g_environ_setenv(env, "LANGUAGE", "C", TRUE);
  env = g_environ_setenv(env, "LANG", "C.UTF-8", TRUE);
  g_assert_true(g_spawn_sync(NULL, (char **)argv->pdata, env, G_SPAWN_STDERR_TO_DEV_NULL, NULL,
                             NULL, &out, NULL, &status, &error));
  g_assert_no_error(error);
  g_assert_true(g_spawn_check_wait_status(status, NULL));
  return out;
}

/* The DOT node id ("i3") of the node whose label starts with prefix, or NULL. */
static char *dot_node(const char *dot, const char *prefix) {
  g_autofree char *escaped = g_regex_escape_string(prefix, -1);
  g_autofree char *pattern = g_strdup_printf("^  *\"(i[0-9]+)\" \\[label=\"%s", escaped);
  g_autoptr(GRegex) re = g_regex_new(pattern, G_REGEX_MULTILINE, 0, NULL);
  g_autoptr(GMatchInfo) match = NULL;
  return g_regex_match(re, dot, 0, &match) ? g_match_info_fetch(match, 1) : NULL;
}

/* The seq of the first event of kind whose op or name is name (NULL: any). */
static guint64 seq_of(gs_trace_model *m, gs_trace_kind kind, const char *name, guint nth) {
  guint64 at = 0;
  for (guint i = 0; i <= nth; i++) {
    at = find_event(m, i ? at + 1 : 0, kind, name);
    g_assert_cmpuint(at, !=, G_MAXUINT64);
  }
  return gs_trace_model_seq_at(m, at);
}

/* Dark orange pixels (the renderer's 0xcd6600 for an alias's write) in a PNG. */
static guint orange_pixels(const char *png) {
  cairo_surface_t *s = cairo_image_surface_create_from_png(png);
  g_assert_cmpint(cairo_surface_status(s), ==, CAIRO_STATUS_SUCCESS);
  int w = cairo_image_surface_get_width(s), h = cairo_image_surface_get_height(s);
  int stride = cairo_image_surface_get_stride(s);
  const guint8 *data = cairo_image_surface_get_data(s);
  guint n = 0;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      guint32 p = *(const guint32 *)(data + y * stride + 4 * x);
      int r = (p >> 16) & 0xff, g = (p >> 8) & 0xff, b = p & 0xff;
      /* Its hue (green half of red), not orange's (0xffa500) nor its blends with black. */
      n += r >= 0x90 && r <= 0xe8 && b < 0x20 && ABS(2 * g - r) < r / 10;
    }
  cairo_surface_destroy(s);
  return n;
}

/* At event seq, the graph draws the alias labelled alias_label with a "wrote vN" edge into the
 * item labelled target_label; and export-graph's PNG has the edge's colour, which the graph
 * at before_seq (before the write) has not. */
static void assert_alias_drawn(const char *log, guint64 seq, guint64 before_seq,
                               const char *alias_label, const char *target_label,
                               guint64 version) {
  g_autofree char *at = g_strdup_printf("%" G_GUINT64_FORMAT, seq);
  g_autofree char *dot = run_cli((const char *[]){"export-dot", log, "--at", at, NULL});
  g_autofree char *alias = dot_node(dot, alias_label);
  g_autofree char *target = dot_node(dot, target_label);
  if (!alias || !target)
    g_error("no node labelled %s or %s at event %s in:\n%s", alias_label, target_label, at, dot);
  g_autofree char *edge = g_strdup_printf(
      "\"%s\" -> \"%s\" [color=darkorange3, fontcolor=darkorange3, penwidth=1.5, "
      "label=\"shares storage,\\nwrote v%" G_GUINT64_FORMAT "\"];",
      alias, target, version);
  if (!strstr(dot, edge))
    g_error("no edge %s in:\n%s", edge, dot);

  g_autofree char *dir = g_dir_make_tmp("gradscope-truth-XXXXXX", NULL);
  g_autofree char *png = g_build_filename(dir, "after.png", NULL);
  g_autofree char *png_before = g_build_filename(dir, "before.png", NULL);
  g_autofree char *at_before = g_strdup_printf("%" G_GUINT64_FORMAT, before_seq);
  g_free(run_cli((const char *[]){"export-graph", log, "--at", at, "-o", png, NULL}));
  g_free(run_cli((const char *[]){"export-graph", log, "--at", at_before, "-o", png_before, NULL}));
  g_autofree char *dot_before =
      run_cli((const char *[]){"export-dot", log, "--at", at_before, NULL});
  g_assert_null(strstr(dot_before, "darkorange3"));
  /* A few anti-aliased pixels where red borders meet orange fills may come close to the
   * edge's colour: the edge and its label add far more. */
  guint after_pixels = orange_pixels(png), before_pixels = orange_pixels(png_before);
  g_test_message("dark orange pixels: %u after the write, %u before", after_pixels,
                 before_pixels);
  g_assert_cmpuint(after_pixels, >, before_pixels + 30);
  g_remove(png);
  g_remove(png_before);
  g_rmdir(dir);
}

/* ---- the tests ------------------------------------------------------------------------- */

static void test_clone_detach(void) {
  gs_set_error_handler(gs_error_handler_return, NULL, NULL);
  char *path = record_log(clone_detach_workload);
  checked c = check_log(path);
  g_assert_cmpuint(c.aliases, >=, 1); /* h, named when d writes */
  g_assert_cmpuint(c.failing, >=, 1); /* MulBackward saved h at version 0 */

  g_autoptr(GBytes) bytes = read_log_bytes(path);
  g_autoptr(gs_trace_model) m = model_from_bytes(bytes, 0);
  /* d's write: its sentence names h, and what MulBackward saved, by the id the log gives it. */
  guint64 write = find_event(m, 0, GS_TRACE_INPLACE_WRITE, "mul_scalar_");
  g_autofree char *text = gs_trace_model_explain(m, write);
  g_assert_nonnull(strstr(text, "\"d\" is now at version 1; tensor #"));
  g_assert_nonnull(strstr(text, " \"h\" shares its storage and sees the write; MulBackward #"));
  /* c's write is into its own bytes (copy-on-write ended first): no one else sees it. */
  g_autofree char *clone_write =
      gs_trace_model_explain(m, find_event(m, 0, GS_TRACE_INPLACE_WRITE, "add_scalar_"));
  g_assert_null(strstr(clone_write, "shares its storage"));

  /* The engine's error names the same node as the log: "MulBackward #N as self (input 0)". */
  guint64 mul = find_event(m, 0, GS_TRACE_NODE_CREATE, "MulBackward");
  gs_trace_event e;
  g_assert_true(gs_trace_model_event(m, mul, &e));
  guint64 node = e.node;
  g_assert_true(gs_trace_model_event(m, find_event(m, 0, GS_TRACE_ERROR, NULL), &e));
  g_autofree char *said = g_strdup_printf("saved by MulBackward #%" G_GUINT64_FORMAT
                                          " as self (input 0) is at version 1",
                                          node);
  g_assert_nonnull(strstr(e.text, said));

  /* The graph names it the same way and draws d writing into the saved h. */
  guint64 write_seq = gs_trace_model_seq_at(m, write);
  g_autofree char *at = g_strdup_printf("%" G_GUINT64_FORMAT, write_seq);
  g_autofree char *dot = run_cli((const char *[]){"export-dot", path, "--at", at, NULL});
  g_autofree char *label = g_strdup_printf("[label=\"MulBackward #%" G_GUINT64_FORMAT "\"", node);
  g_assert_nonnull(strstr(dot, label));
  assert_alias_drawn(path, write_seq, write_seq - 1, "d\\n", "saved h\\n", 1);
  remove_log(path);
}

/* Backward unpacks what MulBackward saved (c) as a new handle over c's own storage: the log
 * says it is a view of c, and no sentence calls it a copy-on-write share of h's bytes. */
static void test_clone_saved_in_backward(void) {
  char *path = record_log(clone_saved_workload);
  check_log(path);
  g_autoptr(GBytes) bytes = read_log_bytes(path);
  g_autoptr(gs_trace_model) m = model_from_bytes(bytes, 0);
  guint64 c_id = 0, unpacked = 0;
  gs_trace_event e;
  for (guint64 i = 0; i < gs_trace_model_n_events(m); i++) {
    if (gs_trace_model_kind_at(m, i) != GS_TRACE_TENSOR_CREATE)
      continue;
    g_assert_true(gs_trace_model_event(m, i, &e));
    const char *op = gs_trace_model_string(m, e.op);
    if (!strcmp(op, "clone") && !c_id)
      c_id = e.tensor;
    if (strcmp(op, "MulBackward") != 0)
      continue;
    unpacked++;
    g_assert_cmpuint(e.origin, ==, 1); /* a view of the saved tensor */
    g_assert_cmpuint(e.source, ==, c_id);
    g_autofree char *text = gs_trace_model_explain(m, i);
    g_assert_null(strstr(text, "copy-on-write"));
    g_assert_nonnull(strstr(text, "\"c\""));
  }
  g_assert_cmpuint(unpacked, ==, 2); /* self and other */
  remove_log(path);
}

static void test_detach_bug(void) {
  gs_set_error_handler(gs_error_handler_return, NULL, NULL);
  char *path = record_log(detach_bug_workload);
  checked c = check_log(path);
  g_assert_cmpuint(c.aliases, >=, 1);
  g_assert_cmpuint(c.failing, >=, 1);
  g_autoptr(GBytes) bytes = read_log_bytes(path);
  g_autoptr(gs_trace_model) m = model_from_bytes(bytes, 0);
  /* Two MulBackward nodes: the error names the second (a * a), not the first (x * w). */
  gs_trace_event e;
  g_assert_true(gs_trace_model_event(m, find_event(m, 0, GS_TRACE_NODE_CREATE, "MulBackward"),
                                     &e));
  guint64 first = e.node;
  guint64 second_at = find_event(m, find_event(m, 0, GS_TRACE_NODE_CREATE, "MulBackward") + 1,
                                 GS_TRACE_NODE_CREATE, "MulBackward");
  g_assert_true(gs_trace_model_event(m, second_at, &e));
  guint64 second = e.node;
  g_assert_cmpuint(first, !=, second);
  g_assert_true(gs_trace_model_event(m, find_event(m, 0, GS_TRACE_ERROR, NULL), &e));
  g_autofree char *said = g_strdup_printf("saved by MulBackward #%" G_GUINT64_FORMAT " as self",
                                          second);
  g_assert_nonnull(strstr(e.text, said));
  g_assert_nonnull(strstr(e.text, "through a detached alias"));
  guint64 write_seq = seq_of(m, GS_TRACE_INPLACE_WRITE, "mul_scalar_", 0);
  assert_alias_drawn(path, write_seq, write_seq - 1, "d\\n", "saved a\\n", 1);
  remove_log(path);
}

/* No version check fails: the alias that wrote into the output after the forward made it is
 * drawn all the same; the one that wrote before the save is not. */
static void test_silent_writes(void) {
  char *path = record_log(silent_writes_workload);
  check_log(path);
  g_autoptr(GBytes) bytes = read_log_bytes(path);
  g_autoptr(gs_trace_model) m = model_from_bytes(bytes, 0);
  guint64 write_seq = seq_of(m, GS_TRACE_INPLACE_WRITE, "mul_scalar_", 0);
  g_autofree char *at = g_strdup_printf("%" G_GUINT64_FORMAT, write_seq);
  g_autofree char *dot = run_cli((const char *[]){"export-dot", path, "--at", at, NULL});
  g_assert_null(strstr(dot, "color=red"));
  g_assert_null(strstr(dot, "label=\"pd\\n")); /* not drawn: it wrote before the save */
  g_auto(GStrv) edges = g_strsplit(dot, "label=\"shares storage,", -1);
  g_assert_cmpuint(g_strv_length(edges), ==, 2); /* one alias edge */
  assert_alias_drawn(path, write_seq, write_seq - 1, "d\\n", "h\\n", 1);
  remove_log(path);
}

static void test_leak_loop(void) {
  char *path = record_log(leak_loop_workload);
  checked c = check_log(path);
  /* Each step: the detached write shows in t and the view; the view's write in t and alias. */
  g_assert_cmpuint(c.aliases, ==, 4 * 4);
  remove_log(path);
}

/* examples/tensor-tour, recorded as any program is: GS_TRACE in its environment. */
static void test_tensor_tour(void) {
  const char *tour = g_getenv("GS_TENSOR_TOUR");
  g_assert_nonnull(tour);
  g_autofree char *dir = g_dir_make_tmp("gradscope-truth-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "tour.gstrace", NULL);
  g_autofree char *trace = g_strdup_printf("GS_TRACE=%s", path);
  const char *argv[] = {tour, NULL};
  const char *env[] = {trace, "OPENBLAS_NUM_THREADS=1", NULL};
  int status = 0;
  g_autoptr(GError) error = NULL;
  g_assert_true(g_spawn_sync(NULL, (char **)argv, (char **)env,
                             G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                             NULL, NULL, &status, &error));
  g_assert_no_error(error);
  g_assert_true(g_spawn_check_wait_status(status, NULL));
  checked c = check_log(path);
  g_assert_cmpuint(c.events, >, 100);
  g_assert_cmpuint(c.aliases, >=, 1); /* its detach section writes through the alias */
  g_remove(path);
  g_rmdir(dir);
}

/* A guided tour's program (examples/tours/): the sentences its steps show are checked with
 * every other sentence of its log. */
/* The version tour's last step: alias += 1 went through a's bytes, so the graph shows a's
 * values as the program sees them (it asserts a[0] == 2), not those a was made with. */
static void assert_version_tour_values(const char *path) {
  g_autoptr(GBytes) bytes = read_log_bytes(path);
  g_autoptr(gs_trace_model) m = model_from_bytes(bytes, 0);
  guint64 end = G_MAXUINT64;
  for (guint64 i = 0; i < gs_trace_model_n_events(m); i++)
    if (gs_trace_model_kind_at(m, i) == GS_TRACE_BACKWARD_END)
      end = i;
  g_assert_cmpuint(end, !=, G_MAXUINT64);
  g_autofree char *at = g_strdup_printf("%" G_GUINT64_FORMAT, gs_trace_model_seq_at(m, end));
  g_autofree char *dot = run_cli((const char *[]){"export-dot", path, "--at", at, NULL});
  g_assert_nonnull(strstr(dot, "label=\"a\\n(3)\\ndata [2, 3, 4]\\n"));
  g_assert_nonnull(strstr(dot, "label=\"alias\\n(3)\\ndata [2, 3, 4]\\n"));
  g_assert_null(strstr(dot, "data [1, 2, 3]"));
}

static void test_tour_program(gconstpointer data) {
  const char *program = data;
  g_autofree char *exe = g_build_filename(g_getenv("GS_TOUR_DIR"), program, NULL);
  g_autofree char *dir = g_dir_make_tmp("gradscope-truth-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "tour.gstrace", NULL);
  g_autofree char *trace = g_strdup_printf("GS_TRACE=%s", path);
  const char *argv[] = {exe, NULL};
  const char *env[] = {trace, "GS_TRACE_VALUES=16", "OPENBLAS_NUM_THREADS=1", NULL};
  int status = 0;
  g_autoptr(GError) error = NULL;
  g_assert_true(g_spawn_sync(NULL, (char **)argv, (char **)env, G_SPAWN_STDOUT_TO_DEV_NULL,
                             NULL, NULL, NULL, NULL, &status, &error));
  g_assert_no_error(error);
  g_assert_true(g_spawn_check_wait_status(status, NULL));
  checked c = check_log(path);
  g_assert_cmpuint(c.events, >, 10);
  if (!strcmp(program, "tour-version"))
    assert_version_tour_values(path);
  g_remove(path);
  g_rmdir(dir);
}

int main(int argc, char **argv) {
  static const char *const tour_programs[] = {"tour-storage", "tour-clone-detach",
                                              "tour-version", "tour-micrograd",
                                              "tour-scopes", "tour-packed", "tour-memory"};
  g_test_init(&argc, &argv, NULL);
  for (gsize i = 0; i < G_N_ELEMENTS(tour_programs); i++) {
    g_autofree char *name = g_strdup_printf("/explain-truth/%s", tour_programs[i]);
    g_test_add_data_func(name, tour_programs[i], test_tour_program);
  }
  g_test_add_func("/explain-truth/clone-detach", test_clone_detach);
  g_test_add_func("/explain-truth/clone-saved-in-backward", test_clone_saved_in_backward);
  g_test_add_func("/explain-truth/detach-bug", test_detach_bug);
  g_test_add_func("/explain-truth/silent-writes", test_silent_writes);
  g_test_add_func("/explain-truth/leak-loop", test_leak_loop);
  g_test_add_func("/explain-truth/tensor-tour", test_tensor_tour);
  return g_test_run();
}
