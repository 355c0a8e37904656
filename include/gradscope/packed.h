/* gradscope/packed.h: PackedSequence, PyTorch's layout for a batch of variable-length
 * sequences, as one scoped object.
 *
 * A packed sequence holds four tensors: data [sum(lengths), *] (time step by time step, the
 * sequences that are still running at each step), batch_sizes [max length] (i64, how many
 * sequences run at each step), and sorted_indices / unsorted_indices [batch] (i64; absent when
 * built with enforce_sorted, as PyTorch's None). The four are not registered on scopes one by
 * one: the packed sequence is one object there. Moving, detaching or disposing it does that to
 * all four, and it counts once, in the packed-sequence statistics. Its tensors are borrowed
 * handles: valid while it lives, not to be disposed on their own.
 */
#pragma once

#include "scope.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gs_packed_sequence {
  uint64_t id; /* never equal to a tensor's id */
} gs_packed_sequence;

#define GS_NO_PACKED_SEQUENCE ((gs_packed_sequence){0})

/* Packs input [T, B, *] (or [B, T, *] with batch_first) holding sequences of the given lengths
 * (i64 [B], each in 1..T). enforce_sorted: lengths must be decreasing (else an error), and no
 * permutation is kept; otherwise the batch is sorted by decreasing length (stably). Gradients
 * flow from data back to input. */
GS_API gs_packed_sequence gs_pack_padded_sequence(gs_tensor input, gs_tensor lengths,
                                                  bool batch_first, bool enforce_sorted);
/* Packs count tensors [L_i, *] (same trailing shape and dtype) as torch.nn.utils.rnn
 * pack_sequence does. */
GS_API gs_packed_sequence gs_pack_sequence(const gs_tensor *sequences, int count,
                                           bool enforce_sorted);
/* The padded tensor [T, B, *] (or [B, T, *]) with padding_value after each sequence's end, in
 * the original batch order; T is the longest length, or total_length if that is larger (-1:
 * none). *lengths_out, if not NULL, receives the lengths (i64 [B]). */
GS_API gs_tensor gs_pad_packed_sequence(gs_packed_sequence ps, bool batch_first,
                                        double padding_value, int64_t total_length,
                                        gs_tensor *lengths_out);

/* A packed sequence of the given parts, as torch.nn.utils.rnn.PackedSequence(data,
 * batch_sizes, sorted_indices, unsorted_indices): batch_sizes (i64 [steps]) positive,
 * non-increasing and adding up to data's first dim; sorted_indices and unsorted_indices (i64
 * [batch_sizes[0]], each the other's inverse permutation) both GS_NO_TENSOR or neither. The
 * parts stay the caller's: the packed sequence holds O(1) clones of them, through which
 * gradients flow back to data. */
GS_API gs_packed_sequence gs_packed_sequence_from(gs_tensor data, gs_tensor batch_sizes,
                                                  gs_tensor sorted_indices,
                                                  gs_tensor unsorted_indices);

/* Borrowed handles to the four tensors (GS_NO_TENSOR for absent indices). */
GS_API gs_tensor gs_packed_data(gs_packed_sequence ps);
GS_API gs_tensor gs_packed_batch_sizes(gs_packed_sequence ps);
GS_API gs_tensor gs_packed_sorted_indices(gs_packed_sequence ps);
GS_API gs_tensor gs_packed_unsorted_indices(gs_packed_sequence ps);

GS_API bool gs_packed_sequence_is_alive(gs_packed_sequence ps);
GS_API void gs_packed_sequence_dispose(gs_packed_sequence ps);

/* Scope operations on a packed sequence, as for tensors (see scope.h). */
GS_API gs_scope gs_packed_owner_scope(gs_packed_sequence ps);
GS_API gs_packed_sequence gs_packed_move_to_outer(gs_packed_sequence ps);
GS_API gs_packed_sequence gs_packed_detach_from_scopes(gs_packed_sequence ps);
GS_API gs_packed_sequence gs_scope_attach_packed(gs_scope scope, gs_packed_sequence ps);

#ifdef __cplusplus
}
#endif
