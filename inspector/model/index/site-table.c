/* site-table.c: see site-table.h. Site and binary events are table entries like strings. A
 * live log may deliver a site before the binary it points into (they come from different
 * threads' streams), so a site's text is made again once more binaries are known. An
 * interpreter's site (format 1.5) brings its text with it and needs no binary. */
#include "site-table.h"

#include <glib/gi18n.h>
#include <string.h>

typedef struct site {
  guint n;
  guint64 *frames;
  char *text, *where; /* formatted for the binaries known at binaries_seen */
  guint binaries_seen;
  gboolean interpreted; /* text and where came with the site: "function (file:line)" */
} site;

struct gs_site_table {
  GHashTable *sites; /* id -> site */
  gs_symbols *symbols;
  guint n_binaries;
};

static void site_free(gpointer p) {
  site *s = p;
  g_free(s->frames);
  g_free(s->text);
  g_free(s->where);
  g_free(s);
}

gs_site_table *gs_site_table_new(void) {
  gs_site_table *t = g_new0(gs_site_table, 1);
  t->sites = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, site_free);
  t->symbols = gs_symbols_new();
  return t;
}

void gs_site_table_free(gs_site_table *t) {
  if (!t)
    return;
  g_hash_table_destroy(t->sites);
  gs_symbols_free(t->symbols);
  g_free(t);
}

void gs_site_table_add(gs_site_table *t, const gs_trace_event *e, const char *path) {
  if (e->kind == GS_TRACE_BINARY) {
    if (path && *path) {
      gs_symbols_add_binary(t->symbols, path, e->address, (guint64)e->offset, e->nbytes,
                            e->text ? e->text : "");
      t->n_binaries++;
    }
    return;
  }
  if (e->kind != GS_TRACE_SITE || !e->site ||
      g_hash_table_contains(t->sites, GUINT_TO_POINTER(e->site)))
    return; /* every stream defines the sites it uses: the first definition is enough */
  site *s = g_new0(site, 1);
  s->n = e->n_frames;
  s->frames = g_memdup2(e->frames, sizeof *e->frames * (gsize)e->n_frames);
  if (e->name && path && *path) { /* an interpreter's site (1.5): its text is the answer */
    s->interpreted = TRUE;
    s->text = g_strdup(path);
    s->where = g_strdup(path);
  }
  g_hash_table_insert(t->sites, GUINT_TO_POINTER(e->site), s);
}

static const char *base_name(const char *path) {
  const char *slash = path ? strrchr(path, '/') : NULL;
  return slash ? slash + 1 : path;
}

char *gs_site_table_frame_text(gs_site_table *t, guint64 address) {
  gs_symbol sym;
  gs_symbols_lookup(t->symbols, address, &sym);
  char buf[1024];
  gs_symbol_format(&sym, address, buf, sizeof buf);
  return g_strdup(buf);
}

static char *frame_where(gs_site_table *t, guint64 address) {
  gs_symbol sym;
  gs_symbols_lookup(t->symbols, address, &sym);
  if (sym.file && sym.function)
    /* TRANSLATORS: a call site: source file, line, and the function the line is in. Keep
     * file:line first: the event list's Where column keeps it whole and cuts what follows. */
    return g_strdup_printf(_("%s:%d in %s"), base_name(sym.file), sym.line, sym.function);
  return gs_site_table_frame_text(t, address);
}

static site *lookup(gs_site_table *t, guint32 id) {
  site *s = id ? g_hash_table_lookup(t->sites, GUINT_TO_POINTER(id)) : NULL;
  if (s && s->interpreted)
    return s;
  if (!s || !s->n)
    return NULL;
  if (!s->text || s->binaries_seen != t->n_binaries) {
    g_free(s->text);
    g_free(s->where);
    s->text = gs_site_table_frame_text(t, s->frames[0]);
    s->where = frame_where(t, s->frames[0]);
    s->binaries_seen = t->n_binaries;
  }
  return s;
}

const char *gs_site_table_text(gs_site_table *t, guint32 id) {
  site *s = lookup(t, id);
  return s ? s->text : NULL;
}

const char *gs_site_table_where(gs_site_table *t, guint32 id) {
  site *s = lookup(t, id);
  return s ? s->where : NULL;
}

gboolean gs_site_table_symbol(gs_site_table *t, guint32 id, gs_symbol *out) {
  site *s = lookup(t, id);
  memset(out, 0, sizeof *out);
  return s && s->n && gs_symbols_lookup(t->symbols, s->frames[0], out);
}

guint gs_site_table_frames(gs_site_table *t, guint32 id, const guint64 **frames) {
  site *s = id ? g_hash_table_lookup(t->sites, GUINT_TO_POINTER(id)) : NULL;
  *frames = s ? s->frames : NULL;
  return s ? s->n : 0;
}

char *gs_site_table_stack_text(gs_site_table *t, guint32 id) {
  site *s = id ? g_hash_table_lookup(t->sites, GUINT_TO_POINTER(id)) : NULL;
  if (!s || !s->n)
    return NULL;
  GString *out = g_string_new(NULL);
  for (guint i = 0; i < s->n; i++) {
    gs_symbol sym;
    gs_symbols_lookup(t->symbols, s->frames[i], &sym);
    if (i)
      g_string_append_c(out, '\n');
    if (sym.function && sym.file)
      g_string_append_printf(out, "%s (%s:%d)", sym.function, sym.file, sym.line);
    else {
      char buf[1024];
      gs_symbol_format(&sym, s->frames[i], buf, sizeof buf);
      g_string_append(out, buf);
    }
  }
  return g_string_free(out, FALSE);
}

guint gs_site_table_size(const gs_site_table *t) { return g_hash_table_size(t->sites); }
