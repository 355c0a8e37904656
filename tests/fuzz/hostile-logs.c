/* hostile-logs.c: the hostile and unusual logs (see hostile-logs.h). Each builder emits its
 * events through `emitter`, which cuts them into chunks per thread as the recorder would. */
#include "hostile-logs.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- emitting events ------------------------------------------------------------------- */

#define EMIT_BATCH 256 /* events per chunk: big arrays stay far below the payload limit */

typedef struct emitter {
  tw_log *log;
  uint32_t thread;
  gs_trace_event pending[EMIT_BATCH];
  size_t n;
  uint64_t seq;
} emitter;

static void emit_flush(emitter *em) {
  if (em->n)
    tw_chunk(em->log, em->thread, em->pending, em->n);
  em->n = 0;
}

/* Arrays (inputs, parts) and texts an event points at must outlive the next flush: callers
 * pass static or long-lived ones. */
static void emit_on(emitter *em, uint32_t thread, gs_trace_event e) {
  if (thread != em->thread || em->n == EMIT_BATCH) {
    emit_flush(em);
    em->thread = thread;
  }
  e.seq = ++em->seq;
  e.time_ns = 1000 * e.seq;
  em->pending[em->n++] = e;
}

static void emit(emitter *em, gs_trace_event e) { emit_on(em, em->thread ? em->thread : 1, e); }

static emitter *emit_begin(tw_log *log) {
  emitter *em = calloc(1, sizeof *em);
  if (!em)
    abort();
  em->log = log;
  em->thread = 1;
  tw_header(log, 1, GS_TRACE_VERSION_MINOR, 1700000000000000000u, 4242);
  return em;
}

static void emit_end(emitter *em) {
  emit_flush(em);
  free(em);
}

static size_t scaled(double scale, size_t full, size_t least) {
  double n = (double)full * scale;
  return n < (double)least ? least : (size_t)n;
}

static void string(emitter *em, uint32_t id, const char *text, size_t len) {
  emit(em, (gs_trace_event){.kind = GS_TRACE_STRING, .name = id, .text = text,
                            .text_len = (uint32_t)len});
}

/* A tensor (with its own storage) owned by scope, and the node that made it: something for
 * the graph to draw inside the scope. */
static void node_in_scope(emitter *em, uint64_t node, uint64_t tensor, uint64_t scope,
                          uint32_t kind_name) {
  emit(em, (gs_trace_event){.kind = GS_TRACE_TENSOR_CREATE, .tensor = tensor, .storage = tensor,
                            .alloc = 16, .requires_grad = true, .ndim = 1, .shape = {4},
                            .strides = {1}, .holder = scope ? GS_TRACE_HELD_BY_SCOPE : 0,
                            .owner = scope});
  emit(em, (gs_trace_event){.kind = GS_TRACE_NODE_CREATE, .node = node, .tensor = tensor,
                            .name = kind_name});
}

/* ---- the shapes ------------------------------------------------------------------------- */

static void empty_header_only(tw_log *log, double scale) {
  (void)scale;
  tw_header(log, 1, GS_TRACE_VERSION_MINOR, 1700000000000000000u, 4242);
}

static void strings_only(tw_log *log, double scale) {
  (void)scale;
  emitter *em = emit_begin(log);
  string(em, 1, "step", 4);
  string(em, 2, "MulBackward", 11);
  emit_end(em);
}

/* A scope that is its own outer scope, holding a node. */
static void scope_self_outer(tw_log *log, double scale) {
  (void)scale;
  emitter *em = emit_begin(log);
  string(em, 1, "self", 4);
  string(em, 2, "MulBackward", 11);
  emit(em, (gs_trace_event){.kind = GS_TRACE_SCOPE_BEGIN, .scope = 7, .outer = 7, .name = 1});
  node_in_scope(em, 1, 100, 7, 2);
  emit_end(em);
}

/* Two scopes, each the other's outer scope; and three in a ring. */
static void scope_mutual_outer(tw_log *log, double scale) {
  (void)scale;
  emitter *em = emit_begin(log);
  string(em, 1, "ring", 4);
  string(em, 2, "AddBackward", 11);
  emit(em, (gs_trace_event){.kind = GS_TRACE_SCOPE_BEGIN, .scope = 1, .outer = 2, .name = 1});
  emit(em, (gs_trace_event){.kind = GS_TRACE_SCOPE_BEGIN, .scope = 2, .outer = 1, .name = 1});
  emit(em, (gs_trace_event){.kind = GS_TRACE_SCOPE_BEGIN, .scope = 3, .outer = 5, .name = 1});
  emit(em, (gs_trace_event){.kind = GS_TRACE_SCOPE_BEGIN, .scope = 4, .outer = 3, .name = 1});
  emit(em, (gs_trace_event){.kind = GS_TRACE_SCOPE_BEGIN, .scope = 5, .outer = 4, .name = 1});
  node_in_scope(em, 1, 100, 1, 2);
  node_in_scope(em, 2, 101, 2, 2);
  node_in_scope(em, 3, 102, 4, 2);
  emit_end(em);
}

/* Every relation a log can close into a loop, at once: scopes, module parents, views whose
 * source is themselves or each other, nodes that are their own inputs, composites made of
 * themselves. */
static void cycles_everywhere(tw_log *log, double scale) {
  (void)scale;
  emitter *em = emit_begin(log);
  static const uint64_t self_input[] = {1, 2};
  static const uint64_t loop_input[] = {1};
  static const uint64_t parts[] = {500, 500, 501};
  static const uint64_t parts_back[] = {500};
  string(em, 1, "loop", 4);
  string(em, 2, "CatBackward", 11);
  string(em, 3, "Linear", 6);
  emit(em, (gs_trace_event){.kind = GS_TRACE_SCOPE_BEGIN, .scope = 1, .outer = 1, .name = 1});
  emit(em, (gs_trace_event){.kind = GS_TRACE_SCOPE_BEGIN, .scope = 2, .outer = 3, .name = 1});
  emit(em, (gs_trace_event){.kind = GS_TRACE_SCOPE_BEGIN, .scope = 3, .outer = 2, .name = 1});
  /* Views: 200 views 201 views 200; 202 views itself. */
  emit(em, (gs_trace_event){.kind = GS_TRACE_TENSOR_CREATE, .tensor = 200, .storage = 9,
                            .alloc = 64, .origin = 1, .source = 201, .ndim = 1, .shape = {4},
                            .strides = {1}, .holder = GS_TRACE_HELD_BY_SCOPE, .owner = 2});
  emit(em, (gs_trace_event){.kind = GS_TRACE_TENSOR_CREATE, .tensor = 201, .storage = 9,
                            .origin = 1, .source = 200, .ndim = 1, .shape = {4},
                            .strides = {1}, .holder = GS_TRACE_HELD_BY_SCOPE, .owner = 3});
  emit(em, (gs_trace_event){.kind = GS_TRACE_TENSOR_CREATE, .tensor = 202, .storage = 9,
                            .origin = 3, .source = 202, .ndim = 1, .shape = {4},
                            .strides = {1}, .holder = GS_TRACE_HELD_BY_SCOPE, .owner = 1});
  emit(em, (gs_trace_event){.kind = GS_TRACE_STORAGE_SHARE, .storage = 10, .source = 10,
                            .nbytes = 64});
  emit(em, (gs_trace_event){.kind = GS_TRACE_NODE_CREATE, .node = 1, .tensor = 200, .name = 2,
                            .n_inputs = 2, .inputs = self_input, .n_saved = 1,
                            .saved = parts_back});
  emit(em, (gs_trace_event){.kind = GS_TRACE_NODE_CREATE, .node = 2, .tensor = 201, .name = 2,
                            .n_inputs = 1, .inputs = loop_input, .n_saved = 2, .saved = parts});
  emit(em, (gs_trace_event){.kind = GS_TRACE_NODE_CREATE, .node = 3, .tensor = 202, .name = 2,
                            .n_inputs = 1, .inputs = self_input + 1});
  /* Composites made of themselves and of each other. */
  emit(em, (gs_trace_event){.kind = GS_TRACE_COMPOSITE_CREATE, .object = 500, .object_kind = 2,
                            .n_parts = 3, .parts = parts});
  emit(em, (gs_trace_event){.kind = GS_TRACE_COMPOSITE_CREATE, .object = 501, .object_kind = 2,
                            .n_parts = 1, .parts = parts_back});
  emit(em, (gs_trace_event){.kind = GS_TRACE_OWNER_CHANGE, .object = 500,
                            .holder = GS_TRACE_HELD_BY_COMPOSITE, .owner = 501});
  emit(em, (gs_trace_event){.kind = GS_TRACE_OWNER_CHANGE, .object = 501,
                            .holder = GS_TRACE_HELD_BY_COMPOSITE, .owner = 500});
  emit(em, (gs_trace_event){.kind = GS_TRACE_OWNER_CHANGE, .object = 200,
                            .holder = GS_TRACE_HELD_BY_TENSOR, .owner = 201});
  emit(em, (gs_trace_event){.kind = GS_TRACE_OWNER_CHANGE, .object = 201,
                            .holder = GS_TRACE_HELD_BY_TENSOR, .owner = 200});
  /* Modules: 1 is its own child, 2 and 3 each other's; a parameter in the loop. */
  for (uint64_t m = 1; m <= 3; m++)
    emit(em, (gs_trace_event){.kind = GS_TRACE_MODULE_CREATE, .module = m, .name = 3});
  emit(em, (gs_trace_event){.kind = GS_TRACE_MODULE_CHILD, .module = 1, .child = 1, .name = 1});
  emit(em, (gs_trace_event){.kind = GS_TRACE_MODULE_CHILD, .module = 2, .child = 3, .name = 1});
  emit(em, (gs_trace_event){.kind = GS_TRACE_MODULE_CHILD, .module = 3, .child = 2, .name = 1});
  emit(em, (gs_trace_event){.kind = GS_TRACE_MODULE_PARAMETER, .module = 3, .name = 1,
                            .tensor = 202});
  emit(em, (gs_trace_event){.kind = GS_TRACE_MODULE_PARAMETER, .module = 1, .name = 1,
                            .tensor = 200});
  /* A move onto itself and a move in a ring. */
  emit(em, (gs_trace_event){.kind = GS_TRACE_TENSOR_MOVE, .tensor = 202, .target = 202});
  emit(em, (gs_trace_event){.kind = GS_TRACE_BACKWARD_BEGIN, .tensor = 200, .node = 1});
  emit_end(em);
}

/* The multiplicative inverse of the id hashes' constant: id k * inverse hashes to k, so the
 * ids 1, 2, 3... times it all land in the same home slot of a table hashed by the top bits. */
static uint64_t golden_inverse(void) {
  const uint64_t a = 0x9e3779b97f4a7c15ull;
  uint64_t x = a; /* Newton's iteration doubles the correct low bits each step */
  for (int i = 0; i < 6; i++)
    x *= 2 - a * x;
  return x;
}

/* 150,000 live tensors (each with a storage) whose ids collide in a top-bits multiplicative
 * hash. */
static void colliding_ids(tw_log *log, double scale) {
  emitter *em = emit_begin(log);
  size_t n = scaled(scale, 150000, 64);
  uint64_t inverse = golden_inverse();
  string(em, 1, "AddBackward", 11);
  for (size_t k = 1; k <= n; k++) {
    uint64_t id = (uint64_t)k * inverse;
    emit(em, (gs_trace_event){.kind = GS_TRACE_TENSOR_CREATE, .tensor = id, .storage = id,
                              .alloc = 16, .ndim = 1, .shape = {4}, .strides = {1}});
  }
  emit(em, (gs_trace_event){.kind = GS_TRACE_NODE_CREATE, .node = inverse, .tensor = inverse,
                            .name = 1});
  emit_end(em);
}

/* 100,000 threads, each with one open scope holding a tensor. */
static void many_threads(tw_log *log, double scale) {
  emitter *em = emit_begin(log);
  size_t n = scaled(scale, 100000, 16);
  string(em, 1, "worker", 6);
  string(em, 2, "MulBackward", 11);
  for (size_t t = 1; t <= n; t++) {
    emit_on(em, (uint32_t)t, (gs_trace_event){.kind = GS_TRACE_SCOPE_BEGIN, .scope = t,
                                              .name = 1});
    emit_on(em, (uint32_t)t, (gs_trace_event){.kind = GS_TRACE_TENSOR_CREATE,
                                              .tensor = 1000000 + t, .storage = t, .alloc = 8,
                                              .ndim = 1, .shape = {2}, .strides = {1},
                                              .holder = GS_TRACE_HELD_BY_SCOPE, .owner = t});
  }
  emit_on(em, 1, (gs_trace_event){.kind = GS_TRACE_NODE_CREATE, .node = 1, .tensor = 1000001,
                                  .name = 2});
  emit_end(em);
}

/* 200,000 distinct scope names, each scope holding a node. */
static void many_names(tw_log *log, double scale) {
  emitter *em = emit_begin(log);
  size_t n = scaled(scale, 200000, 32);
  char *names = malloc(n * 16);
  if (!names)
    abort();
  string(em, 1, "MulBackward", 11);
  for (size_t k = 0; k < n; k++) {
    char *name = names + 16 * k;
    int len = snprintf(name, 16, "scope%zu", k);
    string(em, (uint32_t)(2 + k), name, (size_t)len);
    emit(em, (gs_trace_event){.kind = GS_TRACE_SCOPE_BEGIN, .scope = 1 + k,
                              .name = (uint32_t)(2 + k)});
    node_in_scope(em, 1 + k, 1000000 + k, 1 + k, 1);
    emit(em, (gs_trace_event){.kind = GS_TRACE_SCOPE_END, .scope = 1 + k});
    if (k % EMIT_BATCH == 0)
      emit_flush(em); /* the names array must outlive the events that point into it */
  }
  emit_end(em);
  free(names);
}

/* One node consumed 4 M times: 1,000 nodes each list it as all 4,096 of their inputs. */
static void wide_node(tw_log *log, double scale) {
  emitter *em = emit_begin(log);
  static uint64_t inputs[GS__TRACE_MAX_ARRAY];
  for (size_t i = 0; i < GS__TRACE_MAX_ARRAY; i++)
    inputs[i] = 1;
  size_t consumers = scaled(scale, 1000, 4);
  string(em, 1, "SumBackward", 11);
  emit(em, (gs_trace_event){.kind = GS_TRACE_NODE_CREATE, .node = 1, .tensor = 0, .name = 1});
  for (size_t k = 0; k < consumers; k++)
    emit(em, (gs_trace_event){.kind = GS_TRACE_NODE_CREATE, .node = 2 + k, .name = 1,
                              .n_inputs = GS__TRACE_MAX_ARRAY, .inputs = inputs});
  emit_end(em);
}

/* Scopes nested depth deep (each the outer of the next), a node in the innermost. */
static void deep_scopes(tw_log *log, size_t depth) {
  emitter *em = emit_begin(log);
  string(em, 1, "level", 5);
  string(em, 2, "MulBackward", 11);
  for (size_t d = 1; d <= depth; d++)
    emit(em, (gs_trace_event){.kind = GS_TRACE_SCOPE_BEGIN, .scope = d, .outer = d - 1,
                              .name = 1});
  node_in_scope(em, 1, 100, depth, 2);
  node_in_scope(em, 2, 101, depth / 2, 2);
  emit_end(em);
}

static void scopes_100k_deep(tw_log *log, double scale) {
  deep_scopes(log, scaled(scale, 100000, 200));
}

static void scopes_10k_deep(tw_log *log, double scale) {
  deep_scopes(log, scaled(scale, 10000, 100));
}

/* The longest text the format allows, as a scope name, a node kind and a tensor name. */
static void long_name(tw_log *log, double scale) {
  (void)scale;
  emitter *em = emit_begin(log);
  size_t len = GS__TRACE_MAX_TEXT;
  char *name = malloc(len);
  if (!name)
    abort();
  for (size_t i = 0; i < len; i++)
    name[i] = (char)('a' + i % 26);
  string(em, 1, name, len);
  emit(em, (gs_trace_event){.kind = GS_TRACE_SCOPE_BEGIN, .scope = 1, .name = 1});
  node_in_scope(em, 1, 100, 1, 1);
  emit(em, (gs_trace_event){.kind = GS_TRACE_TENSOR_NAME, .tensor = 100, .name = 1});
  emit(em, (gs_trace_event){.kind = GS_TRACE_MARK, .name = 1});
  emit_end(em);
  free(name);
}

/* Storages of 2^63 and 2^64 - 1 bytes, alive at once, then freed. */
static void huge_sizes(tw_log *log, double scale) {
  (void)scale;
  emitter *em = emit_begin(log);
  string(em, 1, "MulBackward", 11);
  emit(em, (gs_trace_event){.kind = GS_TRACE_STORAGE_ALLOC, .storage = 1,
                            .nbytes = UINT64_C(1) << 63});
  emit(em, (gs_trace_event){.kind = GS_TRACE_STORAGE_ALLOC, .storage = 2, .nbytes = UINT64_MAX});
  emit(em, (gs_trace_event){.kind = GS_TRACE_STORAGE_SHARE, .storage = 3, .source = 7,
                            .nbytes = UINT64_MAX});
  emit(em, (gs_trace_event){.kind = GS_TRACE_TENSOR_CREATE, .tensor = 10, .storage = 2,
                            .ndim = 2, .shape = {INT64_MAX, INT64_MIN}, .strides = {-1, 1}});
  emit(em, (gs_trace_event){.kind = GS_TRACE_NODE_CREATE, .node = 1, .tensor = 10, .name = 1});
  emit(em, (gs_trace_event){.kind = GS_TRACE_STORAGE_MATERIALISE, .storage = 3,
                            .nbytes = UINT64_MAX});
  emit(em, (gs_trace_event){.kind = GS_TRACE_STORAGE_FREE, .storage = 1});
  emit(em, (gs_trace_event){.kind = GS_TRACE_STORAGE_FREE, .storage = 2});
  emit(em, (gs_trace_event){.kind = GS_TRACE_STORAGE_FREE, .storage = 3});
  emit_end(em);
}

/* Names that are markup or entities (&amp; &#0; &lt;), quotes and backslashes, and bytes
 * that are not UTF-8, as scope names, node kinds, tensor names, marks and errors. */
static void markup_names(tw_log *log, double scale) {
  (void)scale;
  emitter *em = emit_begin(log);
  static const char *names[] = {
      "&amp;", "&#0;", "&lt;b&gt;", "<b>bold</b>", "\"quoted\\\"", "a\\nb\\l",
      "\xff\xfe not utf-8 \xc3", "\xed\xa0\x80 surrogate", "tab\there\x01", "%s%n{}",
  };
  size_t n = sizeof names / sizeof names[0];
  for (size_t i = 0; i < n; i++)
    string(em, (uint32_t)(1 + i), names[i], strlen(names[i]));
  for (size_t i = 0; i < n; i++) {
    emit(em, (gs_trace_event){.kind = GS_TRACE_SCOPE_BEGIN, .scope = 1 + i, .outer = i,
                              .name = (uint32_t)(1 + i)});
    node_in_scope(em, 1 + i, 100 + i, 1 + i, (uint32_t)(1 + (i + 1) % n));
    emit(em, (gs_trace_event){.kind = GS_TRACE_TENSOR_NAME, .tensor = 100 + i,
                              .name = (uint32_t)(1 + (i + 2) % n)});
    emit(em, (gs_trace_event){.kind = GS_TRACE_MARK, .name = (uint32_t)(1 + i)});
  }
  emit(em, (gs_trace_event){.kind = GS_TRACE_ERROR, .code = 2, .text = names[6],
                            .text_len = (uint32_t)strlen(names[6])});
  emit_end(em);
}

const hostile_log hostile_logs[] = {
    {"header-only", empty_header_only},
    {"strings-only", strings_only},
    {"scope-self-outer", scope_self_outer},
    {"scope-mutual-outer", scope_mutual_outer},
    {"cycles-everywhere", cycles_everywhere},
    {"colliding-ids", colliding_ids},
    {"many-threads", many_threads},
    {"many-names", many_names},
    {"wide-node", wide_node},
    {"scopes-100k-deep", scopes_100k_deep},
    {"scopes-10k-deep", scopes_10k_deep},
    {"long-name", long_name},
    {"huge-sizes", huge_sizes},
    {"markup-names", markup_names},
    {NULL, NULL},
};
