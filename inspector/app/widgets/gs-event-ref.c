/* gs-event-ref.c: see gs-event-ref.h. */
#include "gs-event-ref.h"

struct _GsEventRef {
  GObject parent_instance;
  guint64 index;
};

G_DEFINE_FINAL_TYPE(GsEventRef, gs_event_ref, G_TYPE_OBJECT)

static void gs_event_ref_class_init(GsEventRefClass *klass) { (void)klass; }

static void gs_event_ref_init(GsEventRef *self) { (void)self; }

GsEventRef *gs_event_ref_new(guint64 index) {
  GsEventRef *self = g_object_new(GS_TYPE_EVENT_REF, NULL);
  self->index = index;
  return self;
}

guint64 gs_event_ref_get_index(GsEventRef *self) {
  g_return_val_if_fail(GS_IS_EVENT_REF(self), 0);
  return self->index;
}
