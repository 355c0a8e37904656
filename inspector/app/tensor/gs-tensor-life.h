/* gs-tensor-life.h: one event of a tensor's life, told from that tensor's side ("cloned into
 * #5.1: nothing was copied", "owner: scope step #7.1 → scope epoch #1.1", "in-place add_:
 * version 2"), as the tensor details panel lists them. A tensor moved into a parameter keeps
 * one life: events of the parameter's new handle are told as its own. */
#pragma once

#include <glib.h>

#include "trace-model.h"

G_BEGIN_DECLS

/* Which handles are "this tensor": the one selected and, once it was moved into a parameter,
 * the parameter's handle. */
typedef struct gs_tensor_handles {
  guint64 id;
  guint64 moved_to; /* 0 if never moved */
} gs_tensor_handles;

/* One translated sentence for event e (decoded from m) in the life of handles. Newly
 * allocated. */
char *gs_tensor_life_describe(gs_trace_model *m, const gs_tensor_handles *handles,
                              const gs_trace_event *e);

/* Who an ownership change names, translated: "caller", "scope step #7.1", "module Linear
 * #2.1", "PackedSequence #3.1", "gradient of #4.1", "the engine". Newly allocated. */
char *gs_tensor_life_holder(gs_trace_model *m, guint32 holder, guint64 owner);

G_END_DECLS
