/* cross-entropy.h: the label-smoothed cross entropy as one pass and one node
 * (cross-entropy.c), which loss.c's cross_entropy takes when it applies. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "gradscope/loss.h"
#include "gradscope/types.h"

/* cross_entropy(logits [N, C], targets [N] i64 class indices, both checked by the caller,
 * with no class weight) with label smoothing eps, into *result (GS_NO_TENSOR after an error
 * it reported); false, with nothing made, where rows would be weighed: a target equal to
 * *ignore_index (NULL: none). */
bool gs__cross_entropy_fused(gs_tensor logits, gs_tensor targets, gs_reduction reduction,
                             double eps, const int64_t *ignore_index, gs_tensor *result);
