/* worker-logs.h: the log a DataLoader worker process wrote next to the main log.
 *
 * A worker of a program recording to "run.gstrace" records to "run.worker-N.gstrace" (a path
 * without an extension gets ".worker-N"), and the main log says a batch's storage was received
 * from process P. The worker logs' headers carry their pids, so P leads to the worker's log:
 * where the inspector sends the user to see the batch being collated. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The path of the worker log beside log_path whose header says it was recorded by pid, or
 * NULL if there is none (no such file, or the files there are not logs). */
char *gs_worker_log_find(const char *log_path, guint32 pid);

G_END_DECLS
