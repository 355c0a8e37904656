/* gs-source-model.h: the seam between the sources and the trace model.
 *
 * The sources only need five things of a model: feed it bytes, tell it the input ended,
 * count its events, and ask whether the log was damaged or cut mid-chunk. With the trace
 * model library (inspector/model/trace-model.h) present, those are its own functions; until
 * it lands, reader-model.c provides the same calls over the trace reader, counting events
 * and nothing more, so the sources can be built and tested on their own. */
#pragma once

#ifdef GS_HAVE_TRACE_MODEL
#include "trace-model.h"
#else
#include "reader-model.h"
#endif
