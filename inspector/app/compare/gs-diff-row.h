/* gs-diff-row.h: one difference between two runs (model/analysis/run-diff.h's
 * gs_run_diff_row) as an object, so the Compare view's table can list it in a GListStore. */
#pragma once

#include <glib-object.h>

#include "run-diff.h"

G_BEGIN_DECLS

#define GS_TYPE_DIFF_ROW (gs_diff_row_get_type())
G_DECLARE_FINAL_TYPE(GsDiffRow, gs_diff_row, GS, DIFF_ROW, GObject)

/* row is borrowed: whoever made the rows keeps them alive longer than the object. */
GsDiffRow *gs_diff_row_new(const gs_run_diff_row *row);
const gs_run_diff_row *gs_diff_row_get(GsDiffRow *self);

G_END_DECLS
