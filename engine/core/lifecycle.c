/* lifecycle.c: the table of layers that take part in a tensor's life (lifecycle.h). Filled
 * by constructors before main, read without a lock afterwards. */
#include <stdio.h>
#include <stdlib.h>

#include "core-impl.h"

const gs__lifecycle_i *gs__lifecycle[GS__LIFECYCLE_MAX];
int gs__lifecycle_count;

void gs__lifecycle_add(const gs__lifecycle_i *layer) {
  if (gs__lifecycle_count == GS__LIFECYCLE_MAX) {
    fprintf(stderr, "gradscope: too many lifecycle layers (adding %s)\n", layer->layer);
    abort();
  }
  int i = gs__lifecycle_count++;
  for (; i > 0 && gs__lifecycle[i - 1]->rank > layer->rank; i--)
    gs__lifecycle[i] = gs__lifecycle[i - 1];
  gs__lifecycle[i] = layer;
}
