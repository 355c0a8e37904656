/* dist-words.c: collectives' and waits' names in the user's language (see the header). */
#include "dist-words.h"

#include <glib/gi18n-lib.h>
#include <string.h>

const char *gs_dist_collective_words(const char *op) {
  if (!strcmp(op, "allreduce"))
    return _("allreduce");
  if (!strcmp(op, "broadcast"))
    return _("broadcast");
  if (!strcmp(op, "allgather"))
    return _("allgather");
  if (!strcmp(op, "reduce_scatter"))
    return _("reduce-scatter");
  if (!strcmp(op, "barrier"))
    return _("barrier");
  return op;
}

const char *gs_dist_wait_words(const char *name) {
  /* The engine's one wait (ddp.c), or a collective that blocked outside it (rank-sync.c). */
  if (!name)
    return name;
  return !strcmp(name, "DDP's bucket allreduces") ? _("DDP's bucket allreduces")
                                                  : gs_dist_collective_words(name);
}
