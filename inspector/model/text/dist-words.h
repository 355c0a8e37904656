/* dist-words.h: the names a distributed run's log gives its collectives and waits, in the
 * user's language: the sentences (model-explain.c) and the rank lanes' tooltips
 * (timeline/rank-lanes.c) say them alike. */
#pragma once

/* A collective's op as the log names it ("allreduce", "reduce_scatter"...), translated; an
 * op this does not know is returned as it is. */
const char *gs_dist_collective_words(const char *op);

/* What a wait is for, as the engine names it (engine/distributed/ddp.c), translated; NULL and
 * names this does not know are returned as they are. */
const char *gs_dist_wait_words(const char *name);
