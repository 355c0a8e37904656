/* gs-event-ref.h: a row that stands for one event of the model by its index; what the row
 * shows is decoded from the model when the row is bound, so a row costs one integer. */
#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

#define GS_TYPE_EVENT_REF (gs_event_ref_get_type())
G_DECLARE_FINAL_TYPE(GsEventRef, gs_event_ref, GS, EVENT_REF, GObject)

GsEventRef *gs_event_ref_new(guint64 index);
guint64 gs_event_ref_get_index(GsEventRef *self);

G_END_DECLS
