/* packed-sequence.c: PackedSequence as one scoped object: its public functions build the four
 * tensors with the math of engine/nn (while ownership is suspended, so the parts never touch
 * a scope) and register them as one composite. */
#include "gradscope/packed.h"
#include "packed-impl.h"
#include "scope-impl.h"

enum { PART_DATA, PART_BATCH_SIZES, PART_SORTED, PART_UNSORTED, PART_COUNT };

static gs_packed_sequence assemble(bool ok, const gs__packed_parts *p, const char *fn) {
  if (!ok)
    return GS_NO_PACKED_SEQUENCE;
  gs_tensor parts[PART_COUNT] = {p->data, p->batch_sizes, p->sorted_indices,
                                 p->unsorted_indices};
  return (gs_packed_sequence){gs__composite_new(GS_OBJECT_PACKED_SEQUENCE, parts, PART_COUNT, fn)};
}

gs_packed_sequence gs_pack_padded_sequence(gs_tensor input, gs_tensor lengths, bool batch_first,
                                           bool enforce_sorted) {
  gs__packed_parts p;
  gs__ownership_suspend();
  bool ok = gs__pack_padded(input, lengths, batch_first, enforce_sorted, &p);
  gs__ownership_resume();
  return assemble(ok, &p, "pack_padded_sequence");
}

gs_packed_sequence gs_pack_sequence(const gs_tensor *sequences, int count, bool enforce_sorted) {
  gs__packed_parts p;
  gs__ownership_suspend();
  bool ok = gs__pack_sequence(sequences, count, enforce_sorted, &p);
  gs__ownership_resume();
  return assemble(ok, &p, "pack_sequence");
}

gs_packed_sequence gs_packed_sequence_from(gs_tensor data, gs_tensor batch_sizes,
                                           gs_tensor sorted_indices, gs_tensor unsorted_indices) {
  const char *fn = "packed_sequence_from";
  gs__packed_parts given = {data, batch_sizes, sorted_indices, unsorted_indices};
  if (!gs__packed_check(&given, fn))
    return GS_NO_PACKED_SEQUENCE;
  /* The object owns its parts: clones (O(1), in the graph, so gradients reach data), made
   * while ownership is suspended as pack's parts are. */
  gs__packed_parts own = {GS_NO_TENSOR, GS_NO_TENSOR, GS_NO_TENSOR, GS_NO_TENSOR};
  gs__ownership_suspend();
  own.data = gs_clone(data);
  own.batch_sizes = gs_clone(batch_sizes);
  if (sorted_indices.id) {
    own.sorted_indices = gs_clone(sorted_indices);
    own.unsorted_indices = gs_clone(unsorted_indices);
  }
  gs__ownership_resume();
  bool ok = own.data.id && own.batch_sizes.id &&
            (!sorted_indices.id || (own.sorted_indices.id && own.unsorted_indices.id));
  if (!ok) {
    gs_dispose(own.data), gs_dispose(own.batch_sizes);
    gs_dispose(own.sorted_indices), gs_dispose(own.unsorted_indices);
  }
  return assemble(ok, &own, fn);
}

/* The parts of a live packed sequence, or false after reporting a stale one. */
static bool parts_of(gs_packed_sequence ps, const char *fn, gs_tensor *parts) {
  return gs__composite_lookup(ps.id, GS_OBJECT_PACKED_SEQUENCE, fn, parts) != NULL;
}

gs_tensor gs_pad_packed_sequence(gs_packed_sequence ps, bool batch_first, double padding_value,
                                 int64_t total_length, gs_tensor *lengths_out) {
  gs_tensor parts[GS__COMPOSITE_MAX_PARTS];
  if (!parts_of(ps, "pad_packed_sequence", parts))
    return GS_NO_TENSOR;
  gs__packed_parts p = {parts[PART_DATA], parts[PART_BATCH_SIZES], parts[PART_SORTED],
                        parts[PART_UNSORTED]};
  /* Built from several ops, suspended so their temporaries count nowhere; the results then
   * become ordinary new tensors of the current scope, like any op's. */
  gs_tensor lengths = GS_NO_TENSOR;
  gs__ownership_suspend();
  gs_tensor padded = gs__pad_packed(&p, batch_first, padding_value, total_length,
                                    lengths_out ? &lengths : NULL);
  gs__ownership_resume();
  gs__own_adopt(padded);
  gs__own_adopt(lengths);
  if (lengths_out)
    *lengths_out = lengths;
  return padded;
}

bool gs__packed_parts_of(gs_packed_sequence ps, gs__packed_parts *out, const char *fn) {
  gs_tensor parts[GS__COMPOSITE_MAX_PARTS];
  if (!parts_of(ps, fn, parts))
    return false;
  *out = (gs__packed_parts){parts[PART_DATA], parts[PART_BATCH_SIZES], parts[PART_SORTED],
                            parts[PART_UNSORTED]};
  return true;
}

gs_packed_sequence gs__packed_from_parts(const gs__packed_parts *parts, const char *fn) {
  return assemble(true, parts, fn);
}

static gs_tensor part(gs_packed_sequence ps, int which, const char *fn) {
  gs_tensor parts[GS__COMPOSITE_MAX_PARTS];
  return parts_of(ps, fn, parts) ? parts[which] : GS_NO_TENSOR;
}

gs_tensor gs_packed_data(gs_packed_sequence ps) { return part(ps, PART_DATA, "packed_data"); }
gs_tensor gs_packed_batch_sizes(gs_packed_sequence ps) {
  return part(ps, PART_BATCH_SIZES, "packed_batch_sizes");
}
gs_tensor gs_packed_sorted_indices(gs_packed_sequence ps) {
  return part(ps, PART_SORTED, "packed_sorted_indices");
}
gs_tensor gs_packed_unsorted_indices(gs_packed_sequence ps) {
  return part(ps, PART_UNSORTED, "packed_unsorted_indices");
}

bool gs_packed_sequence_is_alive(gs_packed_sequence ps) { return gs__composite_is_alive(ps.id); }

void gs_packed_sequence_dispose(gs_packed_sequence ps) {
  if (!ps.id)
    return;
  if (parts_of(ps, "packed_sequence_dispose", NULL))
    gs__composite_dispose(ps.id, "gs_packed_sequence_dispose");
}

gs_scope gs_packed_owner_scope(gs_packed_sequence ps) {
  return gs__composite_owner_scope(ps.id, GS_OBJECT_PACKED_SEQUENCE, "packed_owner_scope");
}

gs_packed_sequence gs_packed_move_to_outer(gs_packed_sequence ps) {
  return gs__composite_move_to_outer(ps.id, GS_OBJECT_PACKED_SEQUENCE, "packed_move_to_outer")
             ? ps
             : GS_NO_PACKED_SEQUENCE;
}

gs_packed_sequence gs_packed_detach_from_scopes(gs_packed_sequence ps) {
  return gs__composite_detach_from_scopes(ps.id, GS_OBJECT_PACKED_SEQUENCE,
                                          "packed_detach_from_scopes")
             ? ps
             : GS_NO_PACKED_SEQUENCE;
}

gs_packed_sequence gs_scope_attach_packed(gs_scope sh, gs_packed_sequence ps) {
  return gs__composite_attach(sh, ps.id, GS_OBJECT_PACKED_SEQUENCE, "packed sequence",
                              "scope_attach_packed")
             ? ps
             : GS_NO_PACKED_SEQUENCE;
}
