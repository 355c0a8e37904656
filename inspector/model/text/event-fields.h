/* event-fields.h: the fields of one decoded event as (key, typed value) pairs, with string
 * ids resolved and enums named, so every writer (the CLI's dump and JSON Lines, the
 * inspector's event list and details) lists the same fields under the same names. */
#pragma once

#include <glib.h>
#include <gradscope/trace-reader.h>

G_BEGIN_DECLS

typedef enum gs_field_type {
  GS_FIELD_HANDLE, /* a slot+generation handle (tensor, scope, module, composite) */
  GS_FIELD_ID,     /* a plain counter id (storage, node, string) */
  GS_FIELD_UINT,   /* a quantity (bytes, version) */
  GS_FIELD_INT,
  GS_FIELD_BOOL,
  GS_FIELD_STRING, /* text from the string table or the event (s) */
  GS_FIELD_ENUM,   /* a named enum value (s), e.g. dtype "f32" */
  GS_FIELD_DIMS,   /* n signed values (shape, strides) */
  GS_FIELD_IDS,    /* n plain ids (a node's inputs: node numbers) */
  GS_FIELD_HANDLES, /* n handles (saved tensors, a composite's parts, an optimizer's params) */
  GS_FIELD_REALS,  /* n doubles (values) */
} gs_field_type;

typedef struct gs_event_field {
  const char *key; /* the gs_trace_event member's name: "tensor", "shape", "op"... */
  gs_field_type type;
  guint64 u;
  gint64 i;
  gboolean b;
  const char *s;
  guint n;
  const gint64 *dims;
  const guint64 *ids;
  const double *reals;
} gs_event_field;

typedef void (*gs_event_field_fn)(const gs_event_field *field, gpointer user_data);

/* Calls fn for every non-zero field of event (seq, thread, time and kind excepted: callers
 * place those themselves), plus the fields that mean something even at zero for the kind
 * (a tensor's dtype f32, origin "new", holder "caller", a scalar's empty shape). Strings are
 * resolved through reader. */
void gs_event_fields_foreach(const gs_trace_event *event, const gs_trace_reader *reader,
                             gs_event_field_fn fn, gpointer user_data);

/* Names for the enums carried by events ("new", "view"...; "scope", "module"...). */
const char *gs_trace_origin_name(guint32 origin);
const char *gs_trace_holder_name(guint32 holder);
const char *gs_trace_object_kind_name(guint32 object_kind);

/* "#index.generation", the engine's own spelling of a handle, into buf (>= 24 bytes). A
 * composite's id is spelled without its marker bit, as the engine does ("batch #3.1"). */
char *gs_format_handle(guint64 id, char *buf, gsize size);

G_END_DECLS
