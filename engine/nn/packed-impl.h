/* packed-impl.h: the math of PackedSequence (torch.nn.utils.rnn), apart from its life as one
 * scoped object.
 *
 * These functions only compute: they take and return plain tensor handles, which the caller
 * (the packed-sequence object in packed.c) then owns as one unit. Each validates everything
 * before creating anything, reports errors as the public call it serves (fn
 * "pack_padded_sequence", "pack_sequence", "pad_packed_sequence"), and builds its results with
 * differentiable ops (cat, index_select, reshape), so gradients flow from the packed data back
 * to the padded input and from the padded output back to the packed data.
 */
#pragma once

#include "gradscope/gradscope.h"

/* The library hides every symbol the public headers do not name (-fvisibility=hidden); these
 * three are exported all the same, under their private gs__ names, so that the engine tests
 * can check the math on its own. They are not API: nothing installed declares them. */
#define GS__PACKED_TESTABLE __attribute__((visibility("default")))

/* The four tensors of a packed sequence, as handles the caller owns:
 *   data             [sum(lengths), *], input's dtype: time step by time step, the sequences
 *                    still running at that step, longest first;
 *   batch_sizes      i64 [max length]: how many sequences run at each step;
 *   sorted_indices   i64 [B]: sorted position -> original batch index;
 *   unsorted_indices i64 [B]: its inverse (original batch index -> sorted position).
 * Both index tensors are GS_NO_TENSOR when the batch was packed with enforce_sorted (PyTorch's
 * None): the sorted order is then the original order. */
typedef struct gs__packed_parts {
  gs_tensor data, batch_sizes, sorted_indices, unsorted_indices;
} gs__packed_parts;

/* pack_padded_sequence: input [T, B, *] (or [B, T, *] with batch_first), lengths 1-D with B
 * values, each in 1..T (any dtype; converted to i64 as PyTorch's lengths.to(int64) does, so
 * floating lengths truncate). With enforce_sorted the lengths must not increase; otherwise the
 * batch is sorted by decreasing length, stably. Returns false after reporting, with nothing
 * created and *out all GS_NO_TENSOR. */
GS__PACKED_TESTABLE bool gs__pack_padded(gs_tensor input, gs_tensor lengths, bool batch_first,
                                         bool enforce_sorted, gs__packed_parts *out);

/* pack_sequence: count tensors [L_i, *] of one dtype and one trailing shape, each L_i >= 1.
 * Same conventions as gs__pack_padded. */
GS__PACKED_TESTABLE bool gs__pack_sequence(const gs_tensor *sequences, int count,
                                           bool enforce_sorted, gs__packed_parts *out);

/* pad_packed_sequence: the padded tensor [T, B, *] (or [B, T, *] with batch_first) in the
 * original batch order, padding_value after each sequence's end. T is the longest length, or
 * total_length when that is given (-1: not given) and must then be at least the longest
 * length. *lengths_out, if not NULL, receives the lengths (i64 [B], original order). Returns
 * GS_NO_TENSOR (and *lengths_out GS_NO_TENSOR) after reporting; parts that do not describe a
 * packed sequence are reported too. */
GS__PACKED_TESTABLE gs_tensor gs__pad_packed(const gs__packed_parts *parts, bool batch_first,
                                             double padding_value, int64_t total_length,
                                             gs_tensor *lengths_out);

/* Whether parts (borrowed) describe a packed sequence: batch_sizes positive, non-increasing
 * and adding up to data's rows, both index lists (permutations of the batch, each the other's
 * inverse) or neither. False after reporting what is wrong as an error of fn. */
GS__PACKED_TESTABLE bool gs__packed_check(const gs__packed_parts *parts, const char *fn);

/* ---- the packed-sequence object's parts, for layers that consume and produce one
 * (packed-sequence.c) ------------------------------------------------------------------- */

/* The four parts of a live packed sequence (borrowed), or false after reporting a stale one
 * as an error of fn. */
bool gs__packed_parts_of(gs_packed_sequence ps, gs__packed_parts *out, const char *fn);
/* A packed sequence made of parts the caller created while ownership was suspended (they
 * become its own), registered as one object on the current scope; GS_NO_PACKED_SEQUENCE if
 * it cannot be made. */
gs_packed_sequence gs__packed_from_parts(const gs__packed_parts *parts, const char *fn);
