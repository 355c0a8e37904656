/* module.c: parameters (a tensor turned into a parameter by moving its handle) and modules,
 * the containers that own named parameters outside every scope so they survive the scopes of
 * training steps. nn layers build on these. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "autograd-impl.h"
#include "scope-impl.h"
#include "trace-impl.h"

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
  pt->ag.requires_grad = requires_grad;
  return p;
}

bool gs_is_parameter(gs_tensor h) {
  gs__tensor *t = gs__lookup(h, "is_parameter");
  return t && t->is_parameter;
}

/* ---- modules ------------------------------------------------------------------------- */

#define MAX_MODULES 65536u

typedef struct named_parameter {
  char *name;
  gs_tensor tensor;
} named_parameter;

typedef struct module {
  uint32_t index;
  uint32_t generation;
  bool live;
  uint32_t next_free;
  const char *type_name;
  named_parameter *params;
  int n_params, capacity;
} module;

static module *records[MAX_MODULES];
static uint32_t record_count;
static uint32_t free_head = UINT32_MAX;
static pthread_mutex_t modules_lock = PTHREAD_MUTEX_INITIALIZER;

/* The live module a handle names, or NULL after reporting. Modules are used from one thread
 * at a time (like a PyTorch module); the lock guards the table, not concurrent edits. */
static module *lookup(gs_module h, const char *fn) {
  uint32_t index = (uint32_t)(h.id & 0xffffffffu);
  pthread_mutex_lock(&modules_lock);
  module *m = h.id && index < record_count ? records[index] : NULL;
  bool ok = m && m->live && m->generation == (uint32_t)(h.id >> 32);
  pthread_mutex_unlock(&modules_lock);
  if (ok)
    return m;
  gs__error(GS_ERR_STALE_HANDLE, fn, "module handle %#llx is %s", (unsigned long long)h.id,
            !h.id ? "empty" : m ? "stale: the module was disposed" : "not one this process made");
  return NULL;
}

gs_module gs_module_new(const char *type_name) {
  pthread_mutex_lock(&modules_lock);
  module *m;
  if (free_head != UINT32_MAX) {
    m = records[free_head];
    free_head = m->next_free;
  } else if (record_count < MAX_MODULES && (m = calloc(1, sizeof *m))) {
    m->index = record_count;
    m->generation = 1;
    records[record_count++] = m;
  } else {
    pthread_mutex_unlock(&modules_lock);
    gs__error(GS_ERR_OUT_OF_MEMORY, "module_new", "too many modules are alive");
    return (gs_module){0};
  }
  m->live = true;
  m->n_params = 0;
  pthread_mutex_unlock(&modules_lock);
  m->type_name = gs__intern(type_name ? type_name : "Module");
  gs_module h = {((uint64_t)m->generation << 32) | m->index};
  if (gs__trace_on())
    gs__trace_module_create(h.id, m->type_name);
  return h;
}

static int find_param(const module *m, const char *name) {
  for (int i = 0; i < m->n_params; i++)
    if (strcmp(m->params[i].name, name) == 0)
      return i;
  return -1;
}

void gs_module_register_parameter(gs_module mh, const char *name, gs_tensor p) {
  const char *fn = "module_register_parameter";
  module *m = lookup(mh, fn);
  if (!m)
    return;
  if (!name || !*name) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a parameter name, got %s", name ? "\"\"" : "NULL");
    return;
  }
  gs__tensor *t = gs__lookup(p, fn);
  if (!t)
    return;
  if (!t->is_parameter) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "tensor #%u.%u is not a parameter; make one with gs_parameter_new first",
              (unsigned)(p.id & 0xffffffffu), (unsigned)(p.id >> 32));
    return;
  }
  gs__owned *o = &gs__slot_of(t)->own;
  if (o->holder == GS__HELD_BY_MODULE) {
    if (o->holder_id == mh.id && find_param(m, name) >= 0 &&
        m->params[find_param(m, name)].tensor.id == p.id)
      return; /* already registered under this name */
    gs__error(GS_ERR_STATE, fn, "parameter #%u.%u already belongs to a module",
              (unsigned)(p.id & 0xffffffffu), (unsigned)(p.id >> 32));
    return;
  }
  int i = find_param(m, name);
  char *copy = NULL;
  if (i < 0) { /* a new name: make room for it before anything changes */
    if (m->n_params == m->capacity) {
      int cap = m->capacity ? m->capacity * 2 : 8;
      named_parameter *grown = realloc(m->params, (size_t)cap * sizeof *grown);
      if (!grown) {
        gs__error(GS_ERR_OUT_OF_MEMORY, fn, "could not grow the module's parameter list");
        return;
      }
      m->params = grown;
      m->capacity = cap;
    }
    if (!(copy = strdup(name))) {
      gs__error(GS_ERR_OUT_OF_MEMORY, fn, "could not copy the parameter name");
      return;
    }
  }
  gs__own_lock();
  gs__own_set_holder_locked(o, GS__HELD_BY_MODULE, mh.id); /* out of its scope: a detach */
  gs__own_unlock();
  if (i >= 0) { /* replacing a parameter disposes the old one */
    gs_tensor old = m->params[i].tensor;
    m->params[i].tensor = p;
    if (gs__trace_on())
      gs__trace_module_parameter(mh.id, gs__intern(name), p.id);
    if (gs_is_alive(old))
      gs__dispose_as(old, "its replacement in a module");
    return;
  }
  m->params[m->n_params].name = copy;
  m->params[m->n_params].tensor = p;
  m->n_params++;
  if (gs__trace_on())
    gs__trace_module_parameter(mh.id, gs__intern(name), p.id);
}

gs_tensor gs_module_parameter(gs_module mh, const char *name) {
  module *m = lookup(mh, "module_parameter");
  int i = m && name ? find_param(m, name) : -1;
  return i >= 0 ? m->params[i].tensor : GS_NO_TENSOR;
}

int gs_module_parameter_count(gs_module mh) {
  module *m = lookup(mh, "module_parameter_count");
  return m ? m->n_params : -1;
}

gs_tensor gs_module_parameter_at(gs_module mh, int i, const char **name) {
  module *m = lookup(mh, "module_parameter_at");
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

void gs_module_dispose(gs_module mh) {
  module *m = lookup(mh, "module_dispose");
  if (!m)
    return;
  char reason[96];
  snprintf(reason, sizeof reason, "the disposal of module %s #%u", m->type_name, m->index);
  const char *why = gs__intern(reason);
  for (int i = 0; i < m->n_params; i++) {
    if (gs_is_alive(m->params[i].tensor))
      gs__dispose_as(m->params[i].tensor, why);
    free(m->params[i].name);
  }
  free(m->params);
  pthread_mutex_lock(&modules_lock);
  m->params = NULL;
  m->n_params = m->capacity = 0;
  m->live = false;
  m->generation++;
  m->next_free = free_head;
  free_head = m->index;
  pthread_mutex_unlock(&modules_lock);
}
