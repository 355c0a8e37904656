/* gradscope/error.h: how a bad call is reported.
 *
 * Every public call validates its inputs. A bad call builds a message that says what was
 * expected and what was given, stores it as the calling thread's last error, and calls the
 * error handler. The default handler prints the message to stderr and aborts. A handler that
 * returns lets the call return the empty handle (or the documented error value) instead;
 * the engine's state is then exactly as before the call.
 */
#pragma once

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gs_error_code {
  GS_OK = 0,
  GS_ERR_STALE_HANDLE, /* a disposed, moved or never-created handle */
  GS_ERR_SHAPE,        /* shapes that do not fit the operation */
  GS_ERR_DTYPE,        /* a dtype the operation does not support */
  GS_ERR_DIM,          /* a dimension index out of range */
  GS_ERR_INDEX,        /* an element index out of range */
  GS_ERR_ARGUMENT,     /* any other invalid argument (NULL, negative size, bad step) */
  GS_ERR_OVERFLOW,     /* a size that does not fit in 64 bits */
  GS_ERR_OUT_OF_MEMORY,
  GS_ERR_STATE,        /* a valid call at the wrong time */
  GS_ERR_SINGULAR,     /* a singular matrix where an invertible one is needed (solve, inv) */
} gs_error_code;

typedef struct gs_error {
  gs_error_code code;
  const char *function; /* the public call that failed, e.g. "matmul" */
  const char *message;  /* whole sentence(s), without the "gradscope: " prefix */
  uint64_t event;       /* global event number at which the error happened */
} gs_error;

typedef void (*gs_error_handler)(const gs_error *error, void *user_data);

/* Installs handler (NULL restores the default print-and-abort handler) for all threads.
 * Returns the previous handler; *previous_user_data receives its user data if non-NULL. */
GS_API gs_error_handler gs_set_error_handler(gs_error_handler handler, void *user_data,
                                             void **previous_user_data);

/* The default handler: prints "gradscope: error: MESSAGE" to stderr and aborts. */
GS_API void gs_error_handler_abort(const gs_error *error, void *user_data);

/* A handler that only returns: the failed call yields its error value and the message
 * stays available from gs_last_error(). What tests and language bindings install. */
GS_API void gs_error_handler_return(const gs_error *error, void *user_data);

/* The calling thread's last error message, or "" if none since gs_clear_error(). */
GS_API const char *gs_last_error(void);
GS_API gs_error_code gs_last_error_code(void);
GS_API void gs_clear_error(void);

GS_API const char *gs_error_code_name(gs_error_code code);

#ifdef __cplusplus
}
#endif
