/* lifecycle.c: the table of layers that take part in a tensor's life (lifecycle.h). Filled
 * by constructors before main, read without a lock afterwards. */
#include <stdio.h>
#include <stdlib.h>

#include "core-impl.h"

gs__lifecycle_hooks gs__lifecycle;

static const gs__lifecycle_i *layers[GS__LIFECYCLE_MAX];
static int layer_count;

#define COLLECT(HOOK)                                                                          \
  do {                                                                                         \
    gs__lifecycle.n_##HOOK = 0;                                                                \
    for (int k = 0; k < layer_count; k++)                                                      \
      if (layers[k]->HOOK)                                                                     \
        gs__lifecycle.HOOK[gs__lifecycle.n_##HOOK++] = layers[k]->HOOK;                        \
  } while (0)

void gs__lifecycle_add(const gs__lifecycle_i *layer) {
  if (layer_count == GS__LIFECYCLE_MAX) {
    fprintf(stderr, "gradscope: too many lifecycle layers (adding %s)\n", layer->layer);
    abort();
  }
  int i = layer_count++;
  for (; i > 0 && layers[i - 1]->rank > layer->rank; i--)
    layers[i] = layers[i - 1];
  layers[i] = layer;
  COLLECT(on_register);
  COLLECT(refuses_dispose);
  COLLECT(dispose_reason);
  COLLECT(on_dispose);
  COLLECT(on_move);
  COLLECT(on_write);
  COLLECT(on_view);
  COLLECT(on_storage_free);
}
