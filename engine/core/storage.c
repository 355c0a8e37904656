/* storage.c: storages (what views share) over buffers (bytes shared copy-on-write).
 *
 * A clone gets its own storage over the same buffer; the first write through either storage
 * copies the buffer ("materialises"), so the clone costs O(1) until someone writes. Views and
 * detaches share the storage itself, and so its version counter.
 */
#include <stdlib.h>
#include <string.h>

#include "core-impl.h"
#include "trace-writer.h"

static atomic_uint_fast64_t next_storage_id;

static gs__storage *storage_over(gs__buffer *buffer, uint64_t nbytes) {
  gs__storage *s = malloc(sizeof *s);
  if (!s)
    return NULL;
  atomic_init(&s->refcount, 1);
  atomic_init(&s->version, 0);
  s->id = atomic_fetch_add_explicit(&next_storage_id, 1, memory_order_relaxed) + 1;
  s->buffer = buffer;
  s->nbytes = nbytes;
  s->last_write_op = NULL;
  s->last_write_event = 0;
  s->last_write_tensor = 0;
  s->last_write_origin = GS__ORIGIN_NEW;
  s->orphan = NULL;
  s->alloc_unlogged = false;
  return s;
}

/* Drops one reference of a count; true if it was the last. A holder that reads 1 holds the only
 * one, and nobody can take another (references are taken from one already held: a tensor's, a
 * storage's), so it skips the locked subtract, which the step of a small model pays a few
 * dozen times (about 6 ns each here). The acquire load orders the writes of those who dropped
 * theirs earlier (their release subtracts) before the free, as the subtract's acquire does. */
static inline bool drop_reference(atomic_int_fast64_t *refcount) {
  if (atomic_load_explicit(refcount, memory_order_acquire) == 1)
    return true;
  return atomic_fetch_sub_explicit(refcount, 1, memory_order_acq_rel) == 1;
}

static void buffer_release(gs__buffer *b) {
  if (!drop_reference(&b->refcount))
    return;
  if (b->external) {
    if (b->release)
      b->release(b->data, b->release_user_data);
    gs__count_external_storage(-1);
    free(b);
  } else {
    gs__free_buffer(b);
  }
}

gs__storage *gs__storage_new(uint64_t nbytes) {
  gs__buffer *b = gs__alloc_buffer(nbytes);
  if (!b)
    return NULL;
  gs__storage *s = storage_over(b, nbytes);
  if (!s)
    gs__free_buffer(b);
  else /* most become a tensor's storage at once: its event says so (and takes no number) */
    s->alloc_unlogged = true;
  return s;
}

void gs__storage_log_alloc(gs__storage *s) {
  if (s->alloc_unlogged) {
    s->alloc_unlogged = false;
    if (gs__trace_on())
      gs__trace_storage(GS_TRACE_STORAGE_ALLOC, s->id, 0, s->nbytes);
    else
      gs__trace_skip(1);
  }
}

/* The copy-on-write share a clone made on this thread while recording and not yet in the log
 * (NULL: none), and the storage it shares: the clone's creation event carries it (format 2.2),
 * its number taken with the creation's. Nothing names the storage in between (gs_clone
 * registers the tensor next), so only a registration that fails writes it on its own. Per
 * thread, not a field of the storage: 8 more bytes a storage put every storage in a bigger
 * malloc bin, which cost bench-trace's micro-step more than the fold saved. */
static GS__THREAD_LOCAL gs__storage *unlogged_share;
static GS__THREAD_LOCAL uint64_t unlogged_share_source;

bool gs__storage_take_share(const gs__storage *s, uint64_t *source) {
  if (unlogged_share != s)
    return false;
  unlogged_share = NULL;
  *source = unlogged_share_source;
  return true;
}

void gs__storage_log_share(gs__storage *s) {
  uint64_t source;
  if (!gs__storage_take_share(s, &source))
    return;
  if (gs__trace_on())
    gs__trace_storage(GS_TRACE_STORAGE_SHARE, s->id, source, s->nbytes);
  else
    gs__trace_skip(1);
}

gs__buffer *gs__buffer_wrap(void *data, uint64_t nbytes, gs_release_fn release, void *user,
                            gs_memory_origin origin) {
  gs__buffer *b = malloc(sizeof *b);
  if (!b)
    return NULL;
  atomic_init(&b->refcount, 1);
  b->data = data;
  b->nbytes = nbytes;
  b->release = release;
  b->release_user_data = user;
  b->external = true;
  b->origin = origin;
  b->seen_outside = false;
  b->writes_reach_file = false;
  b->fd = -1;
  b->peer_pid = 0;
  gs__count_external_storage(1);
  return b;
}

static void log_wrapped(const gs__storage *s) {
  if (gs__trace_on())
    gs__trace_storage_memory(GS_TRACE_STORAGE_ALLOC, s->id, s->nbytes, s->buffer->origin,
                             (uint32_t)s->buffer->peer_pid);
  else
    gs__trace_skip(1);
}

gs__storage *gs__storage_over_buffer(gs__buffer *b) {
  gs__storage *s = storage_over(b, b->nbytes);
  if (!s) {
    buffer_release(b);
    return NULL;
  }
  log_wrapped(s);
  return s;
}

gs__storage *gs__storage_wrap(void *data, uint64_t nbytes, gs_release_fn release, void *user,
                              gs_memory_origin origin) {
  gs__buffer *b = gs__buffer_wrap(data, nbytes, release, user, origin);
  if (!b)
    return NULL;
  gs__storage *s = storage_over(b, nbytes);
  if (!s) { /* the caller still owns data: no release */
    gs__count_external_storage(-1);
    free(b);
    return NULL;
  }
  log_wrapped(s);
  return s;
}

void gs__storage_replace_buffer(gs__storage *s, gs__buffer *b) {
  gs__buffer *old = s->buffer;
  s->buffer = b;
  /* The log's model of it: the storage now has bytes of its own, from b's origin. */
  gs__storage_log_alloc(s);
  if (gs__trace_on())
    gs__trace_storage_memory(GS_TRACE_STORAGE_MATERIALISE, s->id, s->nbytes, b->origin,
                             (uint32_t)b->peer_pid);
  else
    gs__trace_skip(1);
  buffer_release(old);
}

gs__storage *gs__storage_share_cow(gs__storage *src, bool for_clone) {
  if (src->buffer->seen_outside) {
    /* Bytes others see (DLPack, shared memory): sharing them copy-on-write would move the
     * first writer off them, out of the others' sight. Copy now; src stays where it is. */
    gs__storage *s = gs__storage_new(src->nbytes);
    if (s)
      memcpy(s->buffer->data, src->buffer->data, src->nbytes);
    return s;
  }
  atomic_fetch_add_explicit(&src->buffer->refcount, 1, memory_order_relaxed);
  gs__storage *s = storage_over(src->buffer, src->nbytes);
  if (!s) {
    buffer_release(src->buffer);
  } else {
    gs__storage_log_alloc(src);
    if (for_clone && gs__trace_on()) {
      /* The clone's tensor_create carries the share. Its number is skipped now and so taken
       * at once with the creation's, by the next gs__next_event: the share's is the
       * creation's - 1, as the reader gives it back (and as the log off numbers them). */
      /* One held back already was the log's that closed before its clone registered. */
      unlogged_share = s;
      unlogged_share_source = src->id;
      gs__trace_skip(1);
    } else if (gs__trace_on()) {
      gs__trace_storage(GS_TRACE_STORAGE_SHARE, s->id, src->id, src->nbytes);
    } else {
      gs__trace_skip(1);
    }
  }
  return s;
}

void gs__storage_retain(gs__storage *s) {
  atomic_fetch_add_explicit(&s->refcount, 1, memory_order_relaxed);
}

static void storage_free(gs__storage *s) {
  if (s->orphan)
    GS__LIFECYCLE_EACH(on_storage_free, s);
  buffer_release(s->buffer);
  free(s);
}

void gs__storage_release(gs__storage *s) {
  if (!s || !drop_reference(&s->refcount))
    return;
  gs__storage_log_alloc(s); /* a temporary no tensor was made over: in use until now */
  if (gs__trace_on())
    gs__trace_storage(GS_TRACE_STORAGE_FREE, s->id, 0, s->nbytes);
  else
    gs__trace_skip(1);
  storage_free(s);
}

bool gs__storage_release_for_dispose(gs__storage *s) {
  if (!drop_reference(&s->refcount))
    return false;
  storage_free(s);
  return true;
}

bool gs__storage_materialise(gs__storage *s) {
  if (!gs__storage_is_cow(s))
    return true;
  gs__buffer *shared = s->buffer;
  gs__buffer *own = gs__alloc_buffer(s->nbytes);
  if (!own)
    return false;
  memcpy(own->data, shared->data, s->nbytes);
  s->buffer = own;
  gs__storage_log_alloc(s);
  if (gs__trace_on())
    gs__trace_storage(GS_TRACE_STORAGE_MATERIALISE, s->id, 0, s->nbytes);
  else
    gs__trace_skip(1);
  buffer_release(shared);
  return true;
}
