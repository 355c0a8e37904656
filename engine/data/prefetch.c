/* prefetch.c: the DataLoader's prefetch thread (gs_loader_options.prefetch > 0).
 *
 * One worker per epoch walks the epoch's order (fixed by gs_data_loader_reset before the worker
 * starts, so the batches are the ones the calling thread would make) and collates each batch
 * in its own "collate" scope, with the stacked tensors built while ownership is suspended:
 * they belong to no scope while they wait in a ring of opt.prefetch slots, and
 * gs_data_loader_next hands them to the consumer's current scope. With the event log on, the
 * worker writes its events out before publishing each batch, so a reader going through the
 * file sees a batch created before it sees it handed over. Reset and free stop the
 * worker (it finishes the batch in hand), join it, and dispose whatever is still waiting. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gradscope/error.h"
#include "loader-impl.h"
#include "scope-impl.h"
#include "trace-writer.h"

typedef struct slot {
  gs_tensor parts[GS_DATASET_MAX_FIELDS];
  bool failed;
  char error[256]; /* the worker's message when collation failed */
} slot;

struct gs__prefetch {
  gs_data_loader *loader;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t changed; /* a slot was filled or emptied, or stop/done changed */
  slot *ring;
  int capacity, head, count; /* guarded by lock */
  bool stop, done;           /* guarded by lock */
};

static void *worker(void *arg) {
  gs__prefetch *p = arg;
  gs_data_loader *l = p->loader;
  for (int64_t pos = 0;;) {
    int64_t count = gs__loader_batch_count(l, pos);
    pthread_mutex_lock(&p->lock);
    while (!p->stop && count > 0 && p->count == p->capacity)
      pthread_cond_wait(&p->changed, &p->lock);
    bool stop = p->stop;
    pthread_mutex_unlock(&p->lock);
    if (stop || count <= 0)
      break;
    slot s = {0};
    s.failed = !gs__loader_collate(l, pos, count, GS__COLLATE_ENGINE_HELD, s.parts,
                                  "data_loader_next");
    if (s.failed) /* the handler returned: keep the message for the consumer's thread */
      snprintf(s.error, sizeof s.error, "%s", gs_last_error());
    /* The log gets the batch's creation before the consumer can log its hand-over. */
    if (gs__trace_on())
      gs__trace_flush_this_thread();
    pos += count;
    pthread_mutex_lock(&p->lock);
    p->ring[(p->head + p->count) % p->capacity] = s;
    p->count++;
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
    if (s.failed)
      break; /* the consumer reports it; the epoch ends there */
  }
  pthread_mutex_lock(&p->lock);
  p->done = true;
  pthread_cond_broadcast(&p->changed);
  pthread_mutex_unlock(&p->lock);
  return NULL;
}

gs__prefetch *gs__prefetch_start(gs_data_loader *l) {
  const char *fn = "data_loader_reset";
  gs__prefetch *p = calloc(1, sizeof *p);
  if (p)
    p->ring = calloc((size_t)l->opt.prefetch, sizeof *p->ring);
  if (!p || !p->ring) {
    if (p)
      free(p->ring);
    free(p);
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "cannot allocate %d prefetch slots", l->opt.prefetch);
    return NULL;
  }
  p->loader = l;
  p->capacity = l->opt.prefetch;
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->changed, NULL);
  int rc = pthread_create(&p->thread, NULL, worker, p);
  if (rc != 0) {
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->changed);
    free(p->ring);
    free(p);
    gs__error(GS_ERR_STATE, fn, "cannot start the prefetch thread: %s", strerror(rc));
    return NULL;
  }
  return p;
}

static void dispose_parts(gs_tensor *parts, const char *why) {
  for (int f = 0; f < GS_DATASET_MAX_FIELDS; f++)
    if (parts[f].id && gs_is_alive(parts[f]))
      gs__dispose_as(parts[f], why);
}

void gs__prefetch_stop(gs__prefetch *p) {
  if (!p)
    return;
  pthread_mutex_lock(&p->lock);
  p->stop = true;
  pthread_cond_broadcast(&p->changed);
  pthread_mutex_unlock(&p->lock);
  pthread_join(p->thread, NULL);
  /* The worker is gone: what is left in the ring is ours alone. */
  const char *why = gs__intern("the loader's reset or free (a prefetched batch nobody took)");
  for (int i = 0; i < p->count; i++)
    dispose_parts(p->ring[(p->head + i) % p->capacity].parts, why);
  pthread_mutex_destroy(&p->lock);
  pthread_cond_destroy(&p->changed);
  free(p->ring);
  free(p);
}

int gs__prefetch_take(gs__prefetch *p, gs_tensor *parts, const char *fn) {
  pthread_mutex_lock(&p->lock);
  while (p->count == 0 && !p->done)
    pthread_cond_wait(&p->changed, &p->lock);
  if (p->count == 0) {
    pthread_mutex_unlock(&p->lock);
    return 0;
  }
  slot s = p->ring[p->head];
  p->head = (p->head + 1) % p->capacity;
  p->count--;
  pthread_cond_broadcast(&p->changed);
  pthread_mutex_unlock(&p->lock);
  if (s.failed) {
    gs__error(GS_ERR_STATE, fn, "the prefetch thread could not collate a batch: %s",
              s.error[0] ? s.error : "(no message)");
    return -1;
  }
  memcpy(parts, s.parts, sizeof s.parts);
  return 1;
}
