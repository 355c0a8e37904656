/* gs-alive-item.h: one row of the memory timeline's alive list: a tensor (or composite) alive
 * at the clicked event, with its texts computed once when the list is filled: handle and
 * name, size, memory category, the op that made it, where the program made it, and who holds
 * it and why it is still alive ("scope step #12; saved by MatmulBackward #88 for backward").
 * Or a group of such objects made at one call site by one op, with one shape and one kind of
 * holder ("200 × randn [64, 32] f32"), whose members open below it. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define GS_TYPE_ALIVE_ITEM (gs_alive_item_get_type())
G_DECLARE_FINAL_TYPE(GsAliveItem, gs_alive_item, GS, ALIVE_ITEM, GObject)

/* Takes copies of the strings. */
GsAliveItem *gs_alive_item_new(guint64 id, guint64 bytes, const char *label, const char *size,
                               const char *category, const char *op, const char *held_by);
/* A group row over members (GsAliveItem; the group takes a reference). id is 0. */
GsAliveItem *gs_alive_item_new_group(GListModel *members, guint64 bytes, const char *label,
                                     const char *size, const char *category, const char *op,
                                     const char *held_by);
void gs_alive_item_set_site(GsAliveItem *self, const char *site);
const char *gs_alive_item_get_site(GsAliveItem *self);
/* A group's members, or NULL for an object's row. */
GListModel *gs_alive_item_get_members(GsAliveItem *self);
guint64 gs_alive_item_get_id(GsAliveItem *self);
guint64 gs_alive_item_get_bytes(GsAliveItem *self);
const char *gs_alive_item_get_label(GsAliveItem *self);
const char *gs_alive_item_get_size(GsAliveItem *self);
const char *gs_alive_item_get_category(GsAliveItem *self);
const char *gs_alive_item_get_op(GsAliveItem *self);
const char *gs_alive_item_get_held_by(GsAliveItem *self);

G_END_DECLS
