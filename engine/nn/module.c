/* module.c: parameters (a tensor turned into a parameter by moving its handle) and modules:
 * their records, the named parameters and child modules they own outside every scope (so they
 * survive the scopes of training steps), their disposal, and forward dispatch through the
 * module's type. Walks over a tree (dotted names, train mode) are in module-tree.c; nn layers
 * build on both. */
#include <stdlib.h>
#include <string.h>

#include "autograd-impl.h"
#include "module-impl.h"
#include "scope-impl.h"
#include "trace-writer.h"

gs_tensor gs_parameter_new(gs_tensor h, bool requires_grad) {
  const char *fn = "parameter_new";
  gs__tensor *t = gs__lookup(h, fn);
  if (!t)
    return GS_NO_TENSOR;
  if (t->ag.grad_fn) {
    gs__error(GS_ERR_STATE, fn,
              "tensor #%u.%u was made by %s; a parameter must be a leaf: detach it first",
              (unsigned)(h.id & 0xffffffffu), (unsigned)(h.id >> 32), t->ag.grad_fn->kind->name);
    return GS_NO_TENSOR;
  }
  if (requires_grad && !gs_dtype_is_floating(t->dtype)) {
    gs__error(GS_ERR_DTYPE, fn, "only floating tensors can require grad, got %s",
              gs_dtype_name(t->dtype));
    return GS_NO_TENSOR;
  }
  const char *refusal = gs__own_refuses_dispose(&gs__slot_of(t)->own);
  if (refusal) {
    gs__error(GS_ERR_STATE, fn, "tensor #%u.%u %s", (unsigned)(h.id & 0xffffffffu),
              (unsigned)(h.id >> 32), refusal);
    return GS_NO_TENSOR;
  }
  /* The new handle's name is only known once it exists: name it in the old slot after. */
  gs_tensor p = gs__move_handle(h, "a parameter");
  if (!p.id)
    return p;
  char reason[64];
  snprintf(reason, sizeof reason, "parameter #%u.%u", (unsigned)(p.id & 0xffffffffu),
           (unsigned)(p.id >> 32));
  gs__slot_of(gs__lookup(p, fn))->tensor.is_parameter = true;
  gs__rename_disposer(h, gs__intern(reason));
  gs__tensor *pt = gs__lookup(p, fn);
  if (pt->ag.requires_grad != requires_grad) {
    pt->ag.requires_grad = requires_grad;
    if (gs__trace_on()) /* the new handle's flag, after its move in the log */
      gs__trace_requires_grad(p.id, requires_grad);
    else
      gs__trace_skip(1);
  }
  return p;
}

bool gs_is_parameter(gs_tensor h) {
  gs__tensor *t = gs__lookup(h, "is_parameter");
  return t && t->is_parameter;
}

/* ---- module records ------------------------------------------------------------------ */

#define MAX_MODULES 65536u

static gs__pool modules = GS__POOL_INIT("module", sizeof(gs__module), 6, MAX_MODULES, 0);
GS__POOL_GUARD_FORK(modules)
static const gs__handle_kind module_kind = {.pool = &modules, .noun = "module",
                                            .nouns = "modules", .it = "the module",
                                            .ended = "disposed"};
static _Atomic uint64_t edits = 1;

uint64_t gs__module_edits_now(void) { return edits; }
void gs__module_edited(void) { edits++; }

gs__module *gs__module_peek(gs_module h) { return gs__pool_get(&modules, h.id); }

gs__module *gs__module_lookup(gs_module h, const char *fn) {
  gs__module *m = gs__pool_get(&modules, h.id);
  if (!m)
    gs__report_stale(&module_kind, h.id, fn);
  return m;
}

static gs_module module_new(const gs_module_type *type, const char *type_name, void *data) {
  uint64_t id;
  gs__module *m = (gs__module *)gs__pool_take(&modules, &id);
  if (!m) {
    if (type && type->free_data && data)
      type->free_data(data);
    gs__error(GS_ERR_OUT_OF_MEMORY, "module_new", "too many modules are alive");
    return GS_NO_MODULE;
  }
  m->id = id;
  m->index = gs__pool_index(&modules, id);
  m->type = type;
  m->data = data;
  m->training = true; /* PyTorch's default */
  m->holders = 1;     /* the caller's */
  m->parents = NULL;
  m->n_parents = m->parents_capacity = 0;
  m->n_params = m->n_children = 0;
  m->type_name = gs__intern(type_name);
  gs__pool_publish(&modules, &m->pool);
  gs_module h = {id};
  if (gs__trace_on())
    gs__trace_module_create(h.id, m->type_name);
  else
    gs__trace_skip(1);
  return h;
}

gs_module gs_module_new(const char *type_name) {
  return module_new(NULL, type_name ? type_name : "Module", NULL);
}

gs_module gs_module_new_typed(const gs_module_type *type, void *data) {
  if (!type || !type->name || !*type->name) {
    if (type && type->free_data && data)
      type->free_data(data);
    gs__error(GS_ERR_ARGUMENT, "module_new_typed", "expected a module type with a name, got %s",
              type ? "a type without a name" : "NULL");
    return GS_NO_MODULE;
  }
  return module_new(type, type->name, data);
}

const char *gs_module_type_name(gs_module mh) {
  gs__module *m = gs__module_lookup(mh, "module_type_name");
  return m ? m->type_name : NULL;
}

bool gs_module_is_a(gs_module mh, const gs_module_type *type) {
  gs__module *m = gs__module_peek(mh);
  return m && type && m->type == type;
}

/* "a" or "an" before a type name, for messages that read as English. */
static const char *article(const char *name) {
  return name && strchr("AEIOUaeiou", name[0]) && name[0] ? "an" : "a";
}

void *gs__module_data_as(gs_module mh, const gs_module_type *expected, const char *fn) {
  gs__module *m = gs__module_lookup(mh, fn);
  if (!m)
    return NULL;
  if (m->type != expected) {
    const char *want = expected && expected->name ? expected->name : "(untyped)";
    gs__error(GS_ERR_ARGUMENT, fn, "expected %s %s module, got %s %s module", article(want),
              want, article(m->type_name), m->type_name);
    return NULL;
  }
  return m->data;
}

void *gs_module_data(gs_module mh, const gs_module_type *expected) {
  return gs__module_data_as(mh, expected, "module_data");
}

gs_tensor gs_module_forward(gs_module mh, gs_tensor x) {
  gs__module *m = gs__module_lookup(mh, "module_forward");
  if (!m)
    return GS_NO_TENSOR;
  if (!m->type || !m->type->forward) {
    gs__error(GS_ERR_STATE, "module_forward",
              "module %s #%u has no forward function (it is a container: call its children)",
              m->type_name, m->index);
    return GS_NO_TENSOR;
  }
  return m->type->forward(mh, x);
}

/* ---- parameters and children ----------------------------------------------------------- */

static int find_param(const gs__module *m, const char *name) {
  for (int i = 0; i < m->n_params; i++)
    if (strcmp(m->params[i].name, name) == 0)
      return i;
  return -1;
}

static int find_child(const gs__module *m, const char *name) {
  for (int i = 0; i < m->n_children; i++)
    if (strcmp(m->children[i].name, name) == 0)
      return i;
  return -1;
}

/* A name a module may register: non-empty, without '.' (dots separate path steps). */
static bool check_name(const char *name, const char *what, const char *fn) {
  if (!name || !*name) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a %s name, got %s", what, name ? "\"\"" : "NULL");
    return false;
  }
  if (strchr(name, '.')) {
    gs__error(GS_ERR_ARGUMENT, fn, "%s name \"%s\" contains '.': dots separate the steps of a "
              "dotted path, so a name cannot hold one", what, name);
    return false;
  }
  return true;
}

/* Room for one more entry in a growable array. */
static bool grow(void **items, int *capacity, int count, size_t size, const char *fn) {
  if (count < *capacity)
    return true;
  int cap = *capacity ? *capacity * 2 : 8;
  void *grown = realloc(*items, (size_t)cap * size);
  if (!grown) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "could not grow a module's list");
    return false;
  }
  *items = grown;
  *capacity = cap;
  return true;
}

/* A live module other than skip (NULL: any) with an entry naming p, or NULL. Module disposal
 * and replacement are rare, so a walk over the pool is affordable. */
static gs__module *other_lister(gs_tensor p, const gs__module *skip);
static int find_computed(const gs__module *m, const char *name);
static void drop_computed(gs__module *m, int i);

/* m no longer lists p (its entry was replaced, or m goes). A parameter m owns is disposed,
 * unless another module still lists it (a shared one): then that module owns it from now on,
 * as the parameter still belongs to a live model. */
static void let_go_parameter(gs__module *m, gs_tensor p, const char *why, bool m_goes) {
  gs__tensor *t = gs__lookup_quiet(p.id);
  if (!t)
    return;
  for (int i = 0; !m_goes && i < m->n_params; i++)
    if (m->params[i].tensor.id == p.id)
      return; /* m still lists it under another name */
  gs__owned *o = &gs__slot_of(t)->own;
  if (o->holder != GS__HELD_BY_MODULE || o->holder_id != m->id)
    return; /* a shared entry: its owner is another module */
  gs__module *heir = other_lister(p, m);
  if (heir) {
    gs__own_lock();
    gs__own_set_holder_locked(o, GS__HELD_BY_MODULE, heir->id);
    gs__own_unlock();
    return;
  }
  gs__dispose_as(p, why);
}

void gs_module_register_parameter(gs_module mh, const char *name, gs_tensor p) {
  const char *fn = "module_register_parameter";
  gs__module *m = gs__module_lookup(mh, fn);
  if (!m || !check_name(name, "parameter", fn))
    return;
  gs__tensor *t = gs__lookup(p, fn);
  if (!t)
    return;
  if (!t->is_parameter) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "tensor #%u.%u is not a parameter; make one with gs_parameter_new first",
              (unsigned)(p.id & 0xffffffffu), (unsigned)(p.id >> 32));
    return;
  }
  if (find_child(m, name) >= 0) {
    gs__error(GS_ERR_ARGUMENT, fn, "module %s #%u already has a child named \"%s\"",
              m->type_name, m->index, name);
    return;
  }
  int i = find_param(m, name);
  gs__owned *o = &gs__slot_of(t)->own;
  if (i >= 0 && m->params[i].tensor.id == p.id)
    return; /* already registered under this name */
  int computed = find_computed(m, name);
  if (computed >= 0) /* a parameter again where a computed tensor stood (remove_weight_norm) */
    drop_computed(m, computed);
  /* A parameter that already belongs to a module is shared, as torch's tied weights
   * (decoder.weight = encoder.weight) and ParameterList slices: the entry here names it, its
   * owner stays the module that has it (until that one goes: see let_go_parameter). */
  bool shared = o->holder == GS__HELD_BY_MODULE;
  char *copy = NULL;
  if (i < 0) { /* a new name: make room for it before anything changes */
    if (!grow((void **)&m->params, &m->params_capacity, m->n_params, sizeof *m->params, fn))
      return;
    if (!(copy = strdup(name))) {
      gs__error(GS_ERR_OUT_OF_MEMORY, fn, "could not copy the parameter name");
      return;
    }
  }
  if (!shared) {
    gs__own_lock();
    gs__own_set_holder_locked(o, GS__HELD_BY_MODULE, mh.id); /* out of its scope: a detach */
    gs__own_unlock();
  }
  gs__module_edited();
  gs_tensor old = GS_NO_TENSOR;
  if (i >= 0) { /* replacing a parameter disposes the old one */
    old = m->params[i].tensor;
    m->params[i].tensor = p;
  } else {
    m->params[m->n_params++] = (gs__named_parameter){copy, p};
  }
  if (gs__trace_on())
    gs__trace_module_parameter(mh.id, gs__intern(name), p.id);
  else
    gs__trace_skip(1);
  if (old.id)
    let_go_parameter(m, old, "its replacement in a module", false);
}

/* Index of m's computed entry name, or -1. */
static int find_computed(const gs__module *m, const char *name) {
  for (int i = 0; i < m->n_computed; i++)
    if (strcmp(m->computed[i].name, name) == 0)
      return i;
  return -1;
}

static void drop_computed(gs__module *m, int i) {
  free(m->computed[i].name);
  memmove(m->computed + i, m->computed + i + 1,
          sizeof *m->computed * (size_t)(m->n_computed - i - 1));
  m->n_computed--;
}

void gs_module_set_computed(gs_module mh, const char *name, gs_tensor t) {
  const char *fn = "module_set_computed";
  gs__module *m = gs__module_lookup(mh, fn);
  if (!m || !check_name(name, "computed tensor", fn))
    return;
  int i = find_computed(m, name);
  if (t.id == 0) {
    if (i >= 0)
      drop_computed(m, i);
    return;
  }
  gs__tensor *tensor = gs__lookup(t, fn);
  if (!tensor)
    return;
  if (find_param(m, name) >= 0 || find_child(m, name) >= 0) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "module %s #%u already has a %s named \"%s\" (a computed tensor stands in for "
              "a parameter that is not there)",
              m->type_name, m->index, find_param(m, name) >= 0 ? "parameter" : "child", name);
    return;
  }
  if (i >= 0) {
    m->computed[i].tensor = t;
    return;
  }
  char *copy = strdup(name);
  if (!copy ||
      !grow((void **)&m->computed, &m->computed_capacity, m->n_computed, sizeof *m->computed, fn)) {
    free(copy);
    if (!copy)
      gs__error(GS_ERR_OUT_OF_MEMORY, fn, "could not copy the name");
    return;
  }
  m->computed[m->n_computed++] = (gs__named_parameter){copy, t};
}

gs_tensor gs_module_remove_parameter(gs_module mh, const char *name, bool *callers) {
  const char *fn = "module_remove_parameter";
  if (callers)
    *callers = false;
  gs__module *m = gs__module_lookup(mh, fn);
  if (!m || !check_name(name, "parameter", fn))
    return GS_NO_TENSOR;
  int i = find_param(m, name);
  if (i < 0) {
    gs__error(GS_ERR_ARGUMENT, fn, "module %s #%u has no parameter named \"%s\"", m->type_name,
              m->index, name);
    return GS_NO_TENSOR;
  }
  gs_tensor p = m->params[i].tensor;
  free(m->params[i].name);
  memmove(m->params + i, m->params + i + 1, sizeof *m->params * (size_t)(m->n_params - i - 1));
  m->n_params--;
  gs__module_edited();
  gs__tensor *t = gs__lookup_quiet(p.id);
  if (!t)
    return GS_NO_TENSOR;
  for (int k = 0; k < m->n_params; k++)
    if (m->params[k].tensor.id == p.id)
      return p; /* m still lists it under another name, and still owns it */
  gs__owned *o = &gs__slot_of(t)->own;
  if (o->holder != GS__HELD_BY_MODULE || o->holder_id != m->id)
    return p; /* a shared entry: its owner is another module */
  gs__module *heir = other_lister(p, m);
  gs__own_lock();
  /* another module lists it: it owns it from now on; else the caller does (as torch's pop
   * hands the Parameter back to the program) */
  gs__own_set_holder_locked(o, heir ? GS__HELD_BY_MODULE : GS__HELD_BY_CALLER, heir ? heir->id : 0);
  gs__own_unlock();
  if (callers)
    *callers = heir == NULL;
  return p;
}

static void destroy(gs__module *m, const char *why);
static void unlink_child(gs__module *parent, gs__module *c, const char *slot, const char *why,
                         bool log);

/* Whether target is m or below it (a walk over m's children; shared modules make the tree a
 * DAG, so this is how a cycle is found, not a walk up one parent chain). */
static bool reaches(const gs__module *m, const gs__module *target, int depth) {
  if (m == target)
    return true;
  for (int i = 0; i < m->n_children && depth < 1000; i++) {
    const gs__module *c = gs__module_peek(m->children[i].module);
    if (c && reaches(c, target, depth + 1))
      return true;
  }
  return false;
}

/* "Sequential #2" or "Sequential #2 and 1 other module" for messages about c's parents. */
static void describe_parents(const gs__module *c, char *buf, size_t size) {
  const gs__module *p = c->n_parents ? gs__module_peek((gs_module){c->parents[0]}) : NULL;
  int n = snprintf(buf, size, "%s #%u", p ? p->type_name : "a module", p ? p->index : 0u);
  if (c->n_parents > 1 && n > 0 && (size_t)n < size)
    snprintf(buf + n, size - (size_t)n, " (and %d other slot%s)", c->n_parents - 1,
             c->n_parents > 2 ? "s" : "");
}

/* Puts ch in m's slot name: a new slot at position at (-1: the end), or the slot of that name
 * replaced in place. */
static void register_child(gs_module mh, const char *name, gs_module ch, int at, const char *fn) {
  gs__module *m = gs__module_lookup(mh, fn);
  if (!m || !check_name(name, "child", fn))
    return;
  gs__module *c = gs__module_lookup(ch, fn);
  if (!c)
    return;
  if (find_param(m, name) >= 0) {
    gs__error(GS_ERR_ARGUMENT, fn, "module %s #%u already has a parameter named \"%s\"",
              m->type_name, m->index, name);
    return;
  }
  int i = find_child(m, name);
  if (i >= 0 && m->children[i].module.id == ch.id)
    return; /* already registered under this name: the caller keeps its hold */
  /* No cycles: m may be neither the child nor below it. */
  if (reaches(c, m, 0)) {
    gs__error(GS_ERR_ARGUMENT, fn, "module %s #%u cannot be a child of %s #%u: it %s", c->type_name,
              c->index, m->type_name, m->index,
              c == m ? "is the same module" : "is one of its ancestors");
    return;
  }
  /* The new slot takes over one of the caller's holds, as registering always did: a module
   * that only its parents hold must be retained by the caller before it is shared. */
  if (c->holders < 1) {
    char parents[96];
    describe_parents(c, parents, sizeof parents);
    gs__error(GS_ERR_STATE, fn,
              "module %s #%u is held only by its parent %s: call gs_module_retain on it first "
              "to share it with %s #%u",
              c->type_name, c->index, parents, m->type_name, m->index);
    return;
  }
  char *copy = NULL;
  if (i < 0) {
    if (!grow((void **)&m->children, &m->children_capacity, m->n_children, sizeof *m->children,
              fn))
      return;
    if (!(copy = strdup(name))) {
      gs__error(GS_ERR_OUT_OF_MEMORY, fn, "could not copy the child name");
      return;
    }
  }
  if (!grow((void **)&c->parents, &c->parents_capacity, c->n_parents, sizeof *c->parents, fn)) {
    free(copy);
    return;
  }
  c->holders--;
  c->parents[c->n_parents++] = mh.id;
  gs__module_edited();
  gs__module *old = NULL;
  if (i >= 0) { /* replacing a child lets go of the old one (disposed if no one else holds it) */
    old = gs__module_peek(m->children[i].module);
    m->children[i].module = ch;
  } else {
    if (at < 0 || at > m->n_children)
      at = m->n_children;
    memmove(m->children + at + 1, m->children + at,
            sizeof *m->children * (size_t)(m->n_children - at));
    m->children[at] = (gs__named_child){copy, ch};
    m->n_children++;
  }
  if (gs__trace_on())
    gs__trace_module_child(mh.id, ch.id, gs__intern(name));
  else
    gs__trace_skip(1);
  if (old)
    unlink_child(m, old, NULL, gs__intern("its replacement in a module"), false);
}

void gs_module_register_child(gs_module m, const char *name, gs_module child) {
  register_child(m, name, child, -1, "module_register_child");
}

void gs_module_insert_child(gs_module mh, int index, const char *name, gs_module child) {
  const char *fn = "module_insert_child";
  int n = gs_module_child_count(mh);
  if (n < 0)
    return;
  if (index < 0 || index > n) {
    gs__error(GS_ERR_INDEX, fn,
              "index %d is out of range for inserting into a module with %d "
              "children (0 to %d)",
              index, n, n);
    return;
  }
  if (gs_module_child(mh, name).id) {
    gs__error(GS_ERR_ARGUMENT, fn, "the module already has a child named \"%s\"", name);
    return;
  }
  register_child(mh, name, child, index, fn);
}

gs_module gs_module_retain(gs_module mh) {
  gs__module *m = gs__module_lookup(mh, "module_retain");
  if (!m)
    return GS_NO_MODULE;
  m->holders++;
  return mh;
}

void gs_module_remove_child(gs_module mh, const char *name) {
  const char *fn = "module_remove_child";
  gs__module *m = gs__module_lookup(mh, fn);
  if (!m || !check_name(name, "child", fn))
    return;
  int i = find_child(m, name);
  if (i < 0) {
    gs__error(GS_ERR_ARGUMENT, fn, "module %s #%u has no child named \"%s\"", m->type_name,
              m->index, name);
    return;
  }
  gs__module *c = gs__module_peek(m->children[i].module);
  char *slot = m->children[i].name;
  memmove(m->children + i, m->children + i + 1,
          sizeof *m->children * (size_t)(m->n_children - i - 1));
  m->n_children--;
  gs__module_edited();
  char reason[96];
  snprintf(reason, sizeof reason, "its removal from module %s #%u", m->type_name, m->index);
  if (c)
    unlink_child(m, c, slot, gs__intern(reason), true);
  free(slot);
}

void gs_module_rename_child(gs_module mh, const char *name, const char *new_name) {
  const char *fn = "module_rename_child";
  gs__module *m = gs__module_lookup(mh, fn);
  if (!m || !check_name(name, "child", fn) || !check_name(new_name, "child", fn))
    return;
  int i = find_child(m, name);
  if (i < 0) {
    gs__error(GS_ERR_ARGUMENT, fn, "module %s #%u has no child named \"%s\"", m->type_name,
              m->index, name);
    return;
  }
  if (strcmp(name, new_name) == 0)
    return;
  if (find_child(m, new_name) >= 0 || find_param(m, new_name) >= 0) {
    gs__error(GS_ERR_ARGUMENT, fn, "module %s #%u already has a %s named \"%s\"", m->type_name,
              m->index, find_child(m, new_name) >= 0 ? "child" : "parameter", new_name);
    return;
  }
  char *copy = strdup(new_name);
  if (!copy) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "could not copy the child name");
    return;
  }
  char *old = m->children[i].name;
  m->children[i].name = copy;
  gs__module_edited();
  /* A renamed slot counts as made now, as the log's reader sees it (a new slot, the old one
   * emptied): its parent entry moves to the end of the child's list. */
  gs__module *c = gs__module_peek(m->children[i].module);
  for (int k = 0; c && k < c->n_parents; k++)
    if (c->parents[k] == mh.id) {
      memmove(c->parents + k, c->parents + k + 1,
              sizeof *c->parents * (size_t)(c->n_parents - k - 1));
      c->parents[c->n_parents - 1] = mh.id;
      break;
    }
  /* In the log: the child in its new slot, then the old slot emptied (child 0). */
  if (gs__trace_on()) {
    gs__trace_module_child(mh.id, m->children[i].module.id, gs__intern(new_name));
    gs__trace_module_child(mh.id, 0, gs__intern(old));
  } else {
    gs__trace_skip(2);
  }
  free(old);
}

gs_tensor gs_module_parameter_at(gs_module mh, int i, const char **name) {
  gs__module *m = gs__module_lookup(mh, "module_parameter_at");
  if (!m)
    return GS_NO_TENSOR;
  if (i < 0 || i >= m->n_params) {
    gs__error(GS_ERR_INDEX, "module_parameter_at",
              "index %d is out of range for a module with %d parameters", i, m->n_params);
    return GS_NO_TENSOR;
  }
  if (name)
    *name = m->params[i].name;
  return m->params[i].tensor;
}

int gs_module_parameter_count(gs_module mh) {
  gs__module *m = gs__module_lookup(mh, "module_parameter_count");
  return m ? m->n_params : -1;
}

int gs_module_child_count(gs_module mh) {
  gs__module *m = gs__module_lookup(mh, "module_child_count");
  return m ? m->n_children : -1;
}

gs_module gs_module_child_at(gs_module mh, int i, const char **name) {
  gs__module *m = gs__module_lookup(mh, "module_child_at");
  if (!m)
    return GS_NO_MODULE;
  if (i < 0 || i >= m->n_children) {
    gs__error(GS_ERR_INDEX, "module_child_at",
              "index %d is out of range for a module with %d children", i, m->n_children);
    return GS_NO_MODULE;
  }
  if (name)
    *name = m->children[i].name;
  return m->children[i].module;
}

gs_module gs_module_parent(gs_module mh) {
  gs__module *m = gs__module_lookup(mh, "module_parent");
  return m && m->n_parents ? (gs_module){m->parents[0]} : GS_NO_MODULE;
}

int gs_module_parent_count(gs_module mh) {
  gs__module *m = gs__module_lookup(mh, "module_parent_count");
  return m ? m->n_parents : -1;
}

int gs_module_holder_count(gs_module mh) {
  gs__module *m = gs__module_lookup(mh, "module_holder_count");
  return m ? m->holders : -1;
}

/* ---- disposal ---------------------------------------------------------------------------- */

/* Drops one of c's parent entries (parent's slot, already gone from parent's list). c goes
 * too if nothing holds it any more; otherwise it lives on under its other owners, and when
 * log is set (or c survives a parent's disposal) the log says its slot was emptied, so a
 * reader's tree follows. */
static void unlink_child(gs__module *parent, gs__module *c, const char *slot, const char *why,
                         bool log) {
  for (int k = 0; k < c->n_parents; k++)
    if (c->parents[k] == parent->id) {
      memmove(c->parents + k, c->parents + k + 1,
              sizeof *c->parents * (size_t)(c->n_parents - k - 1));
      c->n_parents--;
      break;
    }
  bool survives = c->holders > 0 || c->n_parents > 0;
  if (slot && (log || survives)) {
    if (gs__trace_on())
      gs__trace_module_child(parent->id, 0, gs__intern(slot));
    else
      gs__trace_skip(1);
  }
  if (!survives)
    destroy(c, why);
}

/* Frees m: each child slot let go (a child no one else holds goes too, depth first), then
 * m's own parameters; each parameter goes stale naming the disposal that was asked for. */
static void destroy(gs__module *m, const char *why) {
  for (int i = 0; i < m->n_children; i++) {
    gs__module *c = gs__module_peek(m->children[i].module);
    if (c)
      unlink_child(m, c, m->children[i].name, why, false);
    free(m->children[i].name);
  }
  for (int i = 0; i < m->n_params; i++) {
    let_go_parameter(m, m->params[i].tensor, why, true);
    free(m->params[i].name);
  }
  if (m->type && m->type->free_data && m->data)
    m->type->free_data(m->data);
  for (int i = 0; i < m->n_computed; i++)
    free(m->computed[i].name);
  free(m->computed);
  m->computed = NULL;
  m->n_computed = m->computed_capacity = 0;
  gs__module_free_names(m);
  free(m->params);
  free(m->children);
  free(m->parents);
  gs__module_edited();
  m->params = NULL;
  m->children = NULL;
  m->parents = NULL;
  m->data = NULL;
  m->n_params = m->params_capacity = 0;
  m->n_children = m->children_capacity = 0;
  m->n_parents = m->parents_capacity = 0;
  m->holders = 0;
  /* A module's disposal is not in the log, but takes an event number as disposals do, so
   * that its stale handles can say when it went. */
  gs__pool_release(&modules, m->id, why, gs__next_event(), GS__POOL_DISPOSED);
}

void gs_module_dispose(gs_module mh) {
  gs__module *m = gs__module_lookup(mh, "module_dispose");
  if (!m)
    return;
  if (m->holders < 1) {
    char parents[96];
    describe_parents(m, parents, sizeof parents);
    gs__error(GS_ERR_STATE, "module_dispose",
              "module %s #%u is a child of %s and held by no caller; it is disposed with its "
              "parent",
              m->type_name, m->index, parents);
    return;
  }
  if (--m->holders > 0 || m->n_parents > 0)
    return; /* still held: by another holder or a parent */
  char reason[96];
  snprintf(reason, sizeof reason, "the disposal of module %s #%u", m->type_name, m->index);
  destroy(m, gs__intern(reason));
}

static gs__module *other_lister(gs_tensor p, const gs__module *skip) {
  uint32_t count = atomic_load_explicit(&modules.count, memory_order_acquire);
  for (uint32_t i = 0; i < count; i++) {
    gs__module *m = (gs__module *)gs__pool_slot_of(&modules, i);
    if (m == skip || !atomic_load_explicit(&m->pool.live, memory_order_acquire))
      continue;
    for (int k = 0; k < m->n_params; k++)
      if (m->params[k].tensor.id == p.id)
        return m;
  }
  return NULL;
}

/* ---- a late log's snapshot (trace/snapshot.c) ----------------------------------------- */

/* Every live module as its module_create, then the trees: each child and parameter under the
 * name it was given (after every module exists, as a reader places a child by its id). */
static uint64_t snapshot_modules(void) {
  uint32_t count = atomic_load_explicit(&modules.count, memory_order_acquire);
  for (int pass = 0; pass < 2; pass++)
    for (uint32_t i = 0; i < count; i++) {
      gs__module *m = (gs__module *)gs__pool_slot_of(&modules, i);
      if (!atomic_load_explicit(&m->pool.live, memory_order_acquire))
        continue;
      if (pass == 0) {
        gs__trace_snapshot_event(&(gs_trace_event){.kind = GS_TRACE_MODULE_CREATE, .module = m->id,
                                                   .name = gs__trace_string(m->type_name)});
        continue;
      }
      for (int c = 0; c < m->n_children; c++)
        gs__trace_snapshot_event(&(gs_trace_event){
            .kind = GS_TRACE_MODULE_CHILD, .module = m->id, .child = m->children[c].module.id,
            .name = gs__trace_string(gs__intern(m->children[c].name))});
      for (int p = 0; p < m->n_params; p++)
        gs__trace_snapshot_event(&(gs_trace_event){
            .kind = GS_TRACE_MODULE_PARAMETER, .module = m->id,
            .name = gs__trace_string(gs__intern(m->params[p].name)),
            .tensor = m->params[p].tensor.id});
    }
  return 0; /* modules are not objects scopes own: their parameters were counted as tensors */
}

__attribute__((constructor)) static void register_module_snapshot(void) {
  gs__trace_add_snapshot_hook(50, snapshot_modules);
}
