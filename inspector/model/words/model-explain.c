/* model-explain.c: one sentence per event in plain words, for the time scrubber ("clone:
 * tensor #12.1 has storage #5, which shares the bytes of #7.1's storage #4 copy-on-write;
 * nothing was copied"). Each kind reads the event's fields and the state just after it; what
 * the state no longer shows (bytes freed, what a scope's end disposed) comes from the memory
 * series and the events before. */
#include "model-private.h"
#include <inttypes.h>
#include <string.h>

#include <glib/gi18n-lib.h>
#include <gradscope/scope.h>

#include "dispose-reason.h"
#include "dist-words.h"
#include "escape.h"
#include "event-fields.h"
#include "packed-steps.h"

/* How far back a scope's end looks for the disposals it made. */
#define SCOPE_END_LOOKBACK 100000

/* One explanation being written: the facts it states are collected as its words are made
 * (facts is NULL when nobody asked for them). */
typedef struct explain {
  gs_trace_model *m;
  GArray *facts;
  GPtrArray *clipped; /* names shortened for this sentence (owned), or NULL */
} explain;

/* name as a sentence shows it: clipped past GS_TEXT_SHOWN_MAX characters, the copy kept until
 * the sentence is done. Short names (all real ones) are returned as they are. */
static const char *shown(explain *x, const char *name) {
  if (!name || strlen(name) <= GS_TEXT_SHOWN_MAX) /* bytes: at least as many as characters */
    return name;
  if (!x->clipped)
    x->clipped = g_ptr_array_new_with_free_func(g_free);
  char *clipped = gs_text_clip(name, GS_TEXT_SHOWN_MAX);
  g_ptr_array_add(x->clipped, clipped);
  return clipped;
}

static void fact_clear(gpointer p) { g_free(((gs_explain_fact *)p)->text); }

static void add_fact(explain *x, gs_explain_fact fact, const char *text) {
  if (!x->facts)
    return;
  fact.text = g_strdup(text);
  g_array_append_val(x->facts, fact);
}

/* "tensor #3.1" or, when user code named it, "tensor #3.1 "w"". The sentence says it is on
 * storage (0: it says nothing of its storage); before: r is the state before the event. */
static char *plain_tensor_words(const gs_replay *r, guint64 id) {
  char h[32];
  gs_format_handle(id, h, sizeof h);
  const char *name = r ? gs_replay_tensor_name(r, id) : NULL;
  if (name && *name) {
    g_autofree char *clipped = gs_text_clip(name, GS_TEXT_SHOWN_MAX);
    return g_strdup_printf(_("tensor %s \"%s\""), h, clipped);
  }
  return g_strdup_printf(_("tensor %s"), h);
}

static char *tensor_fact(explain *x, const gs_replay *r, guint64 id, guint64 storage,
                         gboolean before) {
  char *words = plain_tensor_words(r, id);
  if (id)
    add_fact(x, (gs_explain_fact){GS_FACT_TENSOR, before, .id = id, .storage = storage}, words);
  return words;
}

/* "packed sequence #0.1", "batch #3.1": a composite by its kind and handle. */
static char *composite_words(guint32 object_kind, guint64 id) {
  char h[32];
  gs_format_handle(id, h, sizeof h);
  if (object_kind == GS_OBJECT_PACKED_SEQUENCE)
    return g_strdup_printf(_("packed sequence %s"), h);
  if (object_kind == GS_OBJECT_BATCH)
    return g_strdup_printf(_("batch %s"), h);
  return g_strdup_printf(_("composite %s"), h);
}

static char *tensor_words(explain *x, const gs_replay *r, guint64 id) {
  return tensor_fact(x, r, id, 0, FALSE);
}

/* A storage the sentence names with "#N" in its own words. */
static guint64 storage_fact(explain *x, guint64 id) {
  g_autofree char *text = g_strdup_printf("#%" G_GUINT64_FORMAT, id);
  add_fact(x, (gs_explain_fact){GS_FACT_STORAGE, .id = id}, text);
  return id;
}

/* "MulBackward #4": a node as the engine's errors and the graph name it. */
static void node_fact(explain *x, const char *kind, guint64 id, gboolean before) {
  g_autofree char *text = g_strdup_printf("%s #%" G_GUINT64_FORMAT, shown(x, kind), id);
  add_fact(x, (gs_explain_fact){GS_FACT_NODE, before, .id = id}, text);
}

static char *scope_words(const gs_trace_model *m, const gs_replay *r, guint64 id) {
  char h[32];
  gs_format_handle(id, h, sizeof h);
  const gs_replay_scope *s = gs_trace_model_scope_in(m, r, id);
  g_autofree char *name = gs_text_clip(s ? s->name : "?", GS_TEXT_SHOWN_MAX);
  return g_strdup_printf(_("scope \"%s\" %s"), name, h);
}

/* Who holds object, from a holder and owner (the words of gs_trace_model_owner_label). */
static char *holder_words(explain *x, const gs_replay *r, guint64 object, guint32 holder,
                          guint64 owner, gboolean before) {
  gs_replay_object probe = {.holder = holder, .owner = owner};
  char *words = gs_trace_model_owner_label(x->m, r, &probe);
  add_fact(x, (gs_explain_fact){GS_FACT_OWNER, before, .id = object, .holder = holder,
                                .value = owner}, words);
  return words;
}

static char *shape_words(const gs_trace_event *e) {
  GString *s = g_string_new("[");
  for (int i = 0; i < e->ndim; i++)
    g_string_append_printf(s, "%s%" G_GINT64_FORMAT, i ? ", " : "", e->shape[i]);
  g_string_append_printf(s, "] %s", gs_dtype_name((gs_dtype)e->dtype));
  return g_string_free(s, FALSE);
}

static char *explain_create(explain *x, const gs_replay *r, const gs_trace_event *e) {
  gs_trace_model *m = x->m;
  const char *op = gs_trace_model_string(m, e->op);
  const gs_replay_object *source = gs_replay_object_find(r, e->source);
  g_autofree char *shape = shape_words(e);
  switch (e->origin) {
  case 1: {
    g_autofree char *t = tensor_fact(x, r, e->tensor, e->storage, FALSE);
    if (!source) { /* made from a handle already gone (backward's copy of a saved tensor) */
      char h[32];
      gs_format_handle(e->source, h, sizeof h);
      return g_strdup_printf(_("view: %s made %s %s over storage #%" PRIu64 ", the storage "
                               "of tensor %s, which is no longer alive; no bytes were copied"),
                             op, t, shape, storage_fact(x, e->storage), h);
    }
    if (source->storage != e->storage) { /* what an in-place op saved of its input first */
      g_autofree char *src = tensor_fact(x, r, e->source, 0, FALSE);
      return g_strdup_printf(_("view: %s made %s %s over storage #%" PRIu64 ", which keeps "
                               "the values %s had before it was written in place; no bytes "
                               "were copied"),
                             op, t, shape, storage_fact(x, e->storage), src);
    }
    g_autofree char *src = tensor_fact(x, r, e->source, e->storage, FALSE);
    return g_strdup_printf(_("view: %s made %s %s, a view of %s sharing storage #%"
                             PRIu64 "; no bytes were copied"),
                           op, t, shape, src, storage_fact(x, e->storage));
  }
  case 2: {
    g_autofree char *t = tensor_fact(x, r, e->tensor, e->storage, FALSE);
    g_autofree char *src = tensor_fact(x, r, e->source, e->storage, FALSE);
    return g_strdup_printf(_("detach: %s shares storage #%" PRIu64 " and its version "
                             "counter with %s, but is a new leaf outside the graph"),
                           t, storage_fact(x, e->storage), src);
  }
  case 3: { /* a storage of its own over the source's bytes: storage_share said which */
    g_autofree char *t = tensor_fact(x, r, e->tensor, e->storage, FALSE);
    add_fact(x, (gs_explain_fact){GS_FACT_SHARED_BYTES, .id = e->storage,
                                  .storage = source && source->storage != e->storage
                                                 ? source->storage : 0},
             _("copy-on-write"));
    if (source && source->storage != e->storage) {
      g_autofree char *src = tensor_fact(x, r, e->source, source->storage, FALSE);
      return g_strdup_printf(_("clone: %s has storage #%" PRIu64 ", which shares the bytes "
                               "of %s's storage #%" PRIu64 " copy-on-write; nothing was copied"),
                             t, storage_fact(x, e->storage), src,
                             storage_fact(x, source->storage));
    }
    g_autofree char *src = tensor_words(x, r, e->source);
    return g_strdup_printf(_("clone: %s has storage #%" PRIu64 ", which shares the bytes of %s "
                             "copy-on-write; nothing was copied"),
                           t, storage_fact(x, e->storage), src);
  }
  default: {
    g_autofree char *t = tensor_fact(x, r, e->tensor, e->storage, FALSE);
    g_autofree char *owner = holder_words(x, r, e->tensor, e->holder, e->owner, FALSE);
    guint64 bytes = 0;
    gs_replay_storage(r, e->storage, &bytes, NULL);
    g_autofree char *size = g_format_size_full(bytes, G_FORMAT_SIZE_IEC_UNITS);
    return g_strdup_printf(_("%s created %s %s with storage #%" PRIu64 " (%s), held "
                             "by %s"),
                           *op ? op : _("an operation"), t, shape, storage_fact(x, e->storage),
                           size, owner);
  }
  }
}

/* The storage's version just before event `before` (0 before any in-place write). */
static guint64 version_before(gs_trace_model *m, GArray *writes, guint64 before) {
  guint64 version = 0;
  for (guint i = 0; i < writes->len && g_array_index(writes, guint64, i) < before; i++) {
    gs_trace_event w;
    if (model_decode(m, &m->query_decoder, g_array_index(writes, guint64, i), &w))
      version = w.version;
  }
  return version;
}

static gint node_by_id(gconstpointer a, gconstpointer b) {
  const gs_replay_node *x = *(gs_replay_node *const *)a, *y = *(gs_replay_node *const *)b;
  return x->id < y->id ? -1 : x->id > y->id;
}

/* The in-place geometry ops (gs_as_strided_): the same event as set_data, over the same bytes. */
static gboolean is_inplace_geometry_op(const char *op) {
  static const char *const ops[] = {"as_strided_", "t_",       "transpose_", "swapdims_",
                                    "swapaxes_",   "squeeze_", "unsqueeze_", "resize_"};
  for (size_t i = 0; op && i < G_N_ELEMENTS(ops); i++)
    if (strcmp(op, ops[i]) == 0)
      return TRUE;
  return FALSE;
}

/* An in-place write shows in every tensor on the storage: views, detached tensors, the
 * tensor they were detached from. A live node that saved one of them at an older version
 * will refuse to run backward. */
static char *explain_inplace(explain *x, const gs_replay *r, const gs_trace_event *e,
                             guint64 index) {
  gs_trace_model *m = x->m;
  /* The sentence names no storage: the version fact and the aliases say which. */
  g_autofree char *t = tensor_words(x, r, e->tensor);
  g_autofree char *version = g_strdup_printf("%" PRIu64, e->version);
  add_fact(x, (gs_explain_fact){GS_FACT_VERSION, .id = e->tensor, .storage = e->storage,
                                .value = e->version}, version);
  GString *s = g_string_new(NULL);
  g_string_printf(s, _("in-place %s: %s is now at version %" PRIu64),
                  gs_trace_model_string(m, e->op), t, e->version);
  g_autoptr(GArray) aliases = gs_replay_tensors_on_storage(r, e->storage, e->tensor);
  if (aliases->len > 0) {
    g_autoptr(GString) list = g_string_new(NULL);
    for (guint i = 0; i < aliases->len; i++) {
      guint64 alias = g_array_index(aliases, guint64, i);
      g_autofree char *words = tensor_words(x, r, alias);
      add_fact(x, (gs_explain_fact){GS_FACT_ALIAS, .id = alias, .storage = e->storage}, words);
      /* TRANSLATORS: between the tensors of a list ("tensor #2.1 "h", tensor #4.1"). */
      g_string_append_printf(list, "%s%s", i ? _(", ") : "", words);
    }
    /* TRANSLATORS: after "in-place mul_: tensor #3.1 "d" is now at version 1": the alive
     * tensors that view the same storage (views, detached tensors, what they came from). */
    if (is_inplace_geometry_op(gs_trace_model_string(m, e->op)))
      /* TRANSLATORS: as above, for an op that changes only a tensor's shape (unsqueeze_) */
      g_string_append_printf(s,
                             ngettext("; %s shares its storage: its version went up too, "
                                      "its values did not change",
                                      "; %s share its storage: their version went up too, "
                                      "their values did not change",
                                      aliases->len),
                             list->str);
    else
      g_string_append_printf(s,
                             ngettext("; %s shares its storage and sees the write",
                                      "; %s share its storage and see the write", aliases->len),
                             list->str);
  }
  g_autoptr(GArray) writes = model_storage_writes(m, e->storage);
  g_autoptr(GPtrArray) nodes = g_ptr_array_new();
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init(&it, r->nodes);
  while (g_hash_table_iter_next(&it, NULL, &value))
    g_ptr_array_add(nodes, value);
  g_ptr_array_sort(nodes, node_by_id); /* the same sentence from every copy of the state */
  for (guint k = 0, named = 0; k < nodes->len && named < 3; k++) {
    const gs_replay_node *n = nodes->pdata[k];
    if (n->saved_freed)
      continue;
    for (guint i = 0; i < n->n_saved; i++) {
      if (n->saved_storages[i] != e->storage)
        continue;
      guint64 created = gs_trace_model_find_seq(m, n->create_seq);
      if (created == G_MAXUINT64 || created > index)
        break;
      guint64 saved_version = version_before(m, writes, created);
      if (saved_version != e->version) {
        node_fact(x, n->kind, n->id, FALSE);
        /* Not a tensor fact: a saved tensor's handle may be gone while the node keeps it. */
        g_autofree char *saved = plain_tensor_words(r, n->saved[i]);
        add_fact(x, (gs_explain_fact){GS_FACT_SAVED_VERSION, .id = n->id, .tensor = n->saved[i],
                                      .storage = e->storage, .value = saved_version}, saved);
        /* TRANSLATORS: the node ("MulBackward", "#4"), the tensor it saved, and the version
         * of the storage when it saved it. */
        g_string_append_printf(s, _("; %s #%" PRIu64 " saved %s at version %" PRIu64
                                    " and will fail in backward"),
                               shown(x, n->kind), n->id, saved, saved_version);
      }
      named++;
      break;
    }
  }
  return g_string_free(s, FALSE);
}

/* What a scope's end disposed: the disposals recorded just before it on its thread. */
static char *explain_scope_end(gs_trace_model *m, const gs_replay *r, const gs_trace_event *e,
                               guint64 index) {
  g_autofree char *scope = scope_words(m, r, e->scope);
  guint disposed = 0;
  guint64 first = index;
  for (guint64 i = index; i-- > 0 && index - i <= SCOPE_END_LOOKBACK;) {
    if (gs_trace_model_thread_at(m, i) != e->thread)
      continue;
    gs_trace_kind kind = gs_trace_model_kind_at(m, i);
    if (kind == GS_TRACE_TENSOR_DISPOSE)
      disposed++;
    else if (kind != GS_TRACE_STORAGE_FREE && kind != GS_TRACE_NODE_RELEASE &&
             kind != GS_TRACE_NODE_FREE_SAVED)
      break;
    first = i;
  }
  guint64 before = first > 0 ? gs_trace_model_bytes_at(m, first - 1) : 0;
  guint64 after = gs_trace_model_bytes_at(m, index);
  g_autofree char *freed =
      g_format_size_full(before > after ? before - after : 0, G_FORMAT_SIZE_IEC_UNITS);
  if (disposed == 0)
    return g_strdup_printf(_("%s ended; it owned nothing any more"), scope);
  return g_strdup_printf(ngettext("%s ended and disposed %u tensor (%s freed)",
                                  "%s ended and disposed %u tensors (%s freed)", disposed),
                         scope, disposed, freed);
}

static const gs_replay_node *node_in(const gs_replay *r, guint64 id) {
  return g_hash_table_lookup(r->nodes, &id);
}

char *gs_trace_model_explain(gs_trace_model *m, guint64 index) {
  return gs_trace_model_explain_facts(m, index, NULL);
}

static char *explain_event(explain *x, guint64 index);

char *gs_trace_model_explain_facts(gs_trace_model *m, guint64 index, GArray **facts) {
  explain x = {m, NULL, NULL};
  if (facts) {
    x.facts = g_array_new(FALSE, TRUE, sizeof(gs_explain_fact));
    g_array_set_clear_func(x.facts, fact_clear);
  }
  char *text = explain_event(&x, index);
  if (x.clipped)
    g_ptr_array_free(x.clipped, TRUE);
  if (facts)
    *facts = x.facts;
  /* Inside a snapshot an event re-creates what was alive when the log began: it did not
   * happen then, and a learner stepping through must not read it as if it did. */
  if (text && m->snapshot && index > m->snapshot_begin && index < m->snapshot_end) {
    char *marked = g_strdup_printf(_("when recording began, this was alive: %s"), text);
    g_free(text);
    text = marked;
  }
  return text;
}

/* What each kind's sentence may use: the event, the state after it, and what only the state
 * before it knew (a node or tensor that the event made go). */
typedef struct kind_facts {
  gs_trace_model *m;
  const gs_replay *r; /* the state after the event */
  gs_trace_event e;
  guint64 index;
  const char *name;          /* the event's name string, as shown */
  char node_h[32];           /* "#<node>" */
  char *node_kind;           /* node_free_saved, node_release: the node's kind before it went */
  guint node_saved;          /* ... and how many tensors it had saved */
  char *disposed_name;       /* tensor_dispose: the tensor's words before it went */
  gboolean dataset_released; /* tensor_dispose of a dataset */
  char *moved_name;          /* tensor_move: the old handle's words */
} kind_facts;

/* One sentence per event kind, from the one list of kinds (gradscope/trace-kinds.h): a kind
 * without its function here does not compile. */
static char *say_storage_alloc(explain *x, kind_facts *k) {
  g_autofree char *size = g_format_size_full(k->e.nbytes, G_FORMAT_SIZE_IEC_UNITS);
  if (k->e.memory != 0) { /* format 1.4: bytes the engine wraps rather than allocates */
    g_autofree char *from = gs_memory_origin_label(k->e.memory, k->e.peer);
    return g_strdup_printf(_("storage #%" PRIu64 " wraps %s of %s; nothing was copied"),
                           storage_fact(x, k->e.storage), size, from);
  }
  return g_strdup_printf(_("storage #%" PRIu64 " allocated %s"), storage_fact(x, k->e.storage),
                         size);
}

static char *say_storage_share(explain *x, kind_facts *k) {
  return g_strdup_printf(_("storage #%" PRIu64 " shares the bytes of storage #%" PRIu64
                           " copy-on-write; nothing was copied"),
                         storage_fact(x, k->e.storage), storage_fact(x, k->e.source));
}

static char *say_storage_materialise(explain *x, kind_facts *k) {
  g_autofree char *size = g_format_size_full(k->e.nbytes, G_FORMAT_SIZE_IEC_UNITS);
  if (k->e.memory != 0) { /* format 1.4: gs_share_memory_ moving the bytes */
    g_autofree char *into = gs_memory_origin_label(k->e.memory, k->e.peer);
    return g_strdup_printf(_("storage #%" PRIu64 " moved its bytes (%s) into %s; every "
                             "view of it follows"),
                           storage_fact(x, k->e.storage), size, into);
  }
  return g_strdup_printf(_("storage #%" PRIu64 " copied its shared bytes (%s) "
                           "before a write: copy-on-write ends here"),
                         storage_fact(x, k->e.storage), size);
}

static char *say_storage_free(explain *x, kind_facts *k) {
  storage_fact(x, k->e.storage);
  /* A derived free is one step with the dispose before it, and the memory series show the
   * step's result at both (model_event_closes_pair): the bytes before are the dispose's. */
  guint64 step = k->index - (k->e.derived && k->index > 0);
  guint64 was = gs_trace_model_bytes_at(k->m, step - (step > 0));
  guint64 now = gs_trace_model_bytes_at(k->m, k->index);
  if (step == 0 || was <= now)
    return g_strdup_printf(_("storage #%" PRIu64 " was released; its bytes stay "
                             "alive for the storages sharing them"),
                           k->e.storage);
  g_autofree char *size = g_format_size_full(was - now, G_FORMAT_SIZE_IEC_UNITS);
  return g_strdup_printf(_("storage #%" PRIu64 " was freed (%s)"), k->e.storage, size);
}

static char *say_tensor_create(explain *x, kind_facts *k) { return explain_create(x, k->r, &k->e); }

static char *say_tensor_dispose(explain *x, kind_facts *k) {
  if (k->dataset_released) {
    char h[32];
    gs_format_handle(k->e.tensor, h, sizeof h);
    return g_strdup_printf(_("dataset %s was released: the tensors it read are the "
                             "program's again, and no longer count as data"),
                           h);
  }
  g_autofree char *reason = gs_dispose_reason_text(k->name);
  if (!k->disposed_name) /* the first event: nothing was alive before it */
    k->disposed_name = tensor_fact(x, k->r, k->e.tensor, 0, TRUE);
  return g_strdup_printf(_("%s was disposed (%s)"), k->disposed_name,
                         *reason ? reason : _("no reason given"));
}

static char *say_tensor_move(explain *x, kind_facts *k) {
  g_autofree char *target = tensor_words(x, k->r, k->e.target);
  return g_strdup_printf(_("%s became a parameter with the new handle %s: the old handle is "
                           "no longer valid, and its owner still counts one object"),
                         k->moved_name, target);
}

static char *say_tensor_name(explain *x, kind_facts *k) {
  g_autofree char *t = tensor_words(x, k->r, k->e.tensor);
  return g_strdup_printf(_("user code named %s"), t);
}

static char *say_inplace_write(explain *x, kind_facts *k) {
  return explain_inplace(x, k->r, &k->e, k->index);
}

static char *say_owner_change(explain *x, kind_facts *k) {
  /* A composite's id is no tensor: it has no tensor fact. */
  const gs_replay_object *object = gs_replay_object_get(k->r, k->e.object);
  g_autofree char *o = !object             ? plain_tensor_words(k->r, k->e.object)
                       : object->composite ? composite_words(object->object_kind, k->e.object)
                                           : tensor_words(x, k->r, k->e.object);
  g_autofree char *from =
      holder_words(x, k->r, k->e.object, k->e.previous_holder, k->e.previous_owner, TRUE);
  g_autofree char *to = holder_words(x, k->r, k->e.object, k->e.holder, k->e.owner, FALSE);
  return g_strdup_printf(_("%s moved from %s to %s"), o, from, to);
}

static char *say_scope_begin(explain *x, kind_facts *k) {
  (void)x;
  g_autofree char *s = scope_words(k->m, k->r, k->e.scope);
  if (!k->e.outer)
    return g_strdup_printf(_("%s began on thread %u; tensors made on this thread now belong "
                             "to it"),
                           s, k->e.thread);
  g_autofree char *outer = scope_words(k->m, k->r, k->e.outer);
  return g_strdup_printf(_("%s began inside %s; tensors made on this thread now belong to "
                           "it"),
                         s, outer);
}

static char *say_scope_end(explain *x, kind_facts *k) {
  (void)x;
  return explain_scope_end(k->m, k->r, &k->e, k->index);
}

static char *say_node_create(explain *x, kind_facts *k) {
  node_fact(x, k->name, k->e.node, FALSE);
  /* A fused recurrence stands for every time step of a layer: say what the steps did (its
   * output is a work tensor of the op's, not one the program holds: not named here). */
  gs_packed_steps steps;
  /* Only a recurrence node looks for its packed sequence: the look decodes its chunk again,
   * which every node of a log of a million names made 4 s of `gradscope explain`. */
  if (gs_packed_steps_cell(k->name) && gs_packed_steps_find(k->m, k->index, &steps)) {
    g_autofree char *each = gs_packed_steps_sentence(&steps);
    g_autofree char *what = g_strdup_printf(
        ngettext("%s %s ran the %s over %" PRIu64 " packed sequence in %" PRIu64 " time "
                 "steps (%" PRIu64 " rows), one node for every step",
                 "%s %s ran the %s over %" PRIu64 " packed sequences in %" PRIu64 " time "
                 "steps (%" PRIu64 " rows), one node for every step",
                 steps.batch),
        k->name, k->node_h, steps.cell, (uint64_t)steps.batch, (uint64_t)steps.steps,
        (uint64_t)steps.rows);
    gs_packed_steps_clear(&steps);
    if (each)
      return g_strdup_printf(_("%s: %s"), what, each);
    /* TRANSLATORS: after the sentence above when the log has no batch sizes per step. */
    return g_strdup_printf(_("%s; record with GS_TRACE_VALUES=64 to see how many sequences "
                             "each step ran"),
                           what);
  }
  g_autofree char *t = tensor_words(x, k->r, k->e.tensor);
  /* The two kinds in-place writes through views make get their meaning spelled out: they
   * are what people come to see about views and in-place ops. */
  if (g_strcmp0(k->name, "CopySlices") == 0)
    return g_strdup_printf(_("%s %s: a write through a view rewrote the history of its base "
                             "%s; in backward, the gradient outside the view goes on to the "
                             "base's previous history and the write's own formula runs on "
                             "the part inside"),
                           k->name, k->node_h, t);
  if (g_strcmp0(k->name, "AsStridedBackward") == 0)
    return g_strdup_printf(_("%s %s: %s is a view made before its base was written in place; "
                             "its gradient now goes into the base's current history"),
                           k->name, k->node_h, t);
  return g_strdup_printf(ngettext("%s %s recorded how to backpropagate into %s; it saved %u "
                                  "tensor for backward",
                                  "%s %s recorded how to backpropagate into %s; it saved %u "
                                  "tensors for backward",
                                  k->e.n_saved),
                         k->name, k->node_h, t, k->e.n_saved);
}

static char *say_node_free_saved(explain *x, kind_facts *k) {
  (void)x;
  return g_strdup_printf(ngettext("backward freed the %u tensor %s %s saved",
                                  "backward freed the %u tensors %s %s saved", k->node_saved),
                         k->node_saved, k->node_kind ? k->node_kind : "", k->node_h);
}

/* The kind of the event's node in the state after it, named as a fact. A node the state does
 * not know is named "node #N", with a fact that fails: a pack or unpack is always of a live
 * node, so the log or the model lost it. */
static const char *live_node_kind(explain *x, kind_facts *k) {
  const gs_replay_node *n = node_in(k->r, k->e.node);
  if (!n) {
    g_autofree char *text = g_strdup_printf("%s #%" G_GUINT64_FORMAT, _("node"), k->e.node);
    add_fact(x, (gs_explain_fact){GS_FACT_NODE, .id = k->e.node}, text);
    return _("node");
  }
  node_fact(x, n->kind, n->id, FALSE);
  return shown(x, n->kind);
}

/* "; 2 of the 3 tensors it saved are packed now": a node's packs so far, as a fact. */
static void append_packed(explain *x, kind_facts *k, GString *s) {
  const gs_replay_node *n = node_in(k->r, k->e.node);
  if (!n)
    return;
  g_autofree char *words =
      g_strdup_printf(ngettext("; %u of the %u tensor it saved is packed now",
                               "; %u of the %u tensors it saved are packed now", n->n_saved),
                      n->n_packed, n->n_saved);
  add_fact(x, (gs_explain_fact){GS_FACT_PACKED, .id = n->id, .value = n->n_packed}, words);
  g_string_append(s, words);
}

static char *say_saved_pack(explain *x, kind_facts *k) {
  const char *kind = live_node_kind(x, k);
  g_autofree char *t = k->e.tensor ? tensor_words(x, k->r, k->e.tensor) : g_strdup("");
  if (k->e.tensor)
    add_fact(x,
             (gs_explain_fact){GS_FACT_SAVED_BY, .id = k->e.node, .tensor = k->e.tensor,
                               .storage = k->e.storage},
             t);
  GString *s = g_string_new(NULL);
  /* TRANSLATORS: a node's kind and number, a tensor (may be empty), a storage number */
  g_string_printf(s,
                  _("%s %s gave the tensor %s it saved to a saved-tensor pack hook, and "
                    "keeps what the hook returned instead of storage #%" PRIu64),
                  kind, k->node_h, t, storage_fact(x, k->e.storage));
  append_packed(x, k, s);
  return g_string_free(s, FALSE);
}

static char *say_saved_unpack(explain *x, kind_facts *k) {
  const char *kind = live_node_kind(x, k);
  g_autofree char *t = tensor_fact(x, k->r, k->e.tensor, k->e.storage, FALSE);
  GString *s = g_string_new(NULL);
  /* TRANSLATORS: a node's kind and number, a tensor, a storage number */
  g_string_printf(s,
                  _("%s %s got a saved tensor back from its unpack hook for backward: "
                    "%s over storage #%" PRIu64),
                  kind, k->node_h, t, storage_fact(x, k->e.storage));
  const gs_replay_node *n = node_in(k->r, k->e.node);
  if (n) {
    /* TRANSLATORS: after the sentence above: how many unpacks the node has had, in all */
    g_autofree char *words = g_strdup_printf(
        ngettext("; its unpack hooks have given %u saved tensor back so far",
                 "; its unpack hooks have given %u saved tensors back so far", n->n_unpacked),
        n->n_unpacked);
    add_fact(x, (gs_explain_fact){GS_FACT_UNPACKED, .id = n->id, .value = n->n_unpacked}, words);
    g_string_append(s, words);
  }
  append_packed(x, k, s);
  return g_string_free(s, FALSE);
}

static char *say_node_release(explain *x, kind_facts *k) {
  (void)x;
  return g_strdup_printf(_("%s %s was released: nothing refers to it any more"),
                         k->node_kind ? k->node_kind : "", k->node_h);
}

static char *say_backward_begin(explain *x, kind_facts *k) {
  g_autofree char *t = tensor_words(x, k->r, k->e.tensor);
  return g_strdup_printf(_("backward started from %s"), t);
}

static char *say_backward_end(explain *x, kind_facts *k) {
  g_autofree char *t = tensor_words(x, k->r, k->e.tensor);
  return g_strdup_printf(_("backward from %s finished"), t);
}

static char *say_grad_accumulate(explain *x, kind_facts *k) {
  g_autofree char *t = tensor_words(x, k->r, k->e.tensor);
  g_autofree char *target = tensor_words(x, k->r, k->e.target);
  return g_strdup_printf(_("a gradient was accumulated into the grad of %s (%s)"), t, target);
}

static char *say_module_create(explain *x, kind_facts *k) {
  (void)x;
  char h[32];
  gs_format_handle(k->e.module, h, sizeof h);
  return g_strdup_printf(_("module %s %s was created"), k->name, h);
}

static char *say_module_parameter(explain *x, kind_facts *k) {
  g_autofree char *t = tensor_words(x, k->r, k->e.tensor);
  char h[32];
  gs_format_handle(k->e.module, h, sizeof h);
  const gs_replay_module *mod = gs_replay_module_get(k->r, k->e.module);
  return g_strdup_printf(_("module %s %s registered %s as its parameter \"%s\""),
                         mod ? shown(x, mod->type) : "", h, t, k->name);
}

static char *say_module_child(explain *x, kind_facts *k) {
  char parent_h[32], child_h[32];
  gs_format_handle(k->e.module, parent_h, sizeof parent_h);
  gs_format_handle(k->e.child, child_h, sizeof child_h);
  const gs_replay_module *parent = gs_replay_module_get(k->r, k->e.module);
  const gs_replay_module *child = gs_replay_module_get(k->r, k->e.child);
  if (!k->e.child)
    return g_strdup_printf(_("module %s %s no longer has a child \"%s\": the slot was emptied "
                             "(removed or renamed); the module that was there lives on while "
                             "something else holds it"),
                           parent ? shown(x, parent->type) : "", parent_h, k->name);
  if (child && child->n_parents > 1 &&
      (child->parent != k->e.module || g_strcmp0(child->name, k->name) != 0))
    return g_strdup_printf(_("module %s %s became the child \"%s\" of module %s %s as well: "
                             "it is shared (%u places), and its parameters keep the names of "
                             "its first place"),
                           shown(x, child->type), child_h, k->name,
                           parent ? shown(x, parent->type) : "", parent_h, child->n_parents);
  return g_strdup_printf(_("module %s %s became the child \"%s\" of module %s %s: it and "
                           "its parameters now belong to that tree, and its parameters are "
                           "named \"%s.…\""),
                         child ? shown(x, child->type) : "", child_h, k->name,
                         parent ? shown(x, parent->type) : "", parent_h, k->name);
}

static char *say_optimizer_create(explain *x, kind_facts *k) {
  char h[32];
  gs_format_handle(k->e.optimizer, h, sizeof h);
  const gs_replay_optimizer *opt = gs_replay_optimizer_get(k->r, k->e.optimizer);
  /* A large optimizer's parameter list continues in events with the same id. */
  if (opt && opt->params->len > k->e.n_params)
    return g_strdup_printf(ngettext("optimizer %s %s also updates %u more parameter",
                                    "optimizer %s %s also updates %u more parameters",
                                    k->e.n_params),
                           shown(x, opt->type), h, k->e.n_params);
  return g_strdup_printf(ngettext("optimizer %s %s was created to update %u parameter; the "
                                  "state it keeps for it (momentum, running averages) is "
                                  "optimizer state",
                                  "optimizer %s %s was created to update %u parameters; the "
                                  "state it keeps for them (momentum, running averages) is "
                                  "optimizer state",
                                  k->e.n_params),
                         k->name, h, k->e.n_params);
}

static char *say_composite_create(explain *x, kind_facts *k) {
  (void)x;
  char h[32];
  gs_format_handle(k->e.object, h, sizeof h);
  guint parts = 0;
  for (guint i = 0; i < k->e.n_parts; i++)
    parts += k->e.parts[i] != 0; /* absent parts (no index tensors) are 0 */
  if (k->e.object_kind == GS_OBJECT_DATASET)
    return g_strdup_printf(ngettext("dataset %s reads %u tensor without owning it; while the "
                                    "dataset lives its bytes count as data",
                                    "dataset %s reads %u tensors without owning them; while "
                                    "the dataset lives their bytes count as data",
                                    parts),
                           h, parts);
  if (k->e.object_kind == GS_OBJECT_PACKED_SEQUENCE)
    return g_strdup_printf(ngettext("packed sequence %s was made of %u tensor; scopes own and "
                                    "dispose it as one",
                                    "packed sequence %s was made of %u tensors; scopes own "
                                    "and dispose them as one",
                                    parts),
                           h, parts);
  return g_strdup_printf(ngettext("composite %s was made of %u tensor; scopes own and dispose "
                                  "it as one",
                                  "composite %s was made of %u tensors; scopes own and "
                                  "dispose them as one",
                                  parts),
                         h, parts);
}

static char *say_mark(explain *x, kind_facts *k) {
  (void)x;
  return g_strdup_printf(_("mark: %s"), k->name);
}

/* A named range the sentence names, as a fact about the thread's open ranges: open of them,
 * and this one at place `at` (1: the outermost). */
static void range_fact(explain *x, const char *name, guint open, guint at, gboolean before) {
  add_fact(x, (gs_explain_fact){GS_FACT_RANGE, before, .id = open, .value = at}, name);
}

static char *say_range_begin(explain *x, kind_facts *k) {
  guint32 thread = gs_trace_model_thread_at(k->m, k->index);
  guint open = gs_replay_ranges_open(k->r, thread);
  range_fact(x, k->name, open, open, FALSE);
  const char *outer = open > 1 ? gs_replay_range_name(k->r, thread, open - 2) : NULL;
  if (outer) {
    range_fact(x, shown(x, outer), open, open - 1, FALSE);
    /* TRANSLATORS: a user's named range began while another was open (ranges nest) */
    return g_strdup_printf(_("range “%s” began inside range “%s”: the profiler charges this "
                             "thread's calls to it until it ends"),
                           k->name, shown(x, outer));
  }
  /* TRANSLATORS: a user's named range (torch.profiler.record_function) began */
  return g_strdup_printf(_("range “%s” began: the profiler charges this thread's calls to it "
                           "until it ends"),
                         k->name);
}

static char *say_range_end(explain *x, kind_facts *k) {
  guint32 thread = gs_trace_model_thread_at(k->m, k->index);
  guint open = gs_replay_ranges_open(k->r, thread);
  range_fact(x, k->name, open + 1, open + 1, TRUE);
  const char *outer = open > 0 ? gs_replay_range_name(k->r, thread, open - 1) : NULL;
  if (outer) {
    range_fact(x, shown(x, outer), open, open, FALSE);
    /* TRANSLATORS: a named range ended and the one around it is the innermost again */
    return g_strdup_printf(_("range “%s” ended; the thread's calls go to range “%s” again"),
                           k->name, shown(x, outer));
  }
  return g_strdup_printf(_("range “%s” ended"), k->name);
}

static char *say_error(explain *x, kind_facts *k) {
  (void)x;
  /* The engine's own messages run to a few hundred characters: only a hostile one is cut. */
  g_autofree char *text = gs_text_clip(k->e.text ? k->e.text : "", 10 * GS_TEXT_SHOWN_MAX);
  /* The engine's message starts with its function ("backward: ..."); the event's kind,
   * which `explain` prints before the sentence, already says "error". */
  /* TRANSLATORS: an error event: the engine's message, which names the function */
  return g_strdup_printf(_("a call failed: %s"), text);
}

static char *say_values(explain *x, kind_facts *k) {
  g_autofree char *t = tensor_words(x, k->r, k->e.tensor);
  return g_strdup_printf(ngettext("the first %u value of %s were recorded",
                                  "the first %u values of %s were recorded", k->e.n_values),
                         k->e.n_values, t);
}

static char *say_snapshot_begin(explain *x, kind_facts *k) {
  (void)x;
  if (!k->e.count) /* counted at its end (tracing switched on in a running program) */
    return g_strdup_printf(_("recording began at event %" PRIu64 ", after the program had "
                             "started; the events up to the snapshot's end re-create what "
                             "was alive then"),
                           k->e.seq + 1);
  return g_strdup_printf(ngettext("recording began at event %" PRIu64 "; %" PRIu64
                                  " object was alive then, and the events up to the "
                                  "snapshot's end re-create it",
                                  "recording began at event %" PRIu64 "; %" PRIu64
                                  " objects were alive then, and the events up to the "
                                  "snapshot's end re-create them",
                                  k->e.count),
                         k->e.seq + 1, k->e.count);
}

static char *say_snapshot_end(explain *x, kind_facts *k) {
  (void)x;
  return g_strdup_printf(ngettext("the snapshot is complete: the %" PRIu64 " object alive "
                                  "before event %" PRIu64 " is in place, and the log goes on "
                                  "from there",
                                  "the snapshot is complete: the %" PRIu64 " objects alive "
                                  "before event %" PRIu64 " are in place, and the log goes "
                                  "on from there",
                                  k->e.count),
                         k->e.count, k->e.seq + 1);
}

static char *say_requires_grad(explain *x, kind_facts *k) {
  g_autofree char *t = tensor_words(x, k->r, k->e.tensor);
  return g_strdup_printf(k->e.requires_grad
                             ? _("%s now requires grad: the ops that take it record graph "
                                 "nodes, and backward accumulates its gradient into its .grad")
                             : _("%s no longer requires grad: ops that take it record no "
                                 "graph for it"),
                         t);
}

static char *say_tensor_set_data(explain *x, kind_facts *k) {
  g_autofree char *t = tensor_words(x, k->r, k->e.tensor);
  g_autofree char *shape = shape_words(&k->e);
  const char *op = gs_trace_model_string(k->m, k->e.op);
  if (is_inplace_geometry_op(op))
    /* TRANSLATORS: the op (unsqueeze_, t_, resize_...), a tensor, its shape and dtype, a storage */
    return g_strdup_printf(_("%s changed the shape of %s in place: it is now %s over the same "
                             "storage #%" PRIu64 ", its bytes untouched"),
                           op, t, shape, k->e.storage);
  /* TRANSLATORS: a tensor, the op (double, float, set_data), its shape and dtype, a storage */
  return g_strdup_printf(_("%s had its data replaced by %s: it is now %s over storage #%" PRIu64
                           ", and keeps its handle, its grad and its place in a module"),
                         t, op, shape, k->e.storage);
}

static char *say_dist_init(explain *x, kind_facts *k) {
  (void)x;
  /* TRANSLATORS: the run id is a hexadecimal number */
  return g_strdup_printf(_("this process joined a distributed run as rank %u of %u; every "
                           "rank's log of this run carries the run id %016" PRIx64),
                         k->e.rank, k->e.world, k->e.run);
}

/* Up to a few parameters by their module path (or handle), then how many more. */
static char *parameter_list(explain *x, const gs_replay *r, const uint64_t *ids, guint n) {
  enum { SHOWN = 3 };
  GString *s = g_string_new(NULL);
  for (guint i = 0; i < n && i < SHOWN; i++) {
    const char *name = gs_replay_tensor_name(r, ids[i]);
    char h[32];
    gs_format_handle(ids[i], h, sizeof h);
    if (i)
      g_string_append(s, ", ");
    if (name && *name)
      g_string_append(s, shown(x, name));
    else
      g_string_append(s, h);
  }
  if (n > SHOWN)
    g_string_append_printf(s, ngettext(" and %u more", " and %u more", n - SHOWN), n - SHOWN);
  return g_string_free(s, FALSE);
}

static char *say_bucket_ready(explain *x, kind_facts *k) {
  g_autofree char *size = g_format_size_full(k->e.nbytes, G_FORMAT_SIZE_IEC_UNITS);
  g_autofree char *params = parameter_list(x, k->r, k->e.params, k->e.n_params);
  /* in_place (format 2.3; 0 before): what backward wrote into the bucket itself, through
   * gradient_as_bucket_view, so DDP copied nothing of it. */
  if (k->e.in_place >= k->e.nbytes && k->e.nbytes > 0)
    return g_strdup_printf(ngettext("the gradient of %u parameter (%s) is final in bucket %d "
                                    "(%s), where backward wrote it (gradient_as_bucket_view: "
                                    "nothing was copied); the bucket's allreduce can start "
                                    "while backward goes on",
                                    "the gradients of %u parameters (%s) are final in bucket "
                                    "%d (%s), where backward wrote them "
                                    "(gradient_as_bucket_view: nothing was copied); the "
                                    "bucket's allreduce can start while backward goes on",
                                    k->e.n_params),
                           k->e.n_params, params, k->e.bucket, size);
  if (k->e.in_place > 0) {
    g_autofree char *copied =
        g_format_size_full(k->e.nbytes - k->e.in_place, G_FORMAT_SIZE_IEC_UNITS);
    return g_strdup_printf(ngettext("the gradient of %u parameter (%s) is final: backward wrote "
                                    "it into bucket %d (%s) itself (gradient_as_bucket_view), "
                                    "but for %s that DDP copied there; the bucket's allreduce "
                                    "can start while backward goes on",
                                    "the gradients of %u parameters (%s) are final: backward "
                                    "wrote them into bucket %d (%s) itself "
                                    "(gradient_as_bucket_view), but for %s that DDP copied "
                                    "there; the bucket's allreduce can start while backward "
                                    "goes on",
                                    k->e.n_params),
                           k->e.n_params, params, k->e.bucket, size, copied);
  }
  return g_strdup_printf(ngettext("the gradient of %u parameter (%s) is final: DDP copied it "
                                  "into bucket %d (%s), whose allreduce can start while "
                                  "backward goes on",
                                  "the gradients of %u parameters (%s) are final: DDP copied "
                                  "them into bucket %d (%s), whose allreduce can start while "
                                  "backward goes on",
                                  k->e.n_params),
                         k->e.n_params, params, k->e.bucket, size);
}

static char *say_collective_begin(explain *x, kind_facts *k) {
  (void)x;
  const char *op = gs_trace_model_string(k->m, k->e.op);
  g_autofree char *size = g_format_size_full(k->e.nbytes, G_FORMAT_SIZE_IEC_UNITS);
  if (!strcmp(op, "allreduce") && k->e.bucket >= 0)
    return g_strdup_printf(_("DDP started the allreduce of bucket %d (%s), collective #%" PRIu64
                             ": it sums the bucket's gradients over every rank without "
                             "blocking, while backward goes on"),
                           k->e.bucket, size, k->e.collective);
  if (!strcmp(op, "allreduce"))
    return g_strdup_printf(_("allreduce #%" PRIu64 " began: %s are summed over every rank, in "
                             "place"),
                           k->e.collective, size);
  if (!strcmp(op, "broadcast"))
    return g_strdup_printf(_("broadcast #%" PRIu64 " began: %s are copied from the root rank "
                             "to every rank"),
                           k->e.collective, size);
  if (!strcmp(op, "allgather"))
    return g_strdup_printf(_("allgather #%" PRIu64 " began: this rank sends %s and receives "
                             "every rank's part"),
                           k->e.collective, size);
  if (!strcmp(op, "reduce_scatter"))
    return g_strdup_printf(_("reduce-scatter #%" PRIu64 " began: this rank's %s are summed "
                             "over every rank and each rank keeps its part of the sum"),
                           k->e.collective, size);
  if (!strcmp(op, "barrier"))
    return g_strdup_printf(_("barrier #%" PRIu64 " began: this rank goes on once every rank "
                             "has reached it"),
                           k->e.collective);
  return g_strdup_printf(_("collective %s #%" PRIu64 " of %s began"), shown(x, op), k->e.collective,
                         size);
}

static char *say_collective_end(explain *x, kind_facts *k) {
  const char *op = gs_dist_collective_words(gs_trace_model_string(k->m, k->e.op));
  g_autofree char *size = g_format_size_full(k->e.nbytes, G_FORMAT_SIZE_IEC_UNITS);
  double ms = (double)k->e.waited_ns / 1e6;
  if (k->e.bucket >= 0 && k->e.waited_ns == 0)
    return g_strdup_printf(_("%s #%" PRIu64 " (%s) of bucket %d finished while backward went "
                             "on: this rank did not wait for it"),
                           shown(x, op), k->e.collective, size, k->e.bucket);
  if (k->e.bucket >= 0)
    return g_strdup_printf(_("%s #%" PRIu64 " (%s) of bucket %d finished: this rank waited "
                             "%.3f ms for it at backward's end"),
                           shown(x, op), k->e.collective, size, k->e.bucket, ms);
  return g_strdup_printf(_("%s #%" PRIu64 " (%s) finished after %.3f ms, which this rank spent "
                           "blocked in it (waiting for the other ranks included)"),
                         shown(x, op), k->e.collective, size, ms);
}

static char *say_wait_begin(explain *x, kind_facts *k) {
  (void)x;
  return g_strdup_printf(_("this rank waits for %s to finish: backward's end needs the "
                           "averaged gradients before the optimizer step"),
                         gs_dist_wait_words(k->name));
}

static char *say_wait_end(explain *x, kind_facts *k) {
  (void)x;
  return g_strdup_printf(_("the wait for %s is over after %.3f ms; every gradient now holds "
                           "the average over the ranks"),
                         gs_dist_wait_words(k->name), (double)k->e.waited_ns / 1e6);
}

/* A table entry, not an event: lists and sentences never show it. */
static char *say_string(explain *x, kind_facts *k) {
  (void)x, (void)k;
  return NULL;
}

/* A table entry, not an event: lists and sentences never show it. */
static char *say_site(explain *x, kind_facts *k) {
  (void)x, (void)k;
  return NULL;
}

/* A table entry, not an event: lists and sentences never show it. */
static char *say_binary(explain *x, kind_facts *k) {
  (void)x, (void)k;
  return NULL;
}

typedef char *(*kind_sentence)(explain *x, kind_facts *k);
#define KIND_SENTENCE(KIND, kind, value, flags) [GS_TRACE_##KIND] = say_##kind,
static const kind_sentence sentences[GS_TRACE_KIND_COUNT] = {GS_TRACE_KINDS(KIND_SENTENCE)};
#undef KIND_SENTENCE

static char *explain_event(explain *x, guint64 index) {
  gs_trace_model *m = x->m;
  if (index >= m->kinds->len)
    return NULL;
  kind_facts k = {.m = m, .index = index};
  gs_trace_event e;
  if (!model_decode(m, &m->query_decoder, index, &e))
    return NULL;
  /* Facts only the state before knows, for the kinds that need them: seeking there replays
   * from a keyframe, which a big state puts up to hundreds of thousands of events back (the
   * state after, the last event's, is often the head and costs nothing). Seeking moves the
   * seek decoder only: e stays valid. */
  gboolean wants_before = e.kind == GS_TRACE_NODE_RELEASE ||
                          e.kind == GS_TRACE_NODE_FREE_SAVED ||
                          e.kind == GS_TRACE_TENSOR_DISPOSE || e.kind == GS_TRACE_TENSOR_MOVE;
  const gs_replay *before = index > 0 && wants_before ? gs_trace_model_seek(m, index - 1) : NULL;
  if (before && (e.kind == GS_TRACE_NODE_RELEASE || e.kind == GS_TRACE_NODE_FREE_SAVED)) {
    const gs_replay_node *n = node_in(before, e.node);
    k.node_kind = g_strdup(n ? shown(x, n->kind) : "");
    k.node_saved = n ? n->n_saved : 0;
    if (n)
      node_fact(x, n->kind, n->id, TRUE);
  }
  if (before && e.kind == GS_TRACE_TENSOR_DISPOSE) {
    const gs_replay_object *o = gs_replay_object_get(before, e.tensor);
    k.dataset_released = o && o->composite && o->object_kind == GS_OBJECT_DATASET;
    /* A composite's disposal (a packed sequence a scope ended) names no tensor. */
    k.disposed_name = o && o->composite ? composite_words(o->object_kind, e.tensor)
                                        : tensor_fact(x, before, e.tensor, 0, TRUE);
  }
  if (e.kind == GS_TRACE_TENSOR_MOVE) /* the old handle: gone after the event */
    k.moved_name = tensor_fact(x, before, e.tensor, 0, TRUE);
  k.r = gs_trace_model_seek(m, index);
  char *text = NULL;
  /* Seeking moved no decoder of ours, but the sentences may: decode again. */
  if (model_decode(m, &m->query_decoder, index, &k.e)) {
    g_snprintf(k.node_h, sizeof k.node_h, "#%" G_GUINT64_FORMAT, k.e.node);
    k.name = shown(x, gs_trace_model_string(m, k.e.name));
    text = k.e.kind > 0 && k.e.kind < GS_TRACE_KIND_COUNT
               ? sentences[k.e.kind](x, &k)
               : g_strdup_printf(_("an event of kind %u, newer than this inspector"), k.e.kind);
  }
  g_free(k.node_kind);
  g_free(k.disposed_name);
  g_free(k.moved_name);
  return text;
}
