/* state-report.h: the model's whole state at one moment, as `gradscope state` prints it (JSON
 * for programs, text for people): every alive tensor with its storage, geometry, version,
 * copy-on-write sharing, owner, where it was made and the values the log says it holds; every
 * alive storage; the open scopes with their accounts; totals. These are the facts the
 * differential oracle (tests/oracle/test-oracle.c) compares with what the live engine reports after
 * each call, and the facts the inspector's sentences are built from. The JSON shape is
 * documented in doc/state-json.md. */
#pragma once

#include <glib.h>

#include "trace-model.h"

G_BEGIN_DECLS

/* Values shown per tensor, at most (the log holds as many as GS_TRACE_VALUES asked for). */
#define GS_STATE_MAX_VALUES 64

/* The owner of an alive object in words for programs: "program", "engine", "scope",
 * "module", "optimizer", "composite" or "tensor" (a gradient's). Not translated. */
const char *gs_state_owner_kind(guint32 holder);

/* Appends the state just after event index (G_MAXUINT64: before any event) as one JSON object,
 * {"event": seq, "tensors": [...], "storages": [...], "scopes": [...], "totals": {...}};
 * seq is what the report is said to be at (the engine's event number asked for). */
void gs_state_report_json(gs_trace_model *m, guint64 index, guint64 seq, GString *out);
/* The same for people, translated: a line per tensor, storage and open scope. */
void gs_state_report_text(gs_trace_model *m, guint64 index, guint64 seq, GString *out);

G_END_DECLS
