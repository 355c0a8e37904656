/* backward-impl.h: what the backward layer's files share. */
#pragma once

#include "ops-impl.h"

/* Adds grad into the gradient of the tensor that asked node n to retain it (gs_retain_grad);
 * accumulate.c. */
void gs__accumulate_retained(gs__node *n, gs_tensor grad);
