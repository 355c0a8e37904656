/* gs-tensor-life.c: see gs-tensor-life.h. Every sentence is one translatable format string
 * (translators see whole sentences, not fragments glued together). */
#include "gs-tensor-life.h"

#include <glib/gi18n.h>
#include <gradscope/scope.h>

#include "dispose-reason.h"
#include "event-fields.h"
#include "gs-view-format.h"
#include "snapshot-note.h"

static gboolean is_me(const gs_tensor_handles *h, guint64 id) {
  return id && (id == h->id || id == h->moved_to);
}

char *gs_tensor_life_holder(gs_trace_model *m, guint32 holder, guint64 owner) {
  g_autofree char *handle = gs_view_handle(owner);
  switch ((gs_trace_holder)holder) {
  case GS_TRACE_HELD_BY_CALLER:
    return g_strdup(_("the program"));
  case GS_TRACE_HELD_BY_SCOPE: {
    const gs_replay_scope *scope = gs_trace_model_scope(m, owner);
    if (scope && scope->name && *scope->name)
      /* TRANSLATORS: a dispose scope: its name, then its handle (as the model's owner labels) */
      return g_strdup_printf(_("scope %s %s"), scope->name, handle);
    return g_strdup_printf(_("scope %s"), handle);
  }
  case GS_TRACE_HELD_BY_MODULE: {
    const gs_replay *head = gs_trace_model_head(m);
    const gs_replay_module *module = head ? gs_replay_module_get(head, owner) : NULL;
    const char *type = module ? module->type : NULL;
    if (type && *type)
      /* TRANSLATORS: a module: its type (Linear...), then its handle */
      return g_strdup_printf(_("module %s %s"), type, handle);
    return g_strdup_printf(_("module %s"), handle);
  }
  case GS_TRACE_HELD_BY_COMPOSITE:
    return g_strdup_printf(_("composite %s"), handle);
  case GS_TRACE_HELD_BY_TENSOR:
    return g_strdup_printf(_("gradient of %s"), handle);
  case GS_TRACE_HELD_BY_ENGINE:
    return g_strdup(_("the engine"));
  case GS_TRACE_HELD_BY_OPTIMIZER: {
    const gs_replay *head = gs_trace_model_head(m);
    const gs_replay_optimizer *opt = head ? gs_replay_optimizer_get(head, owner) : NULL;
    /* TRANSLATORS: an optimizer's type and handle, e.g. "optimizer Adam #1" */
    return g_strdup_printf(_("optimizer %s %s"), opt ? opt->type : "?", handle);
  }
  }
  return g_strdup_printf(_("unknown holder %u"), holder);
}

static char *describe_create(gs_trace_model *m, const gs_tensor_handles *h,
                             const gs_trace_event *e) {
  const char *op = gs_trace_model_string(m, e->op);
  g_autofree char *shape = gs_view_shape(e->shape, e->ndim);
  g_autofree char *tensor = gs_view_handle(e->tensor);
  g_autofree char *source = gs_view_handle(e->source);
  const char *dtype = gs_dtype_name((gs_dtype)e->dtype);
  if (!is_me(h, e->tensor)) {
    /* Something was made from this tensor. */
    switch (e->origin) {
    case 1:
      /* TRANSLATORS: view of this tensor: the new tensor, the op, its shape */
      return g_strdup_printf(_("Viewed as %s by %s, shape %s, sharing storage #%llu"),
                             tensor, op, shape, (unsigned long long)e->storage);
    case 2:
      return g_strdup_printf(_("Detached as %s: it shares this storage and its version counter"),
                             tensor);
    case 3:
      return g_strdup_printf(_("Cloned into %s: nothing was copied; the bytes are shared "
                               "copy-on-write until either is written"),
                             tensor);
    default:
      return g_strdup_printf(_("Used to make %s by %s"), tensor, op);
    }
  }
  switch (e->origin) {
  case 1:
    return g_strdup_printf(_("Created by %s as a view of %s: %s %s, sharing storage #%llu"),
                           op, source, dtype, shape, (unsigned long long)e->storage);
  case 2:
    return g_strdup_printf(_("Created by detach of %s: %s %s, sharing storage #%llu"
                             " and its version counter; a new leaf"),
                           source, dtype, shape, (unsigned long long)e->storage);
  case 3:
    return g_strdup_printf(_("Created by clone of %s: %s %s, storage #%llu"
                             " shares its bytes copy-on-write until written"),
                           source, dtype, shape, (unsigned long long)e->storage);
  default:
    return g_strdup_printf(_("Created by %s: %s %s, new storage #%llu%s"), op,
                           dtype, shape, (unsigned long long)e->storage,
                           e->requires_grad ? _(", requires grad") : "");
  }
}

static char *describe_owner_change(gs_trace_model *m, const gs_tensor_handles *h,
                                   const gs_trace_event *e) {
  g_autofree char *from = gs_tensor_life_holder(m, e->previous_holder, e->previous_owner);
  g_autofree char *to = gs_tensor_life_holder(m, e->holder, e->owner);
  if (!is_me(h, e->object)) {
    g_autofree char *object = gs_view_handle(e->object);
    /* TRANSLATORS: a composite this tensor is part of changed hands */
    return g_strdup_printf(_("Owner of its composite %s: %s → %s"), object, from, to);
  }
  /* Moving to the scope that encloses the owner is TorchSharp's MoveToOuter: say so. */
  if (e->previous_holder == GS_TRACE_HELD_BY_SCOPE && e->holder == GS_TRACE_HELD_BY_SCOPE) {
    const gs_replay_scope *was = gs_trace_model_scope(m, e->previous_owner);
    if (was && was->outer == e->owner)
      return g_strdup_printf(_("Owner: %s → moved to the outer %s"), from, to);
  }
  return g_strdup_printf(_("Owner: %s → %s"), from, to);
}

static char *describe_node(gs_trace_model *m, const gs_tensor_handles *h,
                           const gs_trace_event *e) {
  const char *kind = gs_trace_model_string(m, e->name);
  for (guint i = 0; i < e->n_saved; i++)
    if (is_me(h, e->saved[i]))
      /* TRANSLATORS: a graph node (its kind, e.g. MulBackward, and number) saved this tensor */
      return g_strdup_printf(_("Saved for backward by %s #%llu"), kind, (unsigned long long)e->node);
  /* An AccumulateGrad node stands for a leaf; any other node made the tensor. */
  if (is_me(h, e->tensor) && g_str_equal(kind, "AccumulateGrad"))
    return g_strdup_printf(_("Became a leaf of the graph: AccumulateGrad #%llu will receive its "
                             "gradient"),
                           (unsigned long long)e->node);
  if (is_me(h, e->tensor))
    return g_strdup_printf(_("Made by the graph node %s #%llu (its grad_fn)"), kind,
                           (unsigned long long)e->node);
  return g_strdup_printf(_("Fed into %s #%llu"), kind, (unsigned long long)e->node);
}

static char *describe_values(const gs_trace_event *e) {
  GString *s = g_string_new(NULL);
  guint shown = MIN(e->n_values, 8u);
  for (guint i = 0; i < shown; i++)
    g_string_append_printf(s, "%s%g", i ? ", " : "", e->values[i]);
  if (e->n_values > shown)
    g_string_append(s, ", …");
  g_autofree char *list = g_string_free(s, FALSE);
  return g_strdup_printf(_("Values: %s"), list);
}

/* What one line of a tensor's life is made from: the event and whose life it is. */
typedef struct {
  gs_trace_model *m;
  const gs_tensor_handles *h;
  const gs_trace_event *e;
} life_words;

/* Kinds that concern no tensor, and module_child (which a tensor's life lists when it renames
 * the tensor's parameter), are shown by their name. */
static char *by_name(const life_words *w) { return g_strdup(gs_trace_kind_name(w->e->kind)); }

static char *life_string(const life_words *w) { return by_name(w); }
static char *life_site(const life_words *w) { return by_name(w); }
static char *life_binary(const life_words *w) { return by_name(w); }
static char *life_scope_begin(const life_words *w) { return by_name(w); }
static char *life_scope_end(const life_words *w) { return by_name(w); }
static char *life_module_create(const life_words *w) { return by_name(w); }
static char *life_module_child(const life_words *w) { return by_name(w); }
static char *life_mark(const life_words *w) { return by_name(w); }
static char *life_snapshot_begin(const life_words *w) { return by_name(w); }
static char *life_snapshot_end(const life_words *w) { return by_name(w); }

static char *life_tensor_create(const life_words *w) {
  const gs_trace_event *e = w->e;
  char *text = describe_create(w->m, w->h, e);
  guint64 first_seq;
  if (!is_me(w->h, e->tensor) || !gs_trace_model_snapshot(w->m, &first_seq, NULL, NULL) ||
      !gs_snapshot_recreated(e->seq, first_seq))
    return text;
  /* Its number is the snapshot's: when it was made, the log does not know. */
  g_autofree char *made = text;
  /* TRANSLATORS: a tensor a log that begins mid-run re-creates; then how it was made */
  return g_strdup_printf(_("Alive when the recording began (made before it, at an event the "
                           "log does not know). %s"),
                         made);
}

static char *life_tensor_dispose(const life_words *w) {
  g_autofree char *said = gs_dispose_reason_text(gs_trace_model_string(w->m, w->e->name));
  const char *reason = *said ? said : _("no reason recorded");
  if (is_me(w->h, w->e->tensor))
    return g_strdup_printf(_("Disposed: %s"), reason);
  g_autofree char *tensor = gs_view_handle(w->e->tensor);
  return g_strdup_printf(_("%s disposed: %s"), tensor, reason);
}

static char *life_tensor_move(const life_words *w) {
  if (w->e->tensor == w->h->id) {
    g_autofree char *target = gs_view_handle(w->e->target);
    return g_strdup_printf(_("Moved into parameter %s: this handle is no longer valid; the "
                             "parameter owns the storage"),
                           target);
  }
  g_autofree char *tensor = gs_view_handle(w->e->tensor);
  return g_strdup_printf(_("Became a parameter, moved from %s"), tensor);
}

static char *life_bucket_ready(const life_words *w) {
  /* in_place (format 2.3): the bucket's bytes backward wrote there itself; all of them: this
   * gradient too. Some: which ones is not in the log, so neither way is claimed. */
  if (w->e->in_place >= w->e->nbytes && w->e->nbytes > 0)
    return g_strdup_printf(_("Its gradient is final in DDP bucket %d, where backward wrote it "
                             "(gradient_as_bucket_view), and the bucket's allreduce averages "
                             "it over the ranks"),
                           w->e->bucket);
  if (w->e->in_place > 0)
    return g_strdup_printf(_("Its gradient is final and in DDP bucket %d, whose allreduce "
                             "averages it over the ranks"),
                           w->e->bucket);
  return g_strdup_printf(_("Its gradient is final and copied into DDP bucket %d, whose "
                           "allreduce averages it over the ranks"),
                         w->e->bucket);
}

/* A distributed run's rank, collectives and waits concern no one tensor. */
static char *life_dist_init(const life_words *w) { return by_name(w); }
static char *life_collective_begin(const life_words *w) { return by_name(w); }
static char *life_collective_end(const life_words *w) { return by_name(w); }
static char *life_wait_begin(const life_words *w) { return by_name(w); }
static char *life_wait_end(const life_words *w) { return by_name(w); }
/* A user's named range concerns no one tensor. */
static char *life_range_begin(const life_words *w) { return by_name(w); }
static char *life_range_end(const life_words *w) { return by_name(w); }

static char *life_tensor_name(const life_words *w) {
  return g_strdup_printf(_("Named “%s”"), gs_trace_model_string(w->m, w->e->name));
}

static char *life_requires_grad(const life_words *w) {
  return g_strdup(w->e->requires_grad ? _("Requires grad from now on")
                                      : _("No longer requires grad"));
}

static char *life_tensor_set_data(const life_words *w) {
  const gs_trace_event *e = w->e;
  /* TRANSLATORS: the op that replaced it (double, float, set_data), its dtype, its storage */
  return g_strdup_printf(_("Its data replaced by %s: now %s over storage #%llu"),
                         gs_trace_model_string(w->m, e->op), gs_dtype_name((gs_dtype)e->dtype),
                         (unsigned long long)e->storage);
}

static char *life_inplace_write(const life_words *w) {
  const gs_trace_event *e = w->e;
  const char *op = gs_trace_model_string(w->m, e->op);
  if (is_me(w->h, e->tensor))
    return g_strdup_printf(_("Written in place by %s: version %llu"), op,
                           (unsigned long long)e->version);
  g_autofree char *tensor = gs_view_handle(e->tensor);
  return g_strdup_printf(_("Written in place by %s through %s (same storage #%llu"
                           "): version %llu"),
                         op, tensor, (unsigned long long)e->storage,
                         (unsigned long long)e->version);
}

static char *life_owner_change(const life_words *w) {
  return describe_owner_change(w->m, w->h, w->e);
}

static char *life_node_create(const life_words *w) { return describe_node(w->m, w->h, w->e); }

static char *life_node_free_saved(const life_words *w) {
  return g_strdup_printf(_("Backward freed the tensors node #%llu saved"),
                         (unsigned long long)w->e->node);
}

static char *life_saved_pack(const life_words *w) {
  /* TRANSLATORS: a graph node's number */
  return g_strdup_printf(_("Saved by node #%llu through a saved-tensor pack hook: the node keeps "
                           "what the hook returned instead"),
                         (unsigned long long)w->e->node);
}

static char *life_saved_unpack(const life_words *w) {
  /* TRANSLATORS: a graph node's number */
  return g_strdup_printf(_("Given back by a saved-tensor unpack hook for node #%llu"),
                         (unsigned long long)w->e->node);
}

static char *life_node_release(const life_words *w) {
  return g_strdup_printf(_("Graph node #%llu released"), (unsigned long long)w->e->node);
}

static char *life_backward_begin(const life_words *w) {
  (void)w;
  return g_strdup(_("Backward began from this tensor"));
}

static char *life_backward_end(const life_words *w) {
  (void)w;
  return g_strdup(_("Backward from this tensor ended"));
}

static char *life_grad_accumulate(const life_words *w) {
  if (is_me(w->h, w->e->tensor)) {
    g_autofree char *target = gs_view_handle(w->e->target);
    return g_strdup_printf(_("Gradient accumulated into its .grad %s"), target);
  }
  g_autofree char *tensor = gs_view_handle(w->e->tensor);
  return g_strdup_printf(_("Holds the gradient accumulated for %s"), tensor);
}

static char *life_module_parameter(const life_words *w) {
  g_autofree char *module = gs_tensor_life_holder(w->m, GS_TRACE_HELD_BY_MODULE, w->e->module);
  return g_strdup_printf(_("Registered as parameter “%s” of %s"),
                         gs_trace_model_string(w->m, w->e->name), module);
}

static char *life_optimizer_create(const life_words *w) {
  g_autofree char *optimizer = gs_view_handle(w->e->optimizer);
  /* TRANSLATORS: the first %s is the optimizer's type (SGD, Adam, AdamW), the second its
   * handle. */
  return g_strdup_printf(_("Updated by the %s optimizer %s from now on"),
                         gs_trace_model_string(w->m, w->e->name), optimizer);
}

static char *life_composite_create(const life_words *w) {
  g_autofree char *object = gs_view_handle(w->e->object);
  if (w->e->object_kind == GS_OBJECT_DATASET)
    /* TRANSLATORS: a dataset (gs_tensor_dataset) reads this tensor; %s is its handle */
    return g_strdup_printf(_("Read by dataset %s from now on: its bytes count as data"), object);
  return g_strdup_printf(_("Became part of %s %s"), gs_trace_object_kind_name(w->e->object_kind),
                         object);
}

static char *life_storage_alloc(const life_words *w) {
  const gs_trace_event *e = w->e;
  g_autofree char *bytes = gs_view_bytes(e->nbytes);
  if (e->memory != 0) { /* format 1.4: bytes the engine wraps (NumPy's, DLPack's), not its own */
    g_autofree char *from = gs_memory_origin_label(e->memory, e->peer);
    /* TRANSLATORS: "Storage #3 wraps 24 bytes of a DLPack producer: nothing was copied" */
    return g_strdup_printf(_("Storage #%llu wraps %s of %s: nothing was copied"),
                           (unsigned long long)e->storage, bytes, from);
  }
  return g_strdup_printf(_("Storage #%llu allocated: %s"), (unsigned long long)e->storage, bytes);
}

static char *life_storage_share(const life_words *w) {
  g_autofree char *bytes = gs_view_bytes(w->e->nbytes);
  return g_strdup_printf(_("Storage #%llu shares the %s of storage #%llu copy-on-write: "
                           "nothing was copied"),
                         (unsigned long long)w->e->storage, bytes,
                         (unsigned long long)w->e->source);
}

static char *life_storage_materialise(const life_words *w) {
  g_autofree char *bytes = gs_view_bytes(w->e->nbytes);
  return g_strdup_printf(_("Copy-on-write ended: storage #%llu"
                           " copied its %s before a write"),
                         (unsigned long long)w->e->storage, bytes);
}

static char *life_storage_free(const life_words *w) {
  return g_strdup_printf(_("Storage #%llu freed"), (unsigned long long)w->e->storage);
}

static char *life_values(const life_words *w) { return describe_values(w->e); }

static char *life_error(const life_words *w) {
  return g_strdup_printf(_("Error: %s"), w->e->text ? w->e->text : "");
}

/* One description per kind, from the kinds list: a new kind without its life_ function does not
 * compile. */
typedef char *(*kind_life)(const life_words *w);
#define KIND_LIFE(KIND, kind, value, flags) [GS_TRACE_##KIND] = life_##kind,
static const kind_life lives[GS_TRACE_KIND_COUNT] = {GS_TRACE_KINDS(KIND_LIFE)};
#undef KIND_LIFE

char *gs_tensor_life_describe(gs_trace_model *m, const gs_tensor_handles *h,
                              const gs_trace_event *e) {
  const life_words w = {m, h, e};
  if (e->kind > 0 && e->kind < GS_TRACE_KIND_COUNT)
    return lives[e->kind](&w);
  return g_strdup(gs_trace_kind_name(e->kind)); /* "unknown": newer than this inspector */
}
