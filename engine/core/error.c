/* error.c: error reporting: the per-thread last error and the installable handler.
 *
 * The handler is global (one policy per process, as bindings expect); the last error is per
 * thread so two threads' failures never overwrite each other's message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

#include "core-impl.h"
#include "trace-writer.h"

#define GS__ERROR_MAX 1024

static GS__THREAD_LOCAL char last_message[GS__ERROR_MAX];
static GS__THREAD_LOCAL gs_error_code last_code;

/* The handler and its user data change together; a mutex keeps the pair consistent. The
 * error path is cold, so the lock costs nothing that matters. */
static pthread_mutex_t handler_lock = PTHREAD_MUTEX_INITIALIZER;
GS__FORK_GUARD_MUTEX(GS__FORK_RANK_ERROR, handler_lock)
static gs_error_handler handler = gs_error_handler_abort;
static void *handler_user_data;

void gs_error_handler_abort(const gs_error *error, void *user_data) {
  (void)user_data;
  fflush(NULL); /* what the program printed before the error should not be lost */
  fprintf(stderr, "gradscope: error: %s\n", error->message);
  fflush(stderr);
  abort();
}

void gs_error_handler_return(const gs_error *error, void *user_data) {
  (void)error;
  (void)user_data;
}

gs_error_handler gs_set_error_handler(gs_error_handler new_handler, void *user_data,
                                      void **previous_user_data) {
  pthread_mutex_lock(&handler_lock);
  gs_error_handler previous = handler;
  if (previous_user_data)
    *previous_user_data = handler_user_data;
  handler = new_handler ? new_handler : gs_error_handler_abort;
  handler_user_data = new_handler ? user_data : NULL;
  pthread_mutex_unlock(&handler_lock);
  return previous;
}

const char *gs_last_error(void) { return last_message; }
gs_error_code gs_last_error_code(void) { return last_code; }

void gs_clear_error(void) {
  last_message[0] = '\0';
  last_code = GS_OK;
}

void gs__error(gs_error_code code, const char *fn, const char *fmt, ...) {
  char body[GS__ERROR_MAX - 64]; /* leaves room for the "fn: " prefix */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(body, sizeof body, fmt, ap);
  va_end(ap);
  /* Messages read "matmul: shapes ... cannot be multiplied": the operation names itself. */
  if (fn && fn[0])
    snprintf(last_message, sizeof last_message, "%.60s: %s", fn, body);
  else
    snprintf(last_message, sizeof last_message, "%s", body);
  last_code = code;

  /* The log gets the error first, flushed (a flight recorder dumped): the default handler
   * aborts next. */
  if (gs__trace_on()) {
    gs__trace_error((int)code, last_message);
    gs__trace_error_flush();
  } else {
    gs__trace_skip(1);
  }

  pthread_mutex_lock(&handler_lock);
  gs_error_handler h = handler;
  void *user = handler_user_data;
  pthread_mutex_unlock(&handler_lock);

  gs_error error = {
      .code = code,
      .function = fn ? fn : "",
      .message = last_message,
      .event = gs_event_counter(),
  };
  h(&error, user);
}

/* sizes joined by sep between open and close, into buf (GS__SHAPE_STR bytes). */
static char *join_sizes(char *buf, const int64_t *sizes, int n, char open, const char *sep,
                        char close) {
  size_t used = 0;
  buf[used++] = open;
  for (int i = 0; i < n && used < GS__SHAPE_STR - 24; i++)
    used += (size_t)snprintf(buf + used, GS__SHAPE_STR - used, "%s%lld", i ? sep : "",
                             (long long)sizes[i]);
  snprintf(buf + used, GS__SHAPE_STR - used, "%c", close);
  return buf;
}

char *gs__sizes_str(char *buf, const int64_t *sizes, int n) {
  return join_sizes(buf, sizes, n, '(', " x ", ')');
}

char *gs__shape_str(char *buf, const int64_t *shape, int ndim) {
  return join_sizes(buf, shape, ndim, '[', ", ", ']');
}
