/* gs-view-format.h: how the scope tree and the tensor details spell numbers, handles, shapes
 * and durations, so the same quantity reads the same in every cell and sentence. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* "#index.generation" of a tensor or scope handle (newly allocated). */
char *gs_view_handle(guint64 id);
/* "[2, 3]" ("[]" for a scalar), newly allocated. */
char *gs_view_shape(const gint64 *shape, int ndim);
/* A duration in ns as "850 ns", "12.3 µs", "4.56 ms", "1.23 s" (newly allocated). */
char *gs_view_duration(guint64 ns);
/* A count with its thousands grouped, "2,700" (the separator is translated; newly
 * allocated). */
char *gs_view_count(guint64 n);
/* Bytes as "24 bytes", "1.5 KiB", "2.0 MiB" (binary units; newly allocated). */
char *gs_view_bytes(guint64 bytes);

G_END_DECLS
