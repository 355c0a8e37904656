/* timeline-frame.h: one layout of the memory timeline, a function of (model, viewport, size,
 * stacking): the plot rectangle, one gs_memory_column per pixel column of the plot (the
 * model's min/max summary, through a bucket cache when zoomed out: never one shape per
 * event), the byte scale and the viewport's peak. Columns tile the viewport in order; their
 * boundaries are the model's even split, or snapped to buckets (timeline-summary.h).
 * A column's stacks are the model's, except where its largest total is first reached by a
 * storage allocation followed by its tensor's creation: then the stacks are the creation's
 * (see settle_column in timeline-frame.c).
 * The GTK view and `gradscope export-timeline` both compute a frame and draw it with
 * timeline-draw.h; the view keeps it between draws, so hovering and moving the scrubber
 * redraw without asking the model again. */
#pragma once

#include <glib.h>

#include "timeline-index.h"
#include "timeline-summary.h"
#include "trace-model.h"

G_BEGIN_DECLS

#define GS_TIMELINE_NO_EVENT G_MAXUINT64

typedef struct gs_timeline_request {
  guint64 first, last; /* the viewport: events first..last inclusive (clamped to the model) */
  int width, height;   /* of the whole drawing, in pixels */
  gboolean by_scope;   /* stacks: scope groups, or memory categories */
} gs_timeline_request;

typedef struct gs_timeline_frame {
  gs_timeline_request request; /* as given, with first/last clamped */
  guint64 n_events;            /* in the model when computed */
  /* The plot rectangle: columns[i] is drawn at x = plot_x + i, one pixel wide. */
  int plot_x, plot_y, plot_width, plot_height;
  guint n_columns;
  gs_memory_column *columns;
  guint n_stacks;
  guint64 stack_peak[GS_MEMORY_MAX_STACKS]; /* each stack's largest value in the viewport */
  guint64 scale_max;  /* bytes at the top of the plot: a round number >= the peak */
  guint64 scale_step; /* bytes between gridlines */
  int peak_column;    /* column of the viewport's largest total, -1 if nothing is alive */
  guint64 peak_bytes, peak_index;
  gs_timeline_summary *summary; /* NULL: the model's columns directly */
} gs_timeline_frame;

/* A frame keeps a gs_timeline_summary between computes (default buckets), so zoomed-out
 * layouts of a long run do not rescan it. */
gs_timeline_frame *gs_timeline_frame_new(void);
/* With buckets of bucket_events events; 0 asks the model directly every time (tests). */
gs_timeline_frame *gs_timeline_frame_new_with_buckets(guint bucket_events);
void gs_timeline_frame_free(gs_timeline_frame *frame);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(gs_timeline_frame, gs_timeline_frame_free)

/* Lays out request over m (which may have no events: then an empty frame). */
void gs_timeline_frame_compute(gs_timeline_frame *frame, const gs_trace_model *m,
                               const gs_timeline_request *request);

/* The column whose events are drawn under x (drawing coordinates): the column there, or when
 * zoomed in past one event per pixel and it is empty, the next one (the event it shows); -1
 * outside the plot. */
int gs_timeline_frame_column_at(const gs_timeline_frame *frame, double x);
/* The event under x, clamped to the viewport; GS_TIMELINE_NO_EVENT when there are none. */
guint64 gs_timeline_frame_event_at(const gs_timeline_frame *frame, double x);
/* The x at the centre of the pixels that show event index (outside the plot for events
 * outside the viewport). */
double gs_timeline_frame_x_of(const gs_timeline_frame *frame, guint64 index);
/* The y of a byte count (plot_y + plot_height at 0). */
double gs_timeline_frame_y_of(const gs_timeline_frame *frame, guint64 bytes);

/* The byte scale's round top and step for a peak: 1, 2 or 5 times a power of ten of the unit
 * (B, KiB, MiB, GiB) the peak is best read in, with 3 to 6 steps. */
void gs_timeline_nice_scale(guint64 peak, guint64 *scale_max, guint64 *step);

G_END_DECLS
