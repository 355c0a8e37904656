/* batch.c: a DataLoader batch as one scoped object (a composite, as a packed sequence is): its
 * tensors are its parts, so moving, detaching or disposing the batch does that to all of them,
 * and the log shows one composite of kind "batch". The loader builds the parts (data/loader.c);
 * this file is the batch's public face. */
#include "gradscope/data.h"
#include "scope-impl.h"

/* The parts of a live batch and how many there are, or -1 after reporting a stale handle. */
static int parts_of(gs_batch b, const char *fn, gs_tensor *parts) {
  gs_tensor local[GS__COMPOSITE_MAX_PARTS];
  gs_tensor *p = parts ? parts : local;
  if (!gs__composite_lookup(b.id, GS_OBJECT_BATCH, fn, p))
    return -1;
  int n = 0;
  while (n < GS__COMPOSITE_MAX_PARTS && p[n].id)
    n++;
  return n;
}

int gs_batch_field_count(gs_batch b) { return parts_of(b, "batch_field_count", NULL); }

gs_tensor gs_batch_field(gs_batch b, int i) {
  gs_tensor parts[GS__COMPOSITE_MAX_PARTS];
  int n = parts_of(b, "batch_field", parts);
  if (n < 0)
    return GS_NO_TENSOR;
  if (i < 0 || i >= n) {
    gs__error(GS_ERR_INDEX, "batch_field", "field %d is out of range for a batch of %d fields",
              i, n);
    return GS_NO_TENSOR;
  }
  return parts[i];
}

int64_t gs_batch_size(gs_batch b) {
  gs_tensor parts[GS__COMPOSITE_MAX_PARTS];
  return parts_of(b, "batch_size", parts) > 0 ? gs_size(parts[0], 0) : -1;
}

bool gs_batch_is_alive(gs_batch b) { return gs__composite_is_alive(b.id); }

void gs_batch_dispose(gs_batch b) {
  if (!b.id)
    return;
  if (parts_of(b, "batch_dispose", NULL) >= 0)
    gs__composite_dispose(b.id, "gs_batch_dispose");
}

gs_scope gs_batch_owner_scope(gs_batch b) {
  return gs__composite_owner_scope(b.id, GS_OBJECT_BATCH, "batch_owner_scope");
}

gs_batch gs_batch_move_to_outer(gs_batch b) {
  return gs__composite_move_to_outer(b.id, GS_OBJECT_BATCH, "batch_move_to_outer") ? b
                                                                                   : GS_NO_BATCH;
}

gs_batch gs_batch_detach_from_scopes(gs_batch b) {
  return gs__composite_detach_from_scopes(b.id, GS_OBJECT_BATCH, "batch_detach_from_scopes")
             ? b
             : GS_NO_BATCH;
}

gs_batch gs_scope_attach_batch(gs_scope sh, gs_batch b) {
  return gs__composite_attach(sh, b.id, GS_OBJECT_BATCH, "batch", "scope_attach_batch")
             ? b
             : GS_NO_BATCH;
}
