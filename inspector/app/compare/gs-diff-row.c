/* gs-diff-row.c: a borrowed gs_run_diff_row in a GObject (see the header). */
#include "gs-diff-row.h"

struct _GsDiffRow {
  GObject parent_instance;
  const gs_run_diff_row *row;
};

G_DEFINE_FINAL_TYPE(GsDiffRow, gs_diff_row, G_TYPE_OBJECT)

static void gs_diff_row_class_init(GsDiffRowClass *klass) {
  (void)klass;
}

static void gs_diff_row_init(GsDiffRow *self) {
  (void)self;
}

GsDiffRow *gs_diff_row_new(const gs_run_diff_row *row) {
  GsDiffRow *self = g_object_new(GS_TYPE_DIFF_ROW, NULL);
  self->row = row;
  return self;
}

const gs_run_diff_row *gs_diff_row_get(GsDiffRow *self) {
  g_return_val_if_fail(GS_IS_DIFF_ROW(self), NULL);
  return self->row;
}
