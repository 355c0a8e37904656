/* rank-run-private.h: what rank-run.c asks of rank-sync.c (the collectives and waits of a
 * run, found once when the run is made). */
#pragma once

#include "rank-run.h"

/* Fills *collectives (gs_rank_collective by number), waits[lane] (gs_rank_wait) and
 * *n_shared (collectives ended on two lanes or more); names go into strings. */
void gs__rank_run_sync(gs_rank_run *run, GArray **collectives, GArray **waits,
                       GStringChunk *strings, guint *n_shared);
/* Frees what gs__rank_run_sync made, and the waits array itself. */
void gs__rank_run_sync_free(GArray *collectives, GArray **waits, guint n);
