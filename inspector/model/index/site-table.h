/* site-table.h: a log's call sites (site events: frames by id) and the binaries their
 * addresses point into (binary events), turned into `function (file:line)` with the engine's
 * symbolizer (libdw), each site once. The trace model and `gradscope stats` each keep one.
 * GLib only. */
#pragma once

#include <glib.h>
#include <gradscope/trace-reader.h>
#include <gradscope/trace-symbols.h>

G_BEGIN_DECLS

typedef struct gs_site_table gs_site_table;

gs_site_table *gs_site_table_new(void);
void gs_site_table_free(gs_site_table *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(gs_site_table, gs_site_table_free)

/* Takes a site or binary event (other kinds are ignored); path is a binary's path (its name
 * string's text). */
void gs_site_table_add(gs_site_table *t, const gs_trace_event *e, const char *path);

/* Where the program called the engine, for a site id that events and objects carry (0, or one
 * the log does not define: NULL): "main (leak.c:17)", or what is known without debug info
 * ("main (leak+0x1234)", "leak+0x1234"). Valid while the table lives. */
const char *gs_site_table_text(gs_site_table *t, guint32 site);
/* The same as a place: "leak.c:17 in main" (translated), else the text above. */
const char *gs_site_table_where(gs_site_table *t, guint32 site);
/* The innermost frame's symbol; FALSE if the site or its binary is unknown. */
gboolean gs_site_table_symbol(gs_site_table *t, guint32 site, gs_symbol *out);
/* The site's frames (return addresses), innermost first: one, or GS_TRACE_STACKS of them. */
guint gs_site_table_frames(gs_site_table *t, guint32 site, const guint64 **frames);
/* The whole site, a line per frame with the source file's full path ("main
 * (/home/u/leak.c:17)"), innermost first; NULL if unknown (newly allocated). */
char *gs_site_table_stack_text(gs_site_table *t, guint32 site);
/* One frame as "function (file:line)" (newly allocated). */
char *gs_site_table_frame_text(gs_site_table *t, guint64 address);
/* How many sites are defined (so far). */
guint gs_site_table_size(const gs_site_table *t);

G_END_DECLS
