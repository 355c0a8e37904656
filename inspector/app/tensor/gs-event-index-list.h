/* gs-event-index-list.h: a tensor's life (tensor-life.h: its event indices, ascending) as a
 * lazy GListModel of GsEventRef: a parameter touched by every step of a long run has
 * millions of events, and only the rows on screen become objects. */
#pragma once

#include <gio/gio.h>

#include "tensor-life.h"

G_BEGIN_DECLS

#define GS_TYPE_EVENT_INDEX_LIST (gs_event_index_list_get_type())
G_DECLARE_FINAL_TYPE(GsEventIndexList, gs_event_index_list, GS, EVENT_INDEX_LIST, GObject)

/* Takes life (NULL: none). */
GsEventIndexList *gs_event_index_list_new_take(gs_tensor_life *life);
/* Replaces the life with a newer one of the same tensor (taken). When the old one is a
 * prefix of the new, only the appended rows are announced, so a live run does not reset the
 * list's scrolling. */
void gs_event_index_list_update_take(GsEventIndexList *self, gs_tensor_life *life);
guint64 gs_event_index_list_get_index(GsEventIndexList *self, guint position);
/* How many indices are <= index (the rows not in the future at that event). */
guint gs_event_index_list_count_upto(GsEventIndexList *self, guint64 index);

G_END_DECLS
