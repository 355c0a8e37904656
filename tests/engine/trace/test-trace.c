/* test-trace.c: the recorder end to end, read back with the public reader: real engine work
 * produces every kind of event with the engine's own numbers; a child killed with SIGKILL
 * leaves a readable log; an error that aborts is in the log before the abort; a detach is
 * recorded as one; a composite's disposal is recorded; a dataset names its tensors; a flush from
 * one thread while two others record leaves a whole log; each storage's memory origin is recorded
 * (format 1.4); an event's time is its public call's. */
#include <dlpack/dlpack.h>
#include <glib/gstdio.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test-util.h"

/* The events of a log, copied out of the reader (arrays and text as owned copies). */
typedef struct recorded {
  GArray *events;  /* gs_trace_event, with pointers replaced by owned copies */
  GPtrArray *owned;
  gs_trace_reader *reader; /* kept for string lookups */
  bool damaged, truncated;
} recorded;

static const uint64_t *copy_ids(recorded *r, const uint64_t *ids, uint32_t n) {
  if (!n)
    return NULL;
  uint64_t *c = g_memdup2(ids, n * sizeof *ids);
  g_ptr_array_add(r->owned, c);
  return c;
}

static recorded read_log(const char *path) {
  recorded r = {g_array_new(false, true, sizeof(gs_trace_event)), g_ptr_array_new_with_free_func(g_free),
                gs_trace_reader_new(), false, false};
  gchar *bytes = NULL;
  gsize n = 0;
  g_assert_true(g_file_get_contents(path, &bytes, &n, NULL));
  /* Feed in odd-sized pieces: the reader must not care how bytes arrive. */
  for (gsize off = 0; off < n; off += 1000)
    gs_trace_reader_feed(r.reader, bytes + off, MIN(1000, n - off));
  g_free(bytes);
  gs_trace_event e;
  gs_trace_status st;
  while ((st = gs_trace_reader_next(r.reader, &e)) == GS_TRACE_EVENT) {
    e.inputs = copy_ids(&r, e.inputs, e.n_inputs);
    e.saved = copy_ids(&r, e.saved, e.n_saved);
    e.parts = copy_ids(&r, e.parts, e.n_parts);
    e.params = copy_ids(&r, e.params, e.n_params);
    if (e.text) {
      char *t = g_strndup(e.text, e.text_len);
      g_ptr_array_add(r.owned, t);
      e.text = t;
    }
    e.values = NULL;
    g_array_append_val(r.events, e);
  }
  uint64_t offset;
  r.damaged = st == GS_TRACE_DAMAGED;
  r.truncated = gs_trace_reader_truncated(r.reader, &offset);
  return r;
}

static void recorded_free(recorded *r) {
  g_array_free(r->events, true);
  g_ptr_array_free(r->owned, true);
  gs_trace_reader_free(r->reader);
}

static const char *str(const recorded *r, uint32_t id) { return gs_trace_reader_string(r->reader, id); }

/* The first event of kind about tensor (0: any); fails the test if there is none. */
static const gs_trace_event *find(const recorded *r, gs_trace_kind kind, uint64_t tensor) {
  for (guint i = 0; i < r->events->len; i++) {
    const gs_trace_event *e = &g_array_index(r->events, gs_trace_event, i);
    if (e->kind == kind && (!tensor || e->tensor == tensor))
      return e;
  }
  g_error("no %s event for tensor %#llx", gs_trace_kind_name(kind), (unsigned long long)tensor);
}

/* The first event of kind about storage; fails the test if there is none. */
static const gs_trace_event *find_storage(const recorded *r, gs_trace_kind kind,
                                          uint64_t storage) {
  for (guint i = 0; i < r->events->len; i++) {
    const gs_trace_event *e = &g_array_index(r->events, gs_trace_event, i);
    if (e->kind == kind && e->storage == storage)
      return e;
  }
  g_error("no %s event for storage %llu", gs_trace_kind_name(kind), (unsigned long long)storage);
}

static int count(const recorded *r, gs_trace_kind kind) {
  int c = 0;
  for (guint i = 0; i < r->events->len; i++)
    c += g_array_index(r->events, gs_trace_event, i).kind == kind;
  return c;
}

/* Per test run, so two builds' test runs on one machine never write each other's logs; a
 * trapped subprocess (g_test_trap_subprocess) uses its parent's, whose log it writes. */
static char *temp_path(const char *name) {
  int run = (int)(g_test_subprocess() ? getppid() : getpid());
  g_autofree char *mine = g_strdup_printf("%d-%s", run, name);
  return g_build_filename(g_get_tmp_dir(), mine, NULL);
}

static void test_engine_work_is_recorded(void) {
  char *path = temp_path("gradscope-test-trace.gstrace");
  g_assert_cmpint(gs_trace_open(path), ==, 0);
  g_assert_true(gs_trace_enabled());
  gs_trace_mark("epoch 1");

  gs_scope step = gs_scope_begin("step");
  gs_tensor x = gs_ones(GS_F64, (int64_t[]){2, 3}, 2);
  gs_set_requires_grad(x, true);
  gs_trace_name(x, "weights");
  uint64_t x_created = gs_event_counter();
  gs_tensor y = gs_mul(x, x);
  gs_tensor s = gs_sum(y, NULL, 0, false);
  gs_move_to_outer(s);
  gs_backward(s);
  gs_tensor c = gs_clone(y);
  uint64_t before_write = gs_event_counter();
  gs_add_scalar_(c, 1.0); /* materialises the clone */
  uint64_t write_event = gs_event_counter();
  gs_scope_end(step);     /* disposes x, y, c */
  gs_module m = gs_module_new("Linear");
  gs_tensor w = gs_parameter_new(gs_zeros(GS_F32, (int64_t[]){4}, 1), true);
  gs_module_register_parameter(m, "weight", w);
  gs_tensor seqs[2] = {gs_ones(GS_F32, (int64_t[]){2}, 1), gs_ones(GS_F32, (int64_t[]){1}, 1)};
  gs_packed_sequence ps = gs_pack_sequence(seqs, 2, false);
  EXPECT_ERROR(gs_item(x), "disposed by the end of scope 'step'");
  gs_packed_sequence_dispose(ps);
  gs_dispose(seqs[0]), gs_dispose(seqs[1]), gs_dispose(s);
  gs_module_dispose(m);
  gs_trace_close();
  g_assert_false(gs_trace_enabled());

  recorded r = read_log(path);
  g_assert_false(r.damaged);
  g_assert_false(r.truncated);
  uint32_t major = 0, minor = 0, pid = 0;
  uint64_t realtime = 0;
  g_assert_true(gs_trace_reader_header(r.reader, &major, &minor, &realtime, &pid));
  g_assert_cmpuint(major, ==, GS_TRACE_VERSION_MAJOR);
  g_assert_cmpuint(pid, ==, (uint32_t)getpid());

  /* Every kind the engine produced here is present. */
  const gs_trace_kind expected[] = {
      GS_TRACE_STRING, GS_TRACE_STORAGE_ALLOC, GS_TRACE_STORAGE_SHARE, GS_TRACE_STORAGE_MATERIALISE,
      GS_TRACE_STORAGE_FREE, GS_TRACE_TENSOR_CREATE, GS_TRACE_TENSOR_DISPOSE, GS_TRACE_TENSOR_MOVE,
      GS_TRACE_TENSOR_NAME, GS_TRACE_INPLACE_WRITE, GS_TRACE_OWNER_CHANGE, GS_TRACE_SCOPE_BEGIN,
      GS_TRACE_SCOPE_END, GS_TRACE_NODE_CREATE, GS_TRACE_NODE_FREE_SAVED, GS_TRACE_NODE_RELEASE,
      GS_TRACE_BACKWARD_BEGIN, GS_TRACE_BACKWARD_END, GS_TRACE_GRAD_ACCUMULATE,
      GS_TRACE_MODULE_CREATE, GS_TRACE_MODULE_PARAMETER, GS_TRACE_COMPOSITE_CREATE, GS_TRACE_MARK,
      GS_TRACE_ERROR};
  for (size_t i = 0; i < G_N_ELEMENTS(expected); i++) {
    if (!count(&r, expected[i]))
      g_error("no %s event in the log", gs_trace_kind_name(expected[i]));
  }

  /* Tensor creation carries geometry, op, owner; its number is the engine's. */
  const gs_trace_event *xc = find(&r, GS_TRACE_TENSOR_CREATE, x.id);
  g_assert_nonnull(xc);
  g_assert_cmpint(xc->ndim, ==, 2);
  g_assert_cmpint(xc->shape[1], ==, 3);
  g_assert_cmpint(xc->strides[0], ==, 3);
  g_assert_cmpuint(xc->dtype, ==, GS_F64);
  g_assert_cmpstr(str(&r, xc->op), ==, "ones");
  g_assert_cmpuint(xc->holder, ==, GS_TRACE_HELD_BY_SCOPE);
  g_assert_cmpuint(xc->owner, ==, step.id);
  g_assert_cmpuint(xc->seq, <=, x_created);
  const gs_trace_event *named = find(&r, GS_TRACE_TENSOR_NAME, x.id);
  g_assert_cmpstr(str(&r, named->name), ==, "weights");

  /* The node of y = x * x names its kind, its output and the tensors it saved. */
  const gs_trace_event *node = NULL;
  for (guint i = 0; i < r.events->len && !node; i++) {
    const gs_trace_event *e = &g_array_index(r.events, gs_trace_event, i);
    if (e->kind == GS_TRACE_NODE_CREATE && strcmp(str(&r, e->name), "MulBackward") == 0)
      node = e;
  }
  if (!node)
    g_error("no MulBackward node in the log");
  g_assert_cmpuint(node->tensor, ==, y.id);
  g_assert_cmpuint(node->n_inputs, ==, 2);
  g_assert_cmpuint(node->inputs[0], ==, node->inputs[1]); /* both edges go to x's accumulator */
  g_assert_cmpuint(node->n_saved, ==, 2);
  g_assert_cmpuint(node->saved[0], ==, x.id);

  /* The in-place write has the engine's event number and the op's name. */
  const gs_trace_event *w_ev = find(&r, GS_TRACE_INPLACE_WRITE, c.id);
  g_assert_nonnull(w_ev);
  g_assert_cmpuint(w_ev->seq, >, before_write); /* the engine's number for the write */
  g_assert_cmpuint(w_ev->seq, <=, write_event);
  g_assert_cmpstr(str(&r, w_ev->op), ==, "add_scalar_");
  g_assert_cmpuint(w_ev->version, ==, 1);

  /* Disposal by the scope's end says so; the move out of the scope is an ownership change. */
  const gs_trace_event *xd = find(&r, GS_TRACE_TENSOR_DISPOSE, x.id);
  g_assert_cmpstr(str(&r, xd->name), ==, "the end of scope 'step'");
  const gs_trace_event *moved = NULL;
  for (guint i = 0; i < r.events->len && !moved; i++) {
    const gs_trace_event *e = &g_array_index(r.events, gs_trace_event, i);
    if (e->kind == GS_TRACE_OWNER_CHANGE && e->object == s.id)
      moved = e;
  }
  if (!moved)
    g_error("no ownership change for the moved sum");
  g_assert_cmpuint(moved->previous_holder, ==, GS_TRACE_HELD_BY_SCOPE);
  g_assert_cmpuint(moved->holder, ==, GS_TRACE_HELD_BY_CALLER);

  /* The error is in the log with its message; the mark with its label. */
  const gs_trace_event *err = find(&r, GS_TRACE_ERROR, 0);
  g_assert_nonnull(strstr(err->text, "disposed by the end of scope 'step'"));
  g_assert_cmpstr(str(&r, find(&r, GS_TRACE_MARK, 0)->name), ==, "epoch 1");

  /* Sequence numbers increase within a thread. */
  for (guint i = 1; i < r.events->len; i++)
    g_assert_cmpuint(g_array_index(r.events, gs_trace_event, i).seq, >=,
                     g_array_index(r.events, gs_trace_event, i - 1).seq);
  recorded_free(&r);
  unlink(path);
  g_free(path);
}

/* A module tree and an optimizer reach the log: each child link with its name, the optimizer
 * with its type and parameters, and its state tensors held by it (not the caller). The
 * statistics count the state as they count parameters: a detach from the step's scope. */
static void test_modules_and_optimizer_state_are_recorded(void) {
  char *path = temp_path("gradscope-test-trace-modules.gstrace");
  gs_rng rng;
  gs_rng_seed(&rng, 2);
  g_assert_cmpint(gs_trace_open(path), ==, 0);
  gs_module fc2 = gs_linear_new(3, 2, true, &rng);
  gs_module body = gs_sequential_new((gs_module[]){gs_linear_new(4, 3, true, &rng), gs_relu_new()}, 2);
  gs_module net = gs_module_new("Net");
  gs_module_register_child(net, "body", body);
  gs_module_register_child(net, "fc2", fc2);
  gs_tensor params[4];
  g_assert_cmpint(gs_module_named_parameters(net, params, NULL, 4), ==, 4);
  gs_optimizer adam = gs_adam_new(params, 4, NULL);
  gs_scope_stats before = gs_thread_scope_stats(GS_OBJECT_TENSOR);
  gs_scope step = gs_scope_begin("step");
  gs_tensor x = gs_ones(GS_F32, (int64_t[]){5, 4}, 2);
  gs_tensor h = gs_module_forward(body, x);
  gs_tensor y = gs_module_forward(fc2, h);
  gs_backward(gs_sum(y, NULL, 0, false));
  gs_optimizer_step(adam); /* makes exp_avg and exp_avg_sq for each of the 4 parameters */
  gs_scope_end(step);
  gs_scope_stats mid = gs_thread_scope_stats(GS_OBJECT_TENSOR);
  g_assert_cmpuint(mid.detached_from_scope - before.detached_from_scope, ==, 8);
  g_assert_cmpint(mid.live - before.live, ==, 8);
  gs_optimizer_dispose(adam);
  gs_scope_stats after = gs_thread_scope_stats(GS_OBJECT_TENSOR);
  g_assert_cmpuint(after.disposed_outside_scope - mid.disposed_outside_scope, ==, 8);
  g_assert_cmpint(after.live, ==, before.live);
  gs_module_dispose(net);
  gs_trace_close();

  recorded r = read_log(path);
  g_assert_false(r.damaged);
  uint32_t minor = 0;
  g_assert_true(gs_trace_reader_header(r.reader, NULL, &minor, NULL, NULL));
  g_assert_cmpuint(minor, ==, GS_TRACE_VERSION_MINOR);
  int children = 0, held = 0, state_disposed = 0;
  const gs_trace_event *created = NULL;
  for (guint i = 0; i < r.events->len; i++) {
    const gs_trace_event *e = &g_array_index(r.events, gs_trace_event, i);
    if (e->kind == GS_TRACE_MODULE_CHILD) {
      const char *name = str(&r, e->name);
      if (e->module == net.id && e->child == body.id)
        g_assert_cmpstr(name, ==, "body");
      else if (e->module == net.id && e->child == fc2.id)
        g_assert_cmpstr(name, ==, "fc2");
      else if (e->module == body.id)
        g_assert_true(strcmp(name, "0") == 0 || strcmp(name, "1") == 0);
      else
        g_error("a module_child event for an unknown parent");
      children++;
    } else if (e->kind == GS_TRACE_OPTIMIZER_CREATE) {
      created = e;
    } else if (e->kind == GS_TRACE_OWNER_CHANGE && e->holder == GS_TRACE_HELD_BY_OPTIMIZER) {
      g_assert_cmpuint(e->owner, ==, adam.id);
      g_assert_cmpuint(e->previous_holder, ==, GS_TRACE_HELD_BY_SCOPE);
      g_assert_cmpuint(e->previous_owner, ==, step.id);
      held++;
    } else if (e->kind == GS_TRACE_TENSOR_DISPOSE &&
               strstr(str(&r, e->name), "the disposal of optimizer Adam #")) {
      state_disposed++;
    }
  }
  g_assert_cmpint(children, ==, 4);
  g_assert_nonnull(created);
  g_assert_cmpuint(created->optimizer, ==, adam.id);
  g_assert_cmpstr(str(&r, created->name), ==, "Adam");
  g_assert_cmpuint(created->n_params, ==, 4);
  for (int i = 0; i < 4; i++)
    g_assert_cmpuint(created->params[i], ==, params[i].id);
  g_assert_cmpint(held, ==, 8);
  g_assert_cmpint(state_disposed, ==, 8);
  recorded_free(&r);
  unlink(path);
  g_free(path);
}

/* A child recording in a loop is killed with SIGKILL: what it flushed is a valid log. */
static void test_killed_child_leaves_a_readable_log(void) {
  char *path = temp_path("gradscope-test-killed.gstrace");
  int ready[2];
  g_assert_cmpint(pipe(ready), ==, 0);
  pid_t child = fork();
  if (child == 0) {
    gs_trace_open(path);
    for (long i = 0;; i++) {
      gs_scope s = gs_scope_begin("work");
      gs_tensor a = gs_ones(GS_F32, (int64_t[]){8}, 1), b = gs_add_scalar(a, 1.0);
      (void)b;
      gs_scope_end(s);
      if (i == 5000) { /* enough for several chunks: tell the parent to kill us */
        gs_trace_flush();
        (void)!write(ready[1], "x", 1);
      }
    }
  }
  char c;
  g_assert_cmpint(read(ready[0], &c, 1), ==, 1);
  kill(child, SIGKILL);
  int status;
  waitpid(child, &status, 0);
  g_assert_true(WIFSIGNALED(status));
  recorded r = read_log(path);
  g_assert_false(r.damaged); /* a cut tail is truncation, not damage */
  g_assert_cmpint(count(&r, GS_TRACE_SCOPE_BEGIN), >=, 5000);
  recorded_free(&r);
  close(ready[0]), close(ready[1]);
  unlink(path);
  g_free(path);
}

/* Full buffers are written by the writer's own thread (write-behind.c); a flush waits for
 * them, so right after it every event recorded before is in the file, in order, though
 * the log is still open. */
static void test_flush_includes_handed_over_buffers(void) {
  char *path = temp_path("gradscope-test-flush-buffers.gstrace");
  g_assert_cmpint(gs_trace_open(path), ==, 0);
  const int marks = 200000; /* about 1.4 MB: twenty-odd full 64 KiB buffers */
  for (int i = 0; i < marks; i++)
    gs_trace_mark("step");
  gs_trace_flush();
  recorded r = read_log(path);
  gs_trace_close();
  g_assert_false(r.damaged);
  g_assert_false(r.truncated);
  g_assert_cmpint(count(&r, GS_TRACE_MARK), ==, marks);
  uint64_t prev = 0;
  for (guint i = 0; i < r.events->len; i++) {
    const gs_trace_event *e = &g_array_index(r.events, gs_trace_event, i);
    if (e->kind != GS_TRACE_MARK)
      continue;
    g_assert_cmpuint(e->seq, >, prev); /* the chunks reached the file in the order they filled */
    prev = e->seq;
  }
  recorded_free(&r);
  unlink(path);
  g_free(path);
}

/* The engine's own threads that the recording thread wakes (the write-behind writer, the
 * ring's applier) are batch threads, so that a hand-over never preempts the program's thread
 * on its core; the program's threads keep their policy. */
static int batch_threads(void) {
  int n = 0;
  GDir *tasks = g_dir_open("/proc/self/task", 0, NULL);
  g_assert_nonnull(tasks);
  for (const char *tid; (tid = g_dir_read_name(tasks));)
    n += sched_getscheduler((pid_t)atoi(tid)) == SCHED_BATCH;
  g_dir_close(tasks);
  return n;
}

static void test_engine_threads_do_not_preempt_the_program(void) {
  char *path = temp_path("gradscope-test-batch-threads.gstrace");
  int policy = sched_getscheduler(0);
  g_assert_cmpint(gs_trace_open(path), ==, 0);
  for (int i = 0; i < 50000; i++) /* several full 64 KiB buffers: the writer has started */
    gs_trace_mark("step");
  gs_trace_flush();
  g_assert_cmpint(batch_threads(), ==, 1);
  g_assert_cmpint(gs_trace_open_ring(path, 64 * 1024), ==, 0);
  for (int i = 0; i < 50000; i++) /* five times the ring: chunks pushed out to the applier */
    gs_trace_mark("step");
  gs_trace_flush();
  g_assert_cmpint(batch_threads(), ==, 2);
  gs_trace_close(); /* the applier ends with its ring */
  g_assert_cmpint(batch_threads(), ==, 1);
  g_assert_cmpint(sched_getscheduler(0), ==, policy);
  unlink(path);
  g_free(path);
}

/* The default handler aborts; the log has the error first. */
static void test_abort_flushes_the_error(void) {
  char *path = temp_path("gradscope-test-abort.gstrace");
  if (g_test_subprocess()) {
    gs_set_error_handler(NULL, NULL, NULL);
    gs_trace_open(path);
    gs_tensor a = gs_zeros(GS_F32, (int64_t[]){2}, 1), b = gs_zeros(GS_F32, (int64_t[]){3}, 1);
    gs_add(a, b);
    return;
  }
  g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_failed();
  recorded r = read_log(path);
  const gs_trace_event *err = find(&r, GS_TRACE_ERROR, 0);
  g_assert_nonnull(err);
  g_assert_nonnull(strstr(err->text, "add: shapes [2] and [3] cannot be broadcast"));
  g_assert_cmpuint(err->code, ==, GS_ERR_SHAPE);
  recorded_free(&r);
  unlink(path);
  g_free(path);
}

static void test_bad_destination_is_an_error(void) {
  int rc = 0;
  EXPECT_ERROR(rc = gs_trace_open("/nonexistent-dir/x.gstrace"),
               "trace_open: cannot open the event log at /nonexistent-dir/x.gstrace");
  g_assert_cmpint(rc, ==, -1);
  EXPECT_ERROR(gs_trace_open("unix:/nonexistent-dir/socket"), "cannot open the event log");
  g_assert_false(gs_trace_enabled());
}

/* Named ranges (torch.profiler.record_function) are range_begin and range_end events in
 * the order the program made them, nested, with the work inside them between; an end that
 * is not the innermost open range's is an error and writes nothing. */
static void test_named_ranges_are_recorded_nested(void) {
  char *path = temp_path("ranges");
  g_assert_cmpint(gs_trace_open(path), ==, 0);
  gs_trace_range_begin("step");
  gs_trace_range_begin("forward");
  gs_tensor t = gs_ones(GS_F32, (int64_t[]){3}, 1);
  g_assert_cmpint(gs_trace_ranges_open(), ==, 2);
  EXPECT_ERROR(gs_trace_range_end("step"),
               "expected the end of the innermost open range \"forward\", got the end of "
               "\"step\"");
  gs_trace_range_end("forward");
  gs_trace_range_end("step");
  g_assert_cmpint(gs_trace_ranges_open(), ==, 0);
  EXPECT_ERROR(gs_trace_range_end("step"), "with none open on this thread");
  EXPECT_ERROR(gs_trace_range_begin(""), "expected a range's name, got \"\"");
  gs_trace_close();
  recorded r = read_log(path);
  g_assert_false(r.damaged);
  const char *expected[] = {"begin step", "begin forward", "tensor", "end forward", "end step"};
  size_t k = 0;
  for (guint i = 0; i < r.events->len; i++) {
    const gs_trace_event *e = &g_array_index(r.events, gs_trace_event, i);
    char *what = NULL;
    if (e->kind == GS_TRACE_RANGE_BEGIN || e->kind == GS_TRACE_RANGE_END)
      what = g_strdup_printf("%s %s", e->kind == GS_TRACE_RANGE_BEGIN ? "begin" : "end",
                             str(&r, e->name));
    else if (e->kind == GS_TRACE_TENSOR_CREATE && e->tensor == t.id)
      what = g_strdup("tensor");
    if (!what)
      continue;
    g_assert_cmpuint(k, <, G_N_ELEMENTS(expected));
    g_assert_cmpstr(what, ==, expected[k++]);
    g_free(what);
  }
  g_assert_cmpuint(k, ==, G_N_ELEMENTS(expected));
  recorded_free(&r);
  gs_dispose(t);
  g_remove(path);
  g_free(path);
}

static void test_detach_is_recorded_as_a_detach(void) {
  char *path = temp_path("gradscope-test-detach.gstrace");
  g_assert_cmpint(gs_trace_open(path), ==, 0);
  gs_tensor x = gs_ones(GS_F32, (int64_t[]){2, 2}, 2);
  gs_set_requires_grad(x, true);
  gs_tensor v = gs_transpose(x, 0, 1);
  gs_tensor d = gs_detach(x);
  gs_trace_close();
  recorded r = read_log(path);
  g_assert_false(r.damaged);
  const gs_trace_event *made = find(&r, GS_TRACE_TENSOR_CREATE, x.id);
  const gs_trace_event *view = find(&r, GS_TRACE_TENSOR_CREATE, v.id);
  const gs_trace_event *det = find(&r, GS_TRACE_TENSOR_CREATE, d.id);
  g_assert_cmpuint(view->origin, ==, 1);
  g_assert_cmpuint(det->origin, ==, 2); /* detach, not view */
  g_assert_cmpstr(str(&r, det->op), ==, "detach");
  g_assert_cmpuint(det->source, ==, x.id);
  g_assert_cmpuint(det->storage, ==, made->storage);
  g_assert_false(det->requires_grad);
  recorded_free(&r);
  gs_dispose(d), gs_dispose(v), gs_dispose(x);
  g_remove(path);
  g_free(path);
}

/* Events of kind as the file holds them, before the reader unfolds the folded ones: the
 * chunks walked by their lengths (doc/trace-format.md: a 32-byte chunk header with the payload's
 * length at byte 4, the payload padded to 8; each event a kind byte and a uvarint length). */
static int count_on_disk(const char *path, gs_trace_kind kind) {
  g_autofree guint8 *bytes = NULL;
  gsize n = 0;
  g_assert_true(g_file_get_contents(path, (char **)&bytes, &n, NULL));
  gsize at = bytes[16] | (gsize)bytes[17] << 8 | (gsize)bytes[18] << 16; /* the header's size */
  int c = 0;
  while (at + 32 <= n) {
    gsize len = bytes[at + 4] | (gsize)bytes[at + 5] << 8 | (gsize)bytes[at + 6] << 16 |
                (gsize)bytes[at + 7] << 24;
    for (gsize p = at + 32, end = at + 32 + len; p < end;) {
      c += bytes[p++] == kind;
      gsize body = 0;
      guint8 b;
      int shift = 0;
      do {
        b = bytes[p++];
        body |= (gsize)(b & 0x7f) << shift;
        shift += 7;
      } while (b & 0x80);
      p += body;
    }
    at += 32 + (len + 7) / 8 * 8;
  }
  return c;
}

/* A clone's copy-on-write share is written inside the clone's tensor_create (format 2.2:
 * shared, and the share's bytes), and read back as the storage_share a 2.1 log held, just
 * before the create, numbered one below it: the numbers are those the log off takes. */
static void test_clone_share_is_folded_into_its_creation(void) {
  char *path = temp_path("gradscope-test-clone.gstrace");
  gs_tensor x = gs_ones(GS_F32, (int64_t[]){3, 4}, 2);
  gs_tensor v = gs_narrow(x, 1, 1, 2);
  uint64_t before = gs_event_counter();
  gs_tensor off = gs_clone(v);
  uint64_t numbers_off = gs_event_counter() - before;
  g_assert_cmpint(gs_trace_open(path), ==, 0);
  before = gs_event_counter();
  gs_tensor c = gs_clone(v);
  uint64_t numbers_on = gs_event_counter() - before;
  gs_trace_close();
  g_assert_cmpuint(numbers_on, ==, numbers_off);
  recorded r = read_log(path);
  g_assert_false(r.damaged);
  const gs_trace_event *made = find(&r, GS_TRACE_TENSOR_CREATE, c.id);
  g_assert_cmpuint(made->origin, ==, 3);
  g_assert_cmpuint(made->shared, ==, gs_storage_id(x)); /* folded, not written on its own */
  g_assert_cmpuint(made->nbytes, ==, 0);
  const gs_trace_event *share = made - 1;
  g_assert_cmpint(share->kind, ==, GS_TRACE_STORAGE_SHARE);
  g_assert_false(share->derived);
  g_assert_cmpuint(share->seq, ==, made->seq - 1);
  g_assert_cmpuint(share->storage, ==, gs_storage_id(c));
  g_assert_cmpuint(share->source, ==, gs_storage_id(x));
  g_assert_cmpuint(share->nbytes, ==, 12 * sizeof(float)); /* the whole storage, not the view's */
  g_assert_cmpuint(share->thread, ==, made->thread);
  /* On disk the clone's share is not an event of its own (the opening snapshot's are). */
  g_assert_cmpint(count_on_disk(path, GS_TRACE_STORAGE_SHARE), ==,
                  count(&r, GS_TRACE_STORAGE_SHARE) - 1);
  recorded_free(&r);
  gs_dispose(c), gs_dispose(off), gs_dispose(v), gs_dispose(x);
  g_remove(path);
  g_free(path);
}

/* The owner_change that makes a leaf's first gradient its own is written inside the
 * grad_accumulate (format 2.2) and read back as the owner_change a 2.1 log held, just before
 * it, numbered one below it, with the call's site. */
static void test_gradient_owner_change_is_folded(void) {
  char *path = temp_path("gradscope-test-grad-owner.gstrace");
  gs_tensor w = gs_ones(GS_F32, (int64_t[]){4}, 1);
  gs_set_requires_grad(w, true);
  g_assert_cmpint(gs_trace_open(path), ==, 0);
  gs_tensor y = gs_sum(w, NULL, 0, false);
  gs_backward(y);
  gs_trace_close();
  recorded r = read_log(path);
  g_assert_false(r.damaged);
  const gs_trace_event *acc = find(&r, GS_TRACE_GRAD_ACCUMULATE, w.id);
  gs_tensor grad = gs_grad(w);
  g_assert_cmpuint(acc->target, ==, grad.id);
  g_assert_cmpuint(acc->holder, ==, 0);
  g_assert_cmpuint(acc->site, ==, 0);
  const gs_trace_event *change = acc - 1;
  g_assert_cmpint(change->kind, ==, GS_TRACE_OWNER_CHANGE);
  g_assert_false(change->derived);
  g_assert_cmpuint(change->seq, ==, acc->seq - 1);
  g_assert_cmpuint(change->object, ==, grad.id);
  g_assert_cmpuint(change->holder, ==, GS_TRACE_HELD_BY_TENSOR);
  g_assert_cmpuint(change->owner, ==, w.id);
  g_assert_cmpuint(change->previous_holder, ==, GS_TRACE_HELD_BY_ENGINE);
  g_assert_cmpuint(change->site, ==, find(&r, GS_TRACE_BACKWARD_BEGIN, 0)->site);
  g_assert_cmpuint(change->site, !=, 0);
  g_assert_cmpint(count(&r, GS_TRACE_OWNER_CHANGE), ==, 1);
  g_assert_cmpint(count_on_disk(path, GS_TRACE_OWNER_CHANGE), ==, 0);
  g_assert_cmpint(count_on_disk(path, GS_TRACE_GRAD_ACCUMULATE), ==, 1);
  recorded_free(&r);
  gs_dispose(y), gs_dispose(w);
  g_remove(path);
  g_free(path);
}

/* A post-hook on a leaf's AccumulateGrad: whether the gradient it was given is the leaf's .grad. */
static bool grad_output_is_the_grad(const gs_tensor *grad_inputs, int n_inputs,
                                    gs_tensor grad_output, gs_tensor *replacements,
                                    void *user_data) {
  (void)grad_inputs, (void)n_inputs, (void)replacements;
  gs_tensor *leaf = user_data;
  g_assert_true(gs_is_alive(grad_output));
  g_assert_cmpuint(gs_grad(*leaf).id, !=, grad_output.id);
  return true;
}

/* A leaf's first gradient that only the pass holds (fresh, contiguous, of the leaf's shape,
 * its storage shared with nothing) becomes its .grad itself, as PyTorch's AccumulateGrad
 * steals it: the log shows the formula's result handed from the engine to the leaf, with no
 * clone made and no disposal of it. With a hook that sees the gradient after the formula, the
 * leaf gets a clone, as before. */
static void test_leaf_takes_the_pass_gradient(void) {
  char *path = temp_path("gradscope-test-grad-taken.gstrace");
  gs_tensor w = gs_ones(GS_F32, (int64_t[]){4}, 1);
  gs_set_requires_grad(w, true);
  g_assert_cmpint(gs_trace_open(path), ==, 0);
  gs_tensor w3 = gs_mul_scalar(w, 3.0), y = gs_sum(w3, NULL, 0, false);
  gs_backward(y);
  gs_trace_close();
  gs_tensor grad = gs_grad(w);
  float values[4];
  gs_copy_to(grad, values, sizeof values);
  for (int i = 0; i < 4; i++)
    g_assert_cmpfloat(values[i], ==, 3.0f);
  recorded r = read_log(path);
  g_assert_false(r.damaged);
  const gs_trace_event *begin = find(&r, GS_TRACE_BACKWARD_BEGIN, 0);
  const gs_trace_event *made = find(&r, GS_TRACE_TENSOR_CREATE, grad.id);
  g_assert_cmpuint(made->seq, >, begin->seq); /* the formula's result, made by the pass */
  g_assert_cmpstr(str(&r, made->op), ==, "mul_scalar");
  g_assert_cmpuint(made->origin, ==, 0);
  const gs_trace_event *acc = find(&r, GS_TRACE_GRAD_ACCUMULATE, w.id);
  g_assert_cmpuint(acc->target, ==, grad.id);
  const gs_trace_event *change = acc - 1; /* read back from the folded ownership transfer */
  g_assert_cmpint(change->kind, ==, GS_TRACE_OWNER_CHANGE);
  g_assert_cmpuint(change->object, ==, grad.id);
  g_assert_cmpuint(change->previous_holder, ==, GS_TRACE_HELD_BY_ENGINE);
  g_assert_cmpuint(change->holder, ==, GS_TRACE_HELD_BY_TENSOR);
  g_assert_cmpuint(change->owner, ==, w.id);
  for (guint i = 0; i < r.events->len; i++) {
    const gs_trace_event *e = &g_array_index(r.events, gs_trace_event, i);
    g_assert_false(e->kind == GS_TRACE_TENSOR_CREATE && e->origin == 3); /* no clone */
    g_assert_false(e->kind == GS_TRACE_TENSOR_DISPOSE && e->tensor == grad.id);
  }
  recorded_free(&r);
  gs_dispose(y), gs_dispose(w3);

  gs_zero_grad(w);
  gs_grad_hook hook =
      gs_node_register_post_hook(gs_grad_accumulator(w), grad_output_is_the_grad, &w, NULL);
  g_assert_cmpuint(hook.id, !=, 0);
  g_assert_cmpint(gs_trace_open(path), ==, 0);
  w3 = gs_mul_scalar(w, 3.0), y = gs_sum(w3, NULL, 0, false);
  gs_backward(y);
  gs_trace_close();
  r = read_log(path);
  g_assert_cmpuint(find(&r, GS_TRACE_TENSOR_CREATE, gs_grad(w).id)->origin, ==, 3);
  recorded_free(&r);
  gs_grad_hook_remove(hook);
  gs_dispose(y), gs_dispose(w3), gs_dispose(w);
  g_remove(path);
  g_free(path);
}

/* A gradient passed through unchanged to a broadcast input is summed to its shape straight from
 * the formula's gradient: the pass makes no pass-through view for it (op "backward"), and the
 * sum is the input's gradient. */
static void test_broadcast_gradient_is_summed_without_a_view(void) {
  char *path = temp_path("gradscope-test-grad-through.gstrace");
  gs_tensor x = gs_ones(GS_F32, (int64_t[]){2, 3}, 2), b = gs_ones(GS_F32, (int64_t[]){3}, 1);
  gs_set_requires_grad(b, true);
  g_assert_cmpint(gs_trace_open(path), ==, 0);
  gs_tensor sum = gs_add(x, b), y = gs_sum(sum, NULL, 0, false);
  gs_backward(y);
  gs_trace_close();
  float values[3];
  gs_copy_to(gs_grad(b), values, sizeof values);
  for (int i = 0; i < 3; i++)
    g_assert_cmpfloat(values[i], ==, 2.0f);
  recorded r = read_log(path);
  g_assert_false(r.damaged);
  g_assert_cmpstr(str(&r, find(&r, GS_TRACE_TENSOR_CREATE, gs_grad(b).id)->op), ==, "sum_to");
  for (guint i = 0; i < r.events->len; i++) {
    const gs_trace_event *e = &g_array_index(r.events, gs_trace_event, i);
    if (e->kind == GS_TRACE_TENSOR_CREATE)
      g_assert_cmpstr(str(&r, e->op), !=, "backward");
  }
  recorded_free(&r);
  gs_dispose(y), gs_dispose(sum), gs_dispose(b), gs_dispose(x);
  g_remove(path);
  g_free(path);
}

/* A create_graph backward (double backward) makes ordinary nodes, logged as any op's are:
 * between the pass's begin and end, named by kind, with edges to nodes the log already has. */
static void test_double_backward_nodes_are_recorded(void) {
  char *path = temp_path("gradscope-test-double-backward.gstrace");
  g_assert_cmpint(gs_trace_open(path), ==, 0);
  gs_tensor x = gs_from_data(GS_F64, (int64_t[]){2}, 1, (double[]){0.5, 2.0});
  gs_set_requires_grad(x, true);
  gs_tensor y = gs_sin(x), s = gs_sum(y, NULL, 0, false), g;
  g_assert_cmpint(gs_autograd_grad_with(&s, NULL, 1, &x, 1,
                                        &(gs_backward_options){.create_graph = true}, false, &g),
                  ==, 0);
  uint64_t made_by = gs_node_number(gs_grad_fn(g));
  gs_trace_close();
  recorded r = read_log(path);
  g_assert_false(r.damaged);
  const gs_trace_event *begin = find(&r, GS_TRACE_BACKWARD_BEGIN, 0);
  const gs_trace_event *end = find(&r, GS_TRACE_BACKWARD_END, 0);
  const gs_trace_event *node = NULL;
  guint in_pass = 0;
  for (guint i = 0; i < r.events->len; i++) {
    const gs_trace_event *e = &g_array_index(r.events, gs_trace_event, i);
    if (e->kind != GS_TRACE_NODE_CREATE || e->seq < begin->seq || e->seq > end->seq)
      continue;
    in_pass++;
    if (e->node == made_by)
      node = e;
  }
  g_assert_cmpuint(in_pass, >=, 2); /* the cos's and the product's at least */
  g_assert_nonnull(node);
  /* the caller gets the formula's own result, as from PyTorch: cos(x) times the seed */
  g_assert_cmpstr(str(&r, node->name), ==, "MulBackward");
  for (uint32_t i = 0; i < node->n_inputs; i++) { /* each edge names a node logged before it */
    bool known = node->inputs[i] == 0;
    for (guint k = 0; k < r.events->len && !known; k++) {
      const gs_trace_event *e = &g_array_index(r.events, gs_trace_event, k);
      known = e->kind == GS_TRACE_NODE_CREATE && e->node == node->inputs[i] && e->seq < node->seq;
    }
    g_assert_true(known);
  }
  recorded_free(&r);
  gs_dispose(g), gs_dispose(s), gs_dispose(y), gs_dispose(x);
  g_remove(path);
  g_free(path);
}

/* An event's time is its public call's: a disposal's events (the nodes it releases, the
 * tensor) share one, and a node announced by its op has its output's creation time though it
 * is written during the program's next call; a thread's times never go back. */
static void test_events_take_their_calls_time(void) {
  char *path = temp_path("gradscope-test-call-time.gstrace");
  g_assert_cmpint(gs_trace_open(path), ==, 0);
  gs_tensor x = gs_from_data(GS_F64, (int64_t[]){2}, 1, (double[]){0.5, 2.0});
  gs_set_requires_grad(x, true);
  gs_dispose(gs_mul(x, x)); /* x's AccumulateGrad node now exists: only y's node is deferred */
  gs_tensor y = gs_mul(x, x);
  g_usleep(2000); /* the node's event is written in gs_sum's call, well after gs_mul's */
  gs_tensor s = gs_sum(y, NULL, 0, false);
  gs_dispose(y);
  gs_dispose(s); /* releases SumBackward, then MulBackward, then the tensor */
  gs_trace_close();
  recorded r = read_log(path);
  g_assert_false(r.damaged);
  const gs_trace_event *made = find(&r, GS_TRACE_TENSOR_CREATE, y.id);
  const gs_trace_event *node = find(&r, GS_TRACE_NODE_CREATE, y.id);
  const gs_trace_event *sum = find(&r, GS_TRACE_TENSOR_CREATE, s.id);
  g_assert_cmpuint(node->time_ns, ==, made->time_ns);
  g_assert_cmpuint(sum->time_ns, >, node->time_ns);
  const gs_trace_event *gone = find(&r, GS_TRACE_TENSOR_DISPOSE, s.id);
  int released = 0;
  uint64_t last = 0;
  for (guint i = 0; i < r.events->len; i++) {
    const gs_trace_event *e = &g_array_index(r.events, gs_trace_event, i);
    g_assert_cmpuint(e->time_ns, >=, last);
    last = e->time_ns;
    if (e->kind == GS_TRACE_NODE_RELEASE && e->seq > find(&r, GS_TRACE_TENSOR_DISPOSE, y.id)->seq) {
      g_assert_cmpuint(e->time_ns, ==, gone->time_ns);
      released++;
    }
  }
  g_assert_cmpint(released, ==, 2);
  recorded_free(&r);
  gs_dispose(x);
  g_remove(path);
  g_free(path);
}

static void ignore_deleter(DLManagedTensor *m) { (void)m; }

/* Where each storage's bytes come from is in the log: the engine's (0, folded into the tensor
 * that made it), a blob, a DLPack producer, a mapped file, bytes moved into shared memory (a
 * materialise with the new origin) and bytes received from a process (its pid). */
static void test_memory_origins_are_recorded(void) {
  char *path = temp_path("gradscope-test-memory.gstrace");
  char *npy = temp_path("gradscope-test-memory.npy");
  gs_tensor plain = gs_zeros(GS_F32, (int64_t[]){4}, 1);
  g_assert_cmpint(gs_npy_save(npy, plain), ==, 0);
  gs_dispose(plain);
  g_assert_cmpint(gs_trace_open(path), ==, 0);
  gs_tensor engine = gs_ones(GS_F32, (int64_t[]){8}, 1);
  static float blob_bytes[4];
  gs_tensor blob = gs_from_blob(GS_F32, (int64_t[]){4}, 1, NULL, blob_bytes, NULL, NULL);
  static double producer_bytes[3];
  int64_t shape[1] = {3};
  DLManagedTensor producer = {.dl_tensor = {.data = producer_bytes, .device = {kDLCPU, 0},
                                            .ndim = 1, .dtype = {kDLFloat, 64, 1},
                                            .shape = shape},
                              .deleter = ignore_deleter};
  gs_tensor dl = gs_from_dlpack(&producer);
  gs_tensor mapped = gs_npy_load_mode(npy, GS_NPY_MAP_PRIVATE);
  uint64_t engine_storage = gs_storage_id(engine);
  g_assert_cmpint(gs_share_memory_(engine), ==, 0);
  int sv[2];
  g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), ==, 0);
  g_assert_cmpint(gs_tensor_send(sv[0], engine), ==, 0);
  gs_tensor received = gs_tensor_recv(sv[1]);
  close(sv[0]);
  close(sv[1]);
  gs_trace_close();

  recorded r = read_log(path);
  g_assert_false(r.damaged);
  const gs_trace_event *e = find(&r, GS_TRACE_TENSOR_CREATE, engine.id);
  g_assert_cmpuint(e->alloc, >, 0);
  e = find_storage(&r, GS_TRACE_STORAGE_ALLOC, engine_storage); /* derived from the create */
  g_assert_true(e->derived);
  g_assert_cmpuint(e->memory, ==, GS_MEMORY_ENGINE);
  e = find_storage(&r, GS_TRACE_STORAGE_ALLOC, gs_storage_id(blob));
  g_assert_cmpuint(e->memory, ==, GS_MEMORY_BLOB);
  g_assert_cmpuint(e->nbytes, ==, 16);
  e = find_storage(&r, GS_TRACE_STORAGE_ALLOC, gs_storage_id(dl));
  g_assert_cmpuint(e->memory, ==, GS_MEMORY_DLPACK);
  e = find_storage(&r, GS_TRACE_STORAGE_ALLOC, gs_storage_id(mapped));
  g_assert_cmpuint(e->memory, ==, GS_MEMORY_MAPPED);
  e = find_storage(&r, GS_TRACE_STORAGE_MATERIALISE, engine_storage);
  g_assert_cmpuint(e->memory, ==, GS_MEMORY_SHARED);
  g_assert_cmpuint(e->nbytes, ==, 32);
  e = find_storage(&r, GS_TRACE_STORAGE_ALLOC, gs_storage_id(received));
  g_assert_cmpuint(e->memory, ==, GS_MEMORY_RECEIVED);
  g_assert_cmpuint(e->peer, ==, (guint)getpid());
  recorded_free(&r);
  gs_dispose(received), gs_dispose(mapped), gs_dispose(dl), gs_dispose(blob);
  gs_dispose(engine);
  g_remove(path);
  g_remove(npy);
  g_free(path);
  g_free(npy);
}

/* Two threads record while a third flushes every thread's buffer over and over. */
typedef struct recorder_thread {
  const char *label;
  gint *stop;
  guint64 marks, tensors;
} recorder_thread;

static gpointer record_until_stopped(gpointer data) {
  recorder_thread *t = data;
  const int64_t shape[] = {3};
  while (!g_atomic_int_get(t->stop)) {
    gs_trace_mark(t->label);
    t->marks++;
    gs_tensor a = gs_full(GS_F32, shape, 1, 1.0);
    gs_dispose(gs_mul(a, a));
    gs_dispose(a);
    t->tensors += 2;
  }
  return NULL;
}

static gpointer flush_until_stopped(gpointer data) {
  gint *stop = data;
  guint64 flushes = 0;
  while (!g_atomic_int_get(stop)) {
    gs_trace_flush();
    flushes++;
  }
  return GSIZE_TO_POINTER(flushes);
}

static void test_flush_while_other_threads_record(void) {
  char *path = temp_path("gradscope-test-flush-race.gstrace");
  g_assert_cmpint(gs_trace_open(path), ==, 0);
  gint stop = 0;
  recorder_thread a = {"thread a", &stop, 0, 0}, b = {"thread b", &stop, 0, 0};
  GThread *ta = g_thread_new("record-a", record_until_stopped, &a);
  GThread *tb = g_thread_new("record-b", record_until_stopped, &b);
  GThread *tf = g_thread_new("flush", flush_until_stopped, &stop);
  g_usleep(400 * 1000);
  g_atomic_int_set(&stop, 1);
  g_thread_join(ta);
  g_thread_join(tb);
  guint64 flushes = GPOINTER_TO_SIZE(g_thread_join(tf));
  gs_trace_close();
  g_assert_cmpuint(flushes, >, 10);
  g_assert_cmpuint(a.marks, >, 100);
  g_assert_cmpuint(b.marks, >, 100);
  recorded r = read_log(path);
  g_assert_false(r.damaged);
  g_assert_false(r.truncated);
  /* Every event of both threads is there, once, in each thread's order. */
  guint64 marks_a = 0, marks_b = 0, created = 0;
  GHashTable *last_seq = g_hash_table_new(g_direct_hash, g_direct_equal);
  gboolean in_snapshot = FALSE;
  for (guint i = 0; i < r.events->len; i++) {
    const gs_trace_event *e = &g_array_index(r.events, gs_trace_event, i);
    /* A tensor an earlier test left alive opens the log with a snapshot, whose events take no
     * number of their own (they repeat the last one taken): skip it. */
    if (e->kind == GS_TRACE_SNAPSHOT_BEGIN || e->kind == GS_TRACE_SNAPSHOT_END) {
      in_snapshot = e->kind == GS_TRACE_SNAPSHOT_BEGIN;
      continue;
    }
    if (in_snapshot)
      continue;
    guint64 *prev = g_hash_table_lookup(last_seq, GUINT_TO_POINTER(e->thread));
    if (!prev) {
      prev = g_new0(guint64, 1);
      g_hash_table_insert(last_seq, GUINT_TO_POINTER(e->thread), prev);
    }
    if (gs_trace_kind_is_table(e->kind) || e->derived)
      continue; /* string definitions repeat their stream's previous number, and storage
                   events the reader derives their tensor event's */
    g_assert_cmpuint(e->seq, >, *prev);
    *prev = e->seq;
    if (e->kind == GS_TRACE_MARK) {
      marks_a += g_strcmp0(str(&r, e->name), "thread a") == 0;
      marks_b += g_strcmp0(str(&r, e->name), "thread b") == 0;
    }
    created += e->kind == GS_TRACE_TENSOR_CREATE;
  }
  g_assert_cmpuint(marks_a, ==, a.marks);
  g_assert_cmpuint(marks_b, ==, b.marks);
  g_assert_cmpuint(created, ==, a.tensors + b.tensors);
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init(&it, last_seq);
  while (g_hash_table_iter_next(&it, NULL, &value))
    g_free(value);
  g_hash_table_destroy(last_seq);
  recorded_free(&r);
  g_remove(path);
  g_free(path);
}

/* A composite disposed with its scope is in the log itself, before its parts. */
static void test_composite_disposal_is_recorded(void) {
  char *path = temp_path("gradscope-test-composite.gstrace");
  g_assert_cmpint(gs_trace_open(path), ==, 0);
  gs_scope s = gs_scope_begin("batch");
  gs_tensor seqs[] = {gs_ones(GS_F32, (int64_t[]){3, 2}, 2), gs_ones(GS_F32, (int64_t[]){2, 2}, 2)};
  gs_packed_sequence ps = gs_pack_sequence(seqs, 2, true);
  gs_tensor data = gs_packed_data(ps);
  gs_scope_end(s);
  gs_trace_close();
  recorded r = read_log(path);
  g_assert_false(r.damaged);
  const gs_trace_event *gone = find(&r, GS_TRACE_TENSOR_DISPOSE, ps.id);
  const gs_trace_event *part = find(&r, GS_TRACE_TENSOR_DISPOSE, data.id);
  g_assert_cmpstr(str(&r, gone->name), ==, "the end of scope 'batch'");
  g_assert_cmpuint(gone->seq, <, part->seq);
  g_assert_cmpint(count(&r, GS_TRACE_COMPOSITE_CREATE), ==, 1);
  recorded_free(&r);
  g_remove(path);
  g_free(path);
}

/* A tensor dataset names the tensors it reads (a composite of kind dataset whose parts are
 * them), without taking them from their holder; its release is that composite's disposal, and
 * the tensors live on. */
static void test_dataset_is_recorded(void) {
  char *path = temp_path("gradscope-test-dataset.gstrace");
  g_assert_cmpint(gs_trace_open(path), ==, 0);
  gs_tensor xy[] = {gs_ones(GS_F32, (int64_t[]){5, 3}, 2), gs_zeros(GS_I64, (int64_t[]){5}, 1)};
  gs_dataset ds = gs_tensor_dataset(xy, 2);
  gs_dataset other = gs_tensor_dataset(xy, 1);
  gs_dataset_release(&ds);
  gs_dataset_release(&other);
  g_assert_true(gs_is_alive(xy[0]) && gs_is_alive(xy[1]));
  gs_trace_close();
  recorded r = read_log(path);
  g_assert_false(r.damaged);
  g_assert_cmpint(count(&r, GS_TRACE_COMPOSITE_CREATE), ==, 2);
  g_assert_cmpint(count(&r, GS_TRACE_OWNER_CHANGE), ==, 0); /* the tensors stay the caller's */
  const gs_trace_event *made[2];
  int n_made = 0;
  for (guint i = 0; i < r.events->len; i++) {
    const gs_trace_event *e = &g_array_index(r.events, gs_trace_event, i);
    if (e->kind == GS_TRACE_COMPOSITE_CREATE)
      made[n_made++] = e;
  }
  g_assert_cmpuint(made[0]->object_kind, ==, GS_OBJECT_DATASET);
  g_assert_cmpuint(made[0]->n_parts, ==, 2);
  g_assert_cmpuint(made[0]->parts[0], ==, xy[0].id);
  g_assert_cmpuint(made[0]->parts[1], ==, xy[1].id);
  g_assert_cmpuint(made[1]->n_parts, ==, 1);
  /* Ids of their own: neither a tensor's nor the other dataset's. */
  g_assert_cmpuint(made[0]->object, !=, made[1]->object);
  g_assert_cmpuint(made[0]->object, !=, xy[0].id);
  g_assert_cmpuint(made[0]->object, !=, xy[1].id);
  for (int i = 0; i < 2; i++) {
    const gs_trace_event *gone = find(&r, GS_TRACE_TENSOR_DISPOSE, made[i]->object);
    g_assert_nonnull(gone);
    g_assert_cmpstr(str(&r, gone->name), ==, "gs_dataset_release");
    g_assert_cmpuint(gone->seq, >, made[1]->seq);
  }
  for (guint i = 0; i < r.events->len; i++) {
    const gs_trace_event *e = &g_array_index(r.events, gs_trace_event, i);
    g_assert_false(e->kind == GS_TRACE_TENSOR_DISPOSE &&
                   (e->tensor == xy[0].id || e->tensor == xy[1].id));
  }
  recorded_free(&r);
  gs_dispose(xy[0]), gs_dispose(xy[1]);
  g_remove(path);
  g_free(path);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  g_test_add_func("/trace/engine-work-is-recorded", test_engine_work_is_recorded);
  g_test_add_func("/trace/clone-share-is-folded-into-its-creation",
                  test_clone_share_is_folded_into_its_creation);
  g_test_add_func("/trace/gradient-owner-change-is-folded", test_gradient_owner_change_is_folded);
  g_test_add_func("/trace/leaf-takes-the-pass-gradient", test_leaf_takes_the_pass_gradient);
  g_test_add_func("/trace/broadcast-gradient-is-summed-without-a-view",
                  test_broadcast_gradient_is_summed_without_a_view);
  g_test_add_func("/trace/modules-and-optimizer-state-are-recorded",
                  test_modules_and_optimizer_state_are_recorded);
  g_test_add_func("/trace/killed-child-leaves-a-readable-log", test_killed_child_leaves_a_readable_log);
  g_test_add_func("/trace/engine-threads-do-not-preempt-the-program",
                  test_engine_threads_do_not_preempt_the_program);
  g_test_add_func("/trace/flush-includes-handed-over-buffers",
                  test_flush_includes_handed_over_buffers);
  g_test_add_func("/trace/abort-flushes-the-error", test_abort_flushes_the_error);
  g_test_add_func("/trace/bad-destination-is-an-error", test_bad_destination_is_an_error);
  g_test_add_func("/trace/detach-is-recorded-as-a-detach", test_detach_is_recorded_as_a_detach);
  g_test_add_func("/trace/named-ranges-are-recorded-nested", test_named_ranges_are_recorded_nested);
  g_test_add_func("/trace/double-backward-nodes-are-recorded",
                  test_double_backward_nodes_are_recorded);
  g_test_add_func("/trace/events-take-their-calls-time", test_events_take_their_calls_time);
  g_test_add_func("/trace/composite-disposal-is-recorded", test_composite_disposal_is_recorded);
  g_test_add_func("/trace/dataset-is-recorded", test_dataset_is_recorded);
  g_test_add_func("/trace/flush-while-other-threads-record",
                  test_flush_while_other_threads_record);
  g_test_add_func("/trace/memory-origins-are-recorded", test_memory_origins_are_recorded);
  return g_test_run();
}
