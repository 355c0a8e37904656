/* gradscope/gradscope.h: the whole public API of the Gradscope engine.
 *
 * Link with `pkg-config --libs gradscope`. The engine depends on libc, libm, pthreads and
 * OpenBLAS only, so it embeds in any C program.
 */
#pragma once

#include "types.h"
#include "error.h"
#include "tensor.h"
#include "ops.h"
#include "memory.h"
#include "autograd.h"
#include "loss.h"
#include "scope.h"
#include "packed.h"
#include "trace.h"
#include "nn.h"
#include "rnn.h"
#include "optim.h"
#include "data.h"
#include "checkpoint.h"
#include "interop.h"
#include "distributed.h"
#include "linalg.h"

#define GS_VERSION_MAJOR 0
#define GS_VERSION_MINOR 1
#define GS_VERSION_MICRO 0
#define GS_VERSION_STRING "0.1.0"
