/* trace-impl.h: how the engine's event sites talk to the recorder.
 *
 * Each site is one guarded call, `if (gs__trace_on()) gs__trace_X(...)`: with the log off that
 * is one predictable branch; the gs__trace_X functions (hooks.c) build the event and hand it
 * to the recorder (recorder.c). Sequence numbers are the engine's own where it took one (a
 * tensor's creation, a disposal, an in-place write), so the log and error messages agree.
 */
#pragma once

#include <stdatomic.h>

#include "core-impl.h"
#include "gradscope/trace.h"

extern atomic_bool gs__tracing;

static inline bool gs__trace_on(void) {
  return __builtin_expect(atomic_load_explicit(&gs__tracing, memory_order_relaxed), 0);
}

struct gs__node;
struct gs__scope_rec;

/* recorder.c */
uint32_t gs__trace_string(const char *s); /* s must live forever (literal or gs__intern) */
void gs__trace_record(const gs_trace_event *e);
void gs__trace_record_in(void *buffer, const gs_trace_event *e);
void gs__trace_defer_node(struct gs__node *n, uint64_t seq);
void gs__trace_defer_values(uint64_t tensor);
/* Writes this thread's buffered events now. A thread that hands objects to another (the
 * DataLoader's prefetch worker) calls it first, so the objects' creation precedes, in file
 * order, whatever the receiving thread logs about them. */
void gs__trace_flush_this_thread(void);

/* hooks.c: one per kind of event site. */
void gs__trace_emit_node(void *buffer, struct gs__node *n, uint64_t seq);
void gs__trace_emit_values(uint64_t tensor, int limit, uint64_t seq);
void gs__trace_storage(gs_trace_kind kind, uint64_t storage, uint64_t source, uint64_t nbytes);
void gs__trace_tensor_create(const gs__tensor *t, const gs__owned *own);
void gs__trace_tensor_dispose(uint64_t tensor, const char *reason, uint64_t seq);
void gs__trace_tensor_move(uint64_t tensor, uint64_t target);
void gs__trace_inplace_write(const gs__tensor *t, const char *op, uint64_t seq);
void gs__trace_owner_change(const gs__owned *o, int previous_holder, uint64_t previous_owner);
void gs__trace_scope_begin(uint64_t scope, uint64_t outer, const char *interned_name);
void gs__trace_scope_end(uint64_t scope, uint64_t seq);
void gs__trace_node(gs_trace_kind kind, uint64_t node);
void gs__trace_backward(gs_trace_kind kind, uint64_t tensor, uint64_t node);
void gs__trace_grad_accumulate(uint64_t tensor, uint64_t grad);
void gs__trace_module_create(uint64_t module, const char *interned_type);
void gs__trace_module_parameter(uint64_t module, const char *interned_name, uint64_t tensor);
void gs__trace_module_child(uint64_t module, uint64_t child, const char *interned_name);
void gs__trace_optimizer_create(uint64_t optimizer, const char *type_name,
                                const gs_tensor *params, int n);
void gs__trace_composite_create(uint64_t object, int kind, const gs_tensor *parts, int n);
void gs__trace_error(int code, const char *message);
