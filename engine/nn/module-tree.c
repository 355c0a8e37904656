/* module-tree.c: walks over a module tree: dotted names as PyTorch's named_parameters()
 * ("encoder.layers.1.bias"), lookup by dotted path, and train/eval mode for a whole tree. */
#include <stdlib.h>
#include <string.h>

#include "core-impl.h"
#include "module-impl.h"
#include "scope-impl.h"

/* ---- dotted paths ---------------------------------------------------------------------- */

/* The module a dotted path's leading steps name, starting at m: on return *last points at the
 * final step (the whole path if it has no dot). NULL if a step names no child. */
static gs__module *walk_path(gs__module *m, const char *path, const char **last) {
  const char *step = path;
  for (const char *dot; m && (dot = strchr(step, '.'));) {
    size_t len = (size_t)(dot - step);
    gs__module *next = NULL;
    for (int i = 0; i < m->n_children; i++)
      if (strlen(m->children[i].name) == len && memcmp(m->children[i].name, step, len) == 0)
        next = gs__module_peek(m->children[i].module);
    m = next;
    step = dot + 1;
  }
  *last = step;
  return m;
}

gs_tensor gs_module_parameter(gs_module mh, const char *name) {
  gs__module *m = gs__module_lookup(mh, "module_parameter");
  if (!m || !name)
    return GS_NO_TENSOR;
  const char *last;
  m = walk_path(m, name, &last);
  for (int i = 0; m && i < m->n_params; i++)
    if (strcmp(m->params[i].name, last) == 0)
      return m->params[i].tensor;
  for (int i = 0; m && i < m->n_computed; i++)
    if (strcmp(m->computed[i].name, last) == 0)
      return m->computed[i].tensor;
  return GS_NO_TENSOR;
}

gs_module gs_module_child(gs_module mh, const char *name) {
  gs__module *m = gs__module_lookup(mh, "module_child");
  if (!m || !name)
    return GS_NO_MODULE;
  const char *last;
  m = walk_path(m, name, &last);
  for (int i = 0; m && i < m->n_children; i++)
    if (strcmp(m->children[i].name, last) == 0)
      return m->children[i].module;
  return GS_NO_MODULE;
}

/* ---- named parameters ------------------------------------------------------------------ */

typedef struct collect {
  int count, capacity;
  char **names;
  gs_tensor *tensors;
  bool failed;
} collect;

static void collect_add(collect *c, const char *prefix, const char *name, gs_tensor t) {
  if (c->failed)
    return;
  if (c->count == c->capacity) {
    int cap = c->capacity ? c->capacity * 2 : 16;
    char **names = realloc(c->names, (size_t)cap * sizeof *names);
    if (names)
      c->names = names;
    gs_tensor *tensors = names ? realloc(c->tensors, (size_t)cap * sizeof *tensors) : NULL;
    if (!tensors) {
      c->failed = true;
      return;
    }
    c->tensors = tensors;
    c->capacity = cap;
  }
  size_t n = strlen(prefix) + strlen(name) + 1;
  char *full = malloc(n);
  if (!full) {
    c->failed = true;
    return;
  }
  snprintf(full, n, "%s%s", prefix, name);
  c->names[c->count] = full;
  c->tensors[c->count++] = t;
}

/* m's parameters, then each child's, depth first; prefix is m's path plus a dot (or ""). */
static void collect_tree(collect *c, const gs__module *m, const char *prefix, int depth) {
  for (int i = 0; i < m->n_params; i++)
    collect_add(c, prefix, m->params[i].name, m->params[i].tensor);
  for (int i = 0; i < m->n_children && !c->failed; i++) {
    const gs__module *child = gs__module_peek(m->children[i].module);
    if (!child || depth > 1000) /* a tree deeper than that is a bug in the caller's code */
      continue;
    size_t n = strlen(prefix) + strlen(m->children[i].name) + 2;
    char *sub = malloc(n);
    if (!sub) {
      c->failed = true;
      return;
    }
    snprintf(sub, n, "%s%s.", prefix, m->children[i].name);
    collect_tree(c, child, sub, depth + 1);
    free(sub);
  }
}

static void free_cache(gs__name_cache *cache) {
  while (cache) {
    gs__name_cache *older = cache->retired;
    for (int i = 0; i < cache->count; i++)
      free(cache->names[i]);
    free(cache->names);
    free(cache->tensors);
    free(cache->unique_names);
    free(cache->unique_tensors);
    free(cache);
    cache = older;
  }
}

static bool same_list(const gs__name_cache *a, const gs__name_cache *b) {
  if (a->count != b->count)
    return false;
  for (int i = 0; i < a->count; i++)
    if (a->tensors[i].id != b->tensors[i].id || strcmp(a->names[i], b->names[i]) != 0)
      return false;
  return true;
}

void gs__module_free_names(gs__module *m) {
  free_cache(m->names);
  m->names = NULL;
}

/* The first path of each parameter, in order (a shared module's parameters are listed once,
 * under the path met first, as torch's named_parameters()). */
static bool keep_unique(gs__name_cache *cache) {
  int n = cache->count;
  cache->unique_names = malloc(sizeof *cache->unique_names * (size_t)(n ? n : 1));
  cache->unique_tensors = malloc(sizeof *cache->unique_tensors * (size_t)(n ? n : 1));
  if (!cache->unique_names || !cache->unique_tensors)
    return false;
  int kept = 0;
  for (int i = 0; i < n; i++) {
    bool seen = false;
    /* Quadratic in the worst case, but only over paths seen before: a tree holds a few hundred
     * parameters and the list is cached until the tree changes. */
    for (int j = 0; j < kept && !seen; j++)
      seen = cache->unique_tensors[j].id == cache->tensors[i].id;
    if (seen)
      continue;
    cache->unique_names[kept] = cache->names[i];
    cache->unique_tensors[kept++] = cache->tensors[i];
  }
  cache->n_unique = kept;
  return true;
}

/* m's name cache, rebuilt if the tree changed since; NULL after reporting. */
static const gs__name_cache *names_of(gs__module *m, const char *fn) {
  uint64_t now = gs__module_edits_now();
  if (!m->names || m->names->edit != now) {
    collect c = {0};
    collect_tree(&c, m, "", 0);
    gs__name_cache *cache = c.failed ? NULL : calloc(1, sizeof *cache);
    if (cache)
      *cache = (gs__name_cache){now, c.count, c.names, c.tensors, 0, NULL, NULL, NULL};
    if (!cache || !keep_unique(cache)) {
      if (cache) {
        free_cache(cache);
      } else {
        for (int i = 0; i < c.count; i++)
          free(c.names[i]);
        free(c.names);
        free(c.tensors);
      }
      gs__error(GS_ERR_OUT_OF_MEMORY, fn, "could not list the parameters of module %s #%u",
                m->type_name, m->index);
      return NULL;
    }
    if (m->names && same_list(m->names, cache)) {
      /* Some other module changed: keep the list handed out, so retired lists grow only with
       * this tree's own changes. */
      free_cache(cache);
      m->names->edit = now;
    } else {
      cache->retired = m->names; /* the previous list stays valid while m lives */
      m->names = cache;
    }
  }
  return m->names;
}

static int list_names(gs_module mh, gs_tensor *out, const char **names_out, int max, bool unique,
                      const char *fn) {
  gs__module *m = gs__module_lookup(mh, fn);
  if (!m)
    return -1;
  if (max < 0) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected max >= 0, got %d", max);
    return -1;
  }
  const gs__name_cache *cache = names_of(m, fn);
  if (!cache)
    return -1;
  int count = unique ? cache->n_unique : cache->count;
  for (int i = 0; i < count && i < max; i++) {
    if (out)
      out[i] = unique ? cache->unique_tensors[i] : cache->tensors[i];
    if (names_out)
      names_out[i] = unique ? cache->unique_names[i] : cache->names[i];
  }
  return count;
}

int gs_module_named_parameters(gs_module m, gs_tensor *out, const char **names_out, int max) {
  return list_names(m, out, names_out, max, true, "module_named_parameters");
}

int gs_module_parameter_paths(gs_module m, gs_tensor *out, const char **names_out, int max) {
  return list_names(m, out, names_out, max, false, "module_parameter_paths");
}

/* ---- train / eval ---------------------------------------------------------------------- */

static void set_training(gs__module *m, bool training, int depth) {
  m->training = training;
  for (int i = 0; i < m->n_children && depth < 1000; i++) {
    gs__module *c = gs__module_peek(m->children[i].module);
    if (c)
      set_training(c, training, depth + 1);
  }
}

void gs_module_train(gs_module mh, bool training) {
  gs__module *m = gs__module_lookup(mh, "module_train");
  if (m)
    set_training(m, training, 0);
}

bool gs_module_is_training(gs_module mh) {
  gs__module *m = gs__module_lookup(mh, "module_is_training");
  return m && m->training;
}
