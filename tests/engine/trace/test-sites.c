/* test-sites.c: call sites in the log (format 1.3). A tensor made at a known line of this file
 * has, in the log, a site whose frame the log's own binary events and libdw resolve to this
 * file, that line and the function; the events of a backward pass are charged to the line
 * that called gs_backward; GS_TRACE_STACKS=N records N frames, the first of them the same
 * line; a site is defined once per stream; a line an interpreter names inside a call (a hook
 * in a backward pass) is its own site; and gs_symbols says less, not something wrong, for an
 * address it cannot place. */
#include <glib.h>
#include <glib/gstdio.h>
#include <gradscope/gradscope.h>
#include <string.h>

#include "test-util.h"

typedef struct read_back {
  gs_symbols *symbols;
  GHashTable *sites;   /* id -> GArray of guint64 frames */
  GHashTable *created; /* tensor id -> site id */
  GArray *backward;    /* site ids of the events between backward_begin and backward_end */
  guint site_events;
  guint32 backward_site;
} read_back;

static read_back read_log(const char *path) {
  read_back rb = {gs_symbols_new(), g_hash_table_new_full(NULL, NULL, NULL,
                                                          (GDestroyNotify)g_array_unref),
                  g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL),
                  g_array_new(FALSE, FALSE, sizeof(guint32)), 0, 0};
  gs_trace_reader *r = test_read_log(path);
  gs_trace_event e;
  gboolean in_backward = FALSE;
  while (gs_trace_reader_next(r, &e) == GS_TRACE_EVENT) {
    if (e.kind == GS_TRACE_BINARY) {
      gs_symbols_add_binary(rb.symbols, gs_trace_reader_string(r, e.name), e.address,
                            (uint64_t)e.offset, e.nbytes, e.text);
    } else if (e.kind == GS_TRACE_SITE) {
      rb.site_events++;
      g_assert_false(g_hash_table_contains(rb.sites, GUINT_TO_POINTER(e.site)));
      GArray *frames = g_array_new(FALSE, FALSE, sizeof(guint64));
      g_array_append_vals(frames, e.frames, e.n_frames);
      g_hash_table_insert(rb.sites, GUINT_TO_POINTER(e.site), frames);
    } else if (e.kind == GS_TRACE_TENSOR_CREATE && !e.derived) {
      g_assert_cmpuint(e.site, !=, 0);
      g_assert_true(g_hash_table_contains(rb.sites, GUINT_TO_POINTER(e.site))); /* defined before */
      g_hash_table_insert(rb.created, g_memdup2(&e.tensor, sizeof e.tensor),
                          GUINT_TO_POINTER(e.site));
      if (in_backward)
        g_array_append_val(rb.backward, e.site);
    } else if (e.kind == GS_TRACE_BACKWARD_BEGIN) {
      in_backward = TRUE;
      rb.backward_site = e.site;
    } else if (e.kind == GS_TRACE_BACKWARD_END) {
      in_backward = FALSE;
    }
  }
  g_assert_null(gs_trace_reader_error(r, NULL));
  gs_trace_reader_free(r);
  return rb;
}

static void read_back_clear(read_back *rb) {
  gs_symbols_free(rb->symbols);
  g_hash_table_destroy(rb->sites);
  g_hash_table_destroy(rb->created);
  g_array_unref(rb->backward);
}

/* The symbol of site's innermost frame. */
static gs_symbol site_symbol(read_back *rb, guint32 site) {
  GArray *frames = g_hash_table_lookup(rb->sites, GUINT_TO_POINTER(site));
  g_assert_nonnull(frames);
  g_assert_cmpuint(frames->len, >=, 1);
  gs_symbol sym;
  g_assert_true(gs_symbols_lookup(rb->symbols, g_array_index(frames, guint64, 0), &sym));
  return sym;
}

static void assert_here(gs_symbol sym, int line, const char *function) {
  g_assert_nonnull(sym.file);
  g_assert_true(g_str_has_suffix(sym.file, "test-sites.c"));
  g_assert_cmpint(sym.line, ==, line);
  g_assert_nonnull(sym.function);
  g_assert_true(g_str_has_prefix(sym.function, function)); /* may be a .isra or .part clone */
  g_assert_false(sym.stale);
}

static int line_a, line_b, line_backward;

/* Tensors made at known lines, in a loop (one site each however many times it runs), and a
 * backward pass. */
static gs_tensor made_a[3], made_b;
static void make_at_known_lines(void) {
  const int64_t shape[] = {4};
  line_a = __LINE__ + 2;
  for (int i = 0; i < 3; i++)
    made_a[i] = gs_ones(GS_F64, shape, 1);
  line_b = __LINE__ + 1;
  made_b = gs_mul_scalar(made_a[0], 3.0);
  gs_set_requires_grad(made_a[1], true);
  gs_tensor y = gs_sum(gs_mul(made_a[1], made_a[1]), NULL, 0, false);
  line_backward = __LINE__ + 1;
  gs_backward(y);
  gs_dispose(y);
}

static char *record(void (*body)(void)) {
  char *dir = g_dir_make_tmp("gradscope-sites-XXXXXX", NULL);
  char *path = g_build_filename(dir, "sites.gstrace", NULL);
  g_free(dir);
  g_assert_cmpint(gs_trace_open(path), ==, 0);
  body();
  gs_trace_close();
  return path;
}

static void remove_log(char *path) {
  g_autofree char *dir = g_path_get_dirname(path);
  g_unlink(path);
  g_rmdir(dir);
  g_free(path);
}

static void test_sites_name_lines(void) {
  char *path = record(make_at_known_lines);
  read_back rb = read_log(path);
  guint32 a = GPOINTER_TO_UINT(g_hash_table_lookup(rb.created, &made_a[0].id));
  for (int i = 1; i < 3; i++) /* one line, one site */
    g_assert_cmpuint(GPOINTER_TO_UINT(g_hash_table_lookup(rb.created, &made_a[i].id)), ==, a);
  assert_here(site_symbol(&rb, a), line_a, "make_at_known_lines");
  guint32 b = GPOINTER_TO_UINT(g_hash_table_lookup(rb.created, &made_b.id));
  g_assert_cmpuint(b, !=, a);
  assert_here(site_symbol(&rb, b), line_b, "make_at_known_lines");
  /* The pass and every tensor it made are charged to the gs_backward line. */
  assert_here(site_symbol(&rb, rb.backward_site), line_backward, "make_at_known_lines");
  g_assert_cmpuint(rb.backward->len, >, 0);
  for (guint i = 0; i < rb.backward->len; i++)
    g_assert_cmpuint(g_array_index(rb.backward, guint32, i), ==, rb.backward_site);
  /* One thread: each site defined once. */
  g_assert_cmpuint(rb.site_events, ==, g_hash_table_size(rb.sites));
  read_back_clear(&rb);
  remove_log(path);
  for (int i = 0; i < 3; i++)
    gs_dispose(made_a[i]);
  gs_dispose(made_b);
}

/* A hook inside a backward pass that names its own line (as the Python module does before
 * each engine call): the tensor it makes is charged to that line, not to the pass's, and the
 * pass's events after it to the gs_backward line again. The events of one call take the
 * call's site found at its first event; setting a line must end that. */
static gs_tensor hook_made;
static bool hook_names_its_line(gs_tensor grad, gs_tensor *replacement, void *user_data) {
  (void)replacement, (void)user_data;
  gs_trace_set_site_text("hook.py:7");
  hook_made = gs_mul_scalar(grad, 1.0);
  gs_trace_set_site_text(NULL);
  return true;
}

static void backward_with_a_hook(void) {
  gs_tensor x = gs_ones(GS_F64, (int64_t[]){4}, 1);
  gs_set_requires_grad(x, true);
  gs_tensor h = gs_tanh(x);
  gs_register_grad_hook(h, hook_names_its_line, NULL, NULL);
  gs_tensor hh = gs_mul(h, h), y = gs_sum(hh, NULL, 0, false);
  gs_backward(y);
  gs_dispose(y), gs_dispose(hh), gs_dispose(h), gs_dispose(x), gs_dispose(hook_made);
}

static void test_hook_line_inside_a_call(void) {
  char *path = record(backward_with_a_hook);
  gs_trace_reader *r = test_read_log(path);
  GHashTable *texts = g_hash_table_new(NULL, NULL); /* site -> its text's string id */
  guint32 backward_site = 0, hook_site = 0;
  guint before = 0, after = 0; /* the pass's tensors before and after the hook's, at its site */
  gboolean in_backward = FALSE;
  gs_trace_event e;
  while (gs_trace_reader_next(r, &e) == GS_TRACE_EVENT) {
    if (e.kind == GS_TRACE_SITE && e.name)
      g_hash_table_insert(texts, GUINT_TO_POINTER(e.site), GUINT_TO_POINTER(e.name));
    else if (e.kind == GS_TRACE_BACKWARD_BEGIN)
      in_backward = TRUE, backward_site = e.site;
    else if (e.kind == GS_TRACE_BACKWARD_END)
      in_backward = FALSE;
    else if (e.kind == GS_TRACE_TENSOR_CREATE && !e.derived && in_backward &&
             e.tensor == hook_made.id)
      hook_site = e.site;
    else if (e.kind == GS_TRACE_TENSOR_CREATE && !e.derived && in_backward &&
             e.site == backward_site)
      *(hook_site ? &after : &before) += 1;
  }
  g_assert_null(gs_trace_reader_error(r, NULL));
  g_assert_cmpuint(backward_site, !=, 0);
  g_assert_cmpuint(hook_site, !=, 0);
  g_assert_cmpuint(hook_site, !=, backward_site);
  guint32 text = GPOINTER_TO_UINT(g_hash_table_lookup(texts, GUINT_TO_POINTER(hook_site)));
  g_assert_cmpstr(gs_trace_reader_string(r, text), ==, "hook.py:7");
  g_assert_false(g_hash_table_contains(texts, GUINT_TO_POINTER(backward_site)));
  g_assert_cmpuint(before, >, 0);
  g_assert_cmpuint(after, >, 0);
  g_hash_table_destroy(texts);
  gs_trace_reader_free(r);
  remove_log(path);
}

/* GS_TRACE_STACKS=3 (read when recording first starts: in a subprocess): three frames per
 * site, the first the line, the next its caller. */
static void test_stacks(void) {
  if (g_test_subprocess()) {
    char *path = record(make_at_known_lines);
    read_back rb = read_log(path);
    guint32 a = GPOINTER_TO_UINT(g_hash_table_lookup(rb.created, &made_a[0].id));
    GArray *frames = g_hash_table_lookup(rb.sites, GUINT_TO_POINTER(a));
    g_assert_cmpuint(frames->len, ==, 3);
    assert_here(site_symbol(&rb, a), line_a, "make_at_known_lines");
    gs_symbol caller;
    g_assert_true(gs_symbols_lookup(rb.symbols, g_array_index(frames, guint64, 1), &caller));
    g_assert_nonnull(caller.file); /* record(), or test_stacks() if it was inlined there */
    g_assert_true(g_str_has_suffix(caller.file, "test-sites.c"));
    g_assert_cmpint(caller.line, !=, line_a);
    read_back_clear(&rb);
    remove_log(path);
    return;
  }
  g_setenv("GS_TRACE_STACKS", "3", TRUE);
  g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_unsetenv("GS_TRACE_STACKS");
  g_test_trap_assert_passed();
}

/* An address in no known binary is only a number; one in a binary whose file is gone gives
 * the path and the offset, marked stale, never a line. */
static void test_symbols_degrade(void) {
  gs_symbols *s = gs_symbols_new();
  gs_symbol sym;
  char text[256];
  g_assert_false(gs_symbols_lookup(s, 0x1234, &sym));
  gs_symbol_format(&sym, 0x1234, text, sizeof text);
  g_assert_cmpstr(text, ==, "0x1234");
  gs_symbols_add_binary(s, "/nonexistent/prog", 0x400000, 0x1000, 0x2000, "00ff");
  g_assert_true(gs_symbols_lookup(s, 0x401234, &sym));
  g_assert_true(sym.stale);
  g_assert_null(sym.file);
  g_assert_null(sym.function);
  g_assert_cmpuint(sym.offset, ==, 0x1234);
  gs_symbol_format(&sym, 0x401234, text, sizeof text);
  g_assert_cmpstr(text, ==, "prog+0x1234 (not the binary that ran)");
  gs_symbols_free(s);
}

/* The running process: a return address in this function resolves to this file. */
__attribute__((noinline)) static uint64_t here(void) {
  return (uint64_t)(uintptr_t)__builtin_return_address(0);
}

static void test_symbols_this_process(void) {
  gs_symbols *s = gs_symbols_new();
  gs_symbols_add_this_process(s);
  int line = __LINE__ + 1;
  uint64_t at = here();
  gs_symbol sym;
  g_assert_true(gs_symbols_lookup(s, at, &sym));
  assert_here(sym, line, "test_symbols_this_process");
  gs_symbols_free(s);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/sites/name-lines", test_sites_name_lines);
  g_test_add_func("/sites/hook-line-inside-a-call", test_hook_line_inside_a_call);
  g_test_add_func("/sites/stacks", test_stacks);
  g_test_add_func("/sites/symbols-degrade", test_symbols_degrade);
  g_test_add_func("/sites/symbols-this-process", test_symbols_this_process);
  return g_test_run();
}
