/* module-impl.h: the module record, shared by module.c (records, parameters, children,
 * disposal, forward dispatch) and module-tree.c (walks over the tree: dotted names, train
 * mode). Modules are used from one thread at a time, as a PyTorch module is: the module pool
 * finds records from any thread, but nothing guards concurrent edits of one module. */
#pragma once

#include "gradscope/scope.h"

typedef struct gs__named_parameter {
  char *name;
  gs_tensor tensor;
} gs__named_parameter;

typedef struct gs__named_child {
  char *name;
  gs_module module;
} gs__named_child;

/* Dotted names of a tree's parameters, built on demand: every path (count, names, tensors: a
 * shared module's parameters under each of its paths, as a state dict lists them) and the
 * first path of each parameter (n_unique, unique_names, unique_tensors: pointers into the
 * same strings, as named_parameters() lists them). Caches replaced by a newer one are kept
 * (retired) until the module is disposed, so names handed out stay valid while it lives. */
typedef struct gs__name_cache {
  uint64_t edit;    /* gs__module_edits when it was built */
  int count;
  char **names;
  gs_tensor *tensors;
  int n_unique;
  const char **unique_names;
  gs_tensor *unique_tensors;
  struct gs__name_cache *retired;
} gs__name_cache;

/* A module's record in the module pool (module.c). */
typedef struct gs__module {
  gs__pool_slot pool;
  uint64_t id;           /* its handle while it lives */
  uint32_t index;        /* its slot: the number messages call it by ("Linear #3") */
  const gs_module_type *type;
  const char *type_name; /* interned */
  void *data;            /* the type's own configuration (freed by type->free_data) */
  bool training;
  /* Shared ownership: a module lives while someone holds it. Its owners are its holders (the
   * caller that made it, each gs_module_retain) and its parents' child slots (one entry per
   * slot that names it, in the order they were made (a renamed slot counts as made anew, as
   * the log shows it), so parents[0] is the first parent). */
  int holders;
  uint64_t *parents;
  int n_parents, parents_capacity;
  gs__named_parameter *params;
  int n_params, params_capacity;
  /* Tensors computed from parameters that the forward reads under a parameter's name
   * (gs_module_set_computed: weight_norm's weight), borrowed, not owned */
  gs__named_parameter *computed;
  int n_computed, computed_capacity;
  gs__named_child *children;
  int n_children, children_capacity;
  gs__name_cache *names;
} gs__module;

/* The live module a handle names, or NULL after reporting a stale or empty handle as an
 * error of fn. */
gs__module *gs__module_lookup(gs_module h, const char *fn);
/* m's data if it is of type expected, else NULL after reporting as an error of fn. */
void *gs__module_data_as(gs_module m, const gs_module_type *expected, const char *fn);
/* The same, without reporting (NULL for anything but a live module). */
gs__module *gs__module_peek(gs_module h);

/* Bumped by every change to any module's parameters or children: a name cache older than
 * this is rebuilt. */
uint64_t gs__module_edits_now(void);
void gs__module_edited(void);

/* Frees a module's name caches (module-tree.c), at disposal. */
void gs__module_free_names(gs__module *m);
