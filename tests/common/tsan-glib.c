/* tsan-glib.c: GLib's locks as ThreadSanitizer sees them, linked only into the TSan build's
 * tests. Debian's GLib is not instrumented and its GMutex and GCond are futexes, not pthread
 * calls TSan intercepts: every field our code guards with a GMutex looks like a race. These
 * wrappers take the real lock (the next definition, in libglib) and tell TSan that unlocking
 * releases and locking acquires it, which is what the lock guarantees. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <glib.h>
#include <stdlib.h>

void __tsan_acquire(void *addr);
void __tsan_release(void *addr);

/* The definition this file hides: libglib's. */
static void *real(const char *name) {
  void *f = dlsym(RTLD_NEXT, name);
  if (!f)
    abort();
  return f;
}

/* Looked up once, before main starts a thread: a lazy lookup would itself be a race. */
#define REAL(name) static __typeof__(name) *real_##name; \
  __attribute__((constructor)) static void find_##name(void) { \
    real_##name = (__typeof__(name) *)real(#name); \
  }
REAL(g_mutex_lock);
REAL(g_mutex_trylock);
REAL(g_mutex_unlock);
REAL(g_rec_mutex_lock);
REAL(g_rec_mutex_unlock);
REAL(g_cond_wait);
REAL(g_cond_wait_until);

void g_mutex_lock(GMutex *mutex) {
  real_g_mutex_lock(mutex);
  __tsan_acquire(mutex);
}

gboolean g_mutex_trylock(GMutex *mutex) {
  gboolean locked = real_g_mutex_trylock(mutex);
  if (locked)
    __tsan_acquire(mutex);
  return locked;
}

void g_mutex_unlock(GMutex *mutex) {
  __tsan_release(mutex);
  real_g_mutex_unlock(mutex);
}

void g_rec_mutex_lock(GRecMutex *mutex) {
  real_g_rec_mutex_lock(mutex);
  __tsan_acquire(mutex);
}

void g_rec_mutex_unlock(GRecMutex *mutex) {
  __tsan_release(mutex);
  real_g_rec_mutex_unlock(mutex);
}

/* A wait unlocks the mutex and locks it again before returning. */
void g_cond_wait(GCond *cond, GMutex *mutex) {
  __tsan_release(mutex);
  real_g_cond_wait(cond, mutex);
  __tsan_acquire(mutex);
}

gboolean g_cond_wait_until(GCond *cond, GMutex *mutex, gint64 end_time) {
  __tsan_release(mutex);
  gboolean signalled = real_g_cond_wait_until(cond, mutex, end_time);
  __tsan_acquire(mutex);
  return signalled;
}
