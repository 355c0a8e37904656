/* random-program.h: the oracle's random programs (random-program.c). */
#pragma once

#include <glib.h>

/* Runs the program of this seed: steps random public calls, then ends its scopes and disposes
 * every tensor it made, so nothing outlives it. */
void random_program_run(guint32 seed, guint steps);
/* The same program, calling at_step(data) after step number `at` (from 1), if it gets there. */
void random_program_run_with(guint32 seed, guint steps, guint at, void (*at_step)(gpointer),
                             gpointer data);
