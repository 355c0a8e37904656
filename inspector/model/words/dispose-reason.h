/* dispose-reason.h: a tensor_dispose event's reason, as the engine writes it in English
 * ("the end of scope 'step'", "gs_zero_grad", "the disposal of module Linear #3"), said in the
 * user's language. The engine's wording is fixed (engine/scope, engine/optim, engine/data,
 * engine/autograd); a reason this does not know is shown as written. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The translated reason, newly allocated; reason itself (copied) if it is not one of the
 * engine's. NULL or "" gives "". */
char *gs_dispose_reason_text(const char *reason);
/* Whether reason is one of the engine's wordings (a test keeps the two in step). */
gboolean gs_dispose_reason_is_known(const char *reason);

G_END_DECLS
