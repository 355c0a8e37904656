/* stale.c: the stale-handle error every kind of handle reports (tensors here; scopes,
 * composites, modules and optimizers from the layers above), told from its pool's report of the
 * slot: who ended the handle's record and at which event, and how many records the slot has
 * held since, or plainly that the report was dropped.
 */
#include <stdio.h>
#include <string.h>

#include "core-impl.h"

/* "a" or "an" before a noun. */
static const char *article(const char *noun) {
  return noun[0] && strchr("aeiou", noun[0]) ? "an" : "a";
}

void gs__report_stale(const gs__handle_kind *kind, uint64_t id, const char *fn) {
  if (id == 0) {
    gs__error(GS_ERR_STALE_HANDLE, fn, "expected %s %s, got the empty handle",
              article(kind->noun), kind->noun);
    return;
  }
  gs__pool_id_report report = gs__pool_report_of(kind->pool, id);
  char subject[128];
  snprintf(subject, sizeof subject, "%s #%u.%u", kind->noun,
           (unsigned)gs__pool_index(kind->pool, id), (unsigned)(id >> 32));
  char since[96] = "";
  if (report.reuses > 0)
    snprintf(since, sizeof since, " (its slot has held %u %s since)", report.reuses,
             report.reuses == 1 ? kind->noun : kind->nouns);
  unsigned long long event = report.event;
  switch (report.state) {
  case GS__POOL_ENDED:
    if (report.ending == GS__POOL_MOVED)
      gs__error(GS_ERR_STALE_HANDLE, fn,
                "%s is stale: %s was moved into %s at event %llu; use that handle%s", subject,
                kind->it, report.by, event, since);
    else if (kind->by_is_name)
      gs__error(GS_ERR_STALE_HANDLE, fn, "%s '%s' is stale: %s was %s at event %llu%s", subject,
                report.by, kind->it, kind->ended, event, since);
    else
      gs__error(GS_ERR_STALE_HANDLE, fn, "%s is stale: %s was %s by %s at event %llu%s", subject,
                kind->it, kind->ended, report.by, event, since);
    break;
  case GS__POOL_FORGOTTEN:
    gs__error(GS_ERR_STALE_HANDLE, fn,
              "%s is stale: %s was %s, but its slot has held %u %s since and only the last %u "
              "disposals of a slot are remembered, so %s%s%s no longer known",
              subject, kind->it, kind->ended, report.reuses, kind->nouns, GS__POOL_HISTORY,
              kind->by_is_name ? "its name and when it was " : "what ", kind->ended,
              kind->by_is_name ? " are" : " it is");
    break;
  default: /* a live id never gets here; anything else was never handed out */
    gs__error(GS_ERR_STALE_HANDLE, fn,
              "%s handle %#llx was never created by this process (a forged or corrupted "
              "handle)",
              kind->noun, (unsigned long long)id);
    break;
  }
}
