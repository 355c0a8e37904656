/* timeline-test-util.h: what the timeline's tests share: a small training run recorded by
 * the real engine (a module, scoped steps with forward, backward and an update, epoch marks,
 * and one large evaluation allocation that makes the run's peak; the log is flushed after each
 * step, so a live reader gets it in pieces), and reading pixels of an image surface. */
#pragma once

#include <cairo.h>
#include <glib.h>

/* Steps in the recorded run; marks "epoch N" every 4 steps; the big allocation (32 KiB, twice a step's)
 * happens in scope "evaluate" after step EVAL_STEP. */
#define TRAIN_STEPS 14
#define EVAL_STEP 7
#define EVAL_BYTES (128 * 64 * 4)

void timeline_training_work(void);

/* The pixel at (x, y) of an ARGB32 or RGB24 surface as 0xAARRGGBB (premultiplied, as cairo
 * stores it; RGB24 as opaque). */
guint32 surface_pixel(cairo_surface_t *surface, int x, int y);
