/* replay-warnings.h: the inconsistencies a replay meets in a log and steps over (issue 22).
 *
 * A log from a well-behaved writer never holds them: a tensor disposed that was never made or
 * is already gone, an id made twice while the first is alive, a scope ended twice, a scope
 * that names itself or an unknown scope as its outer one. A log from a bug report, another
 * program or a fuzzer can. The replay goes on (each case has a rule: replace, skip, cut), and
 * counts each one here with its event number, so `gradscope stats` and the inspector's status
 * line can say how much of what they show rests on such a rule. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum gs_replay_warning_kind {
  GS_REPLAY_WARN_UNKNOWN_OBJECT,   /* disposed, moved or given an owner while not alive */
  GS_REPLAY_WARN_OBJECT_TWICE,     /* created while an object with its id is alive */
  GS_REPLAY_WARN_UNKNOWN_STORAGE,  /* freed while not alive */
  GS_REPLAY_WARN_STORAGE_TWICE,    /* allocated or shared while a storage with its id is alive */
  GS_REPLAY_WARN_UNKNOWN_SCOPE,    /* ended but never begun */
  GS_REPLAY_WARN_SCOPE_ENDED_TWICE,
  GS_REPLAY_WARN_SCOPE_TWICE,      /* begun with the id of a scope begun before */
  GS_REPLAY_WARN_SCOPE_OWN_OUTER,  /* names itself as its outer scope */
  GS_REPLAY_WARN_UNKNOWN_OUTER,    /* names a scope never begun as its outer scope */
  GS_REPLAY_WARN_NODE_TWICE,       /* created while a node with its id is alive */
  GS_REPLAY_WARN_KIND_COUNT
} gs_replay_warning_kind;

typedef struct gs_replay_warning {
  guint64 seq;  /* the event's number */
  guint32 kind; /* gs_replay_warning_kind */
  guint64 id;   /* the object, storage, scope or node it is about */
} gs_replay_warning;

/* How many warnings a replay keeps in full (the first ones); it counts every one. */
#define GS_REPLAY_WARNINGS_KEPT 64

/* One warning in words: "event 12: scope #3 ends a second time". Free with g_free. */
char *gs_replay_warning_describe(const gs_replay_warning *warning);

G_END_DECLS
