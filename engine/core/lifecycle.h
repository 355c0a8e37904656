/* lifecycle.h: how the layers above the core take part in a tensor's life, without the core
 * naming them (in the spirit of ggml's backend interface, struct ggml_backend_i).
 *
 * A layer fills a gs__lifecycle_i with the hooks it needs (NULL for the others) and adds it at
 * start-up; the core calls the hooks of every added layer, lowest layer first. engine/scope
 * keeps owners and statistics this way, engine/autograd drops graph references, checks
 * in-place writes and counts views.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct gs__slot;
struct gs__tensor;
struct gs__storage;

typedef struct gs__lifecycle_i {
  const char *layer; /* for messages */
  int rank;          /* its place in the stack: hooks run lowest rank first */
  /* A tensor is being registered (its record filled, not yet live or logged). bytes: the fresh
   * storage bytes it brings (0 for views, detaches and clones). */
  void (*on_register)(struct gs__slot *s, uint64_t bytes);
  /* Why the user may not dispose it (a parameter, a gradient...), or NULL. */
  const char *(*refuses_dispose)(const struct gs__slot *s);
  /* Who, if not the program, disposes it through gs_dispose (the engine freeing one of its own
   * temporaries), as the dispose reason the log records; NULL: the program. */
  const char *(*dispose_reason)(const struct gs__slot *s);
  /* It is being disposed (still registered). */
  void (*on_dispose)(struct gs__slot *s);
  /* Its record moved from `from` to `to`, which took its place (a parameter's new handle). */
  void (*on_move)(struct gs__slot *to, struct gs__slot *from);
  /* Before an in-place write into t by op (operand_requires_grad: whether another operand of
   * the op requires grad); false, after reporting, refuses the write. */
  bool (*on_write)(struct gs__tensor *t, bool operand_requires_grad, const char *op);
  /* A new view v, of root (the tensor at the root of its chain of views; NULL if gone). */
  void (*on_view)(struct gs__tensor *v, struct gs__tensor *root);
  /* A storage that keeps a disposed base's view record (gs__storage.orphan, which only
   * engine/autograd sets) is about to be freed. */
  void (*on_storage_free)(struct gs__storage *s);
} gs__lifecycle_i;

/* Adds a layer's hooks; call from a constructor. At most GS__LIFECYCLE_MAX layers. */
#define GS__LIFECYCLE_MAX 4
void gs__lifecycle_add(const gs__lifecycle_i *layer);

/* Each hook of the added layers, lowest rank first, without the NULLs (lifecycle.c): the core
 * calls them on every tensor's creation and disposal, so the loops stay tight. */
typedef struct gs__lifecycle_hooks {
  int n_on_register, n_refuses_dispose, n_dispose_reason, n_on_dispose, n_on_move, n_on_write,
      n_on_view, n_on_storage_free;
  void (*on_register[GS__LIFECYCLE_MAX])(struct gs__slot *s, uint64_t bytes);
  const char *(*refuses_dispose[GS__LIFECYCLE_MAX])(const struct gs__slot *s);
  const char *(*dispose_reason[GS__LIFECYCLE_MAX])(const struct gs__slot *s);
  void (*on_dispose[GS__LIFECYCLE_MAX])(struct gs__slot *s);
  void (*on_move[GS__LIFECYCLE_MAX])(struct gs__slot *to, struct gs__slot *from);
  bool (*on_write[GS__LIFECYCLE_MAX])(struct gs__tensor *t, bool operand_requires_grad,
                                      const char *op);
  void (*on_view[GS__LIFECYCLE_MAX])(struct gs__tensor *v, struct gs__tensor *root);
  void (*on_storage_free[GS__LIFECYCLE_MAX])(struct gs__storage *s);
} gs__lifecycle_hooks;
extern gs__lifecycle_hooks gs__lifecycle;

/* Calls every layer's HOOK with the arguments. */
#define GS__LIFECYCLE_EACH(HOOK, ...)                                                          \
  do {                                                                                         \
    for (int gs__l = 0; gs__l < gs__lifecycle.n_##HOOK; gs__l++)                               \
      gs__lifecycle.HOOK[gs__l](__VA_ARGS__);                                                  \
  } while (0)
