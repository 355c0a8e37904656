/* gs-thread-list.h: the event list's thread choices as a lazy GListModel of GtkStringObject:
 * "All threads", then "Thread N" for each thread of a trace model, in its order. An item is
 * made when the drop-down asks for it: a log of 100,000 threads made 100,000 strings and
 * objects on the UI thread when it opened. */
#pragma once

#include <gtk/gtk.h>

#include "trace-model.h"

G_BEGIN_DECLS

#define GS_TYPE_THREAD_LIST (gs_thread_list_get_type())
G_DECLARE_FINAL_TYPE(GsThreadList, gs_thread_list, GS, THREAD_LIST, GObject)

GsThreadList *gs_thread_list_new(void);
/* Lists model's threads (borrowed; NULL: none), all rows announced anew. */
void gs_thread_list_set_model(GsThreadList *self, gs_trace_model *model);
/* The model saw new threads: only the rows added are announced. */
void gs_thread_list_model_grew(GsThreadList *self);

G_END_DECLS
