/* gs-alive-item.c: a row of the timeline's alive list (see gs-alive-item.h). */
#include "gs-alive-item.h"

struct _GsAliveItem {
  GObject parent_instance;
  guint64 id, bytes;
  char *label, *size, *category, *op, *held_by, *site;
  GListModel *members; /* a group's, else NULL */
};

G_DEFINE_FINAL_TYPE(GsAliveItem, gs_alive_item, G_TYPE_OBJECT)

static void gs_alive_item_finalize(GObject *object) {
  GsAliveItem *self = GS_ALIVE_ITEM(object);
  g_free(self->label);
  g_free(self->size);
  g_free(self->category);
  g_free(self->op);
  g_free(self->held_by);
  g_free(self->site);
  g_clear_object(&self->members);
  G_OBJECT_CLASS(gs_alive_item_parent_class)->finalize(object);
}

static void gs_alive_item_class_init(GsAliveItemClass *klass) {
  G_OBJECT_CLASS(klass)->finalize = gs_alive_item_finalize;
}

static void gs_alive_item_init(GsAliveItem *self) { (void)self; }

GsAliveItem *gs_alive_item_new(guint64 id, guint64 bytes, const char *label, const char *size,
                               const char *category, const char *op, const char *held_by) {
  GsAliveItem *self = g_object_new(GS_TYPE_ALIVE_ITEM, NULL);
  self->id = id;
  self->bytes = bytes;
  self->label = g_strdup(label);
  self->size = g_strdup(size);
  self->category = g_strdup(category);
  self->op = g_strdup(op);
  self->held_by = g_strdup(held_by);
  return self;
}

GsAliveItem *gs_alive_item_new_group(GListModel *members, guint64 bytes, const char *label,
                                     const char *size, const char *category, const char *op,
                                     const char *held_by) {
  GsAliveItem *self = gs_alive_item_new(0, bytes, label, size, category, op, held_by);
  self->members = g_object_ref(members);
  return self;
}

void gs_alive_item_set_site(GsAliveItem *self, const char *site) {
  g_free(self->site);
  self->site = g_strdup(site);
}

const char *gs_alive_item_get_site(GsAliveItem *self) { return self->site ? self->site : ""; }
GListModel *gs_alive_item_get_members(GsAliveItem *self) { return self->members; }
guint64 gs_alive_item_get_id(GsAliveItem *self) { return self->id; }
guint64 gs_alive_item_get_bytes(GsAliveItem *self) { return self->bytes; }
const char *gs_alive_item_get_label(GsAliveItem *self) { return self->label; }
const char *gs_alive_item_get_size(GsAliveItem *self) { return self->size; }
const char *gs_alive_item_get_category(GsAliveItem *self) { return self->category; }
const char *gs_alive_item_get_op(GsAliveItem *self) { return self->op; }
const char *gs_alive_item_get_held_by(GsAliveItem *self) { return self->held_by; }
