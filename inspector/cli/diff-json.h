/* diff-json.h: `gradscope diff --json`: the comparison of two runs as one JSON object for
 * scripts and CI jobs (the fields are listed in README.md's section on diff). */
#pragma once

#include "run-diff.h"

G_BEGIN_DECLS

/* Prints the diff of the logs at path_a and path_b; a limit is NULL when its --fail option
 * was not given. */
void diff_json_print(const gs_run_diff *diff, const char *path_a, const char *path_b,
                     const guint64 *peak_limit, const guint64 *live_limit);

G_END_DECLS
