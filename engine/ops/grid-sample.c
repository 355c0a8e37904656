/* grid-sample.c: F.grid_sample of 4-D inputs (torch.grid_sampler_2d): an image read at the
 * points of a grid, bilinear, nearest or bicubic, with zeros, border or reflection padding;
 * and of 5-D inputs (grid_sampler_3d): a volume read at a 3-D grid, trilinear (torch's
 * 'bilinear') or nearest.
 *
 * Its own loops (grid-sample-kernel.h, once per floating dtype, one code path for both ranks:
 * a 4-D input is a volume of depth 1 read with 2 coordinates) compute the output, and the
 * node, GridSampler2dBackward or GridSampler3dBackward as torch records them
 * (GridSampler2DBackward0, GridSampler3DBackward0), gives input and grid their gradients with
 * the matching backward loop. As in torch 1.13, whose
 * grid_sampler_2d_backward has no derivative, that formula is not differentiated again.
 */
#include <limits.h>
#include <math.h>

#include "ops-impl.h"

/* What the loops need: the sizes, the mode and the padding. */
typedef struct gs__grid_geom {
  int64_t n, c, d, h, w, od, oh, ow; /* d, od: 1 for a 4-D input */
  int coords;                        /* a grid point's: 2, or 3 for a 5-D input */
  gs_grid_sample_mode mode;
  gs_grid_padding padding;
  bool align;
} gs__grid_geom;

#define T float
#define SUFFIX f32
#include "grid-sample-kernel.h"
#undef T
#undef SUFFIX
#define T double
#define SUFFIX f64
#include "grid-sample-kernel.h"
#undef T
#undef SUFFIX

/* The sizes of input [N, C, (D,) H, W] and grid [N, (Do,) Ho, Wo, coords]. */
static gs__grid_geom geom_of(const int64_t *in, const int64_t *grid, int ndim,
                             gs_grid_sample_mode mode, gs_grid_padding padding, bool align) {
  bool vol = ndim == 5;
  return (gs__grid_geom){.n = in[0],
                         .c = in[1],
                         .d = vol ? in[2] : 1,
                         .h = in[ndim - 2],
                         .w = in[ndim - 1],
                         .od = vol ? grid[1] : 1,
                         .oh = grid[ndim - 3],
                         .ow = grid[ndim - 2],
                         .coords = vol ? 3 : 2,
                         .mode = mode,
                         .padding = padding,
                         .align = align};
}

/* The node's ints: the mode, the padding and align_corners; the sizes come from its inputs. */
static void load_geom(const gs__node *n, gs__grid_geom *g) {
  *g = geom_of(n->inputs[0].shape, n->inputs[1].shape, n->inputs[0].ndim,
               (gs_grid_sample_mode)n->ints[0], (gs_grid_padding)n->ints[1], n->ints[2] != 0);
}

/* d input and d grid from g, with the saved input (slot 0) and grid (slot 1) */
static void grid_sampler_backward(gs__node *n, gs_tensor hg, gs_tensor *grads) {
  const char *fn = n->kind->name;
  gs__grid_geom geom;
  load_geom(n, &geom);
  gs_tensor hin = gs__saved(n, 0), hgrid = gs__saved(n, 1);
  gs__tensor *gt = gs__lookup(hg, fn), *in = gt ? gs__lookup(hin, fn) : NULL;
  gs__tensor *grid = in ? gs__lookup(hgrid, fn) : NULL;
  if (!grid)
    return;
  gs_dtype dt = in->dtype;
  gs__tensor cg, cin, cgrid;
  bool have_g = gs__as_contiguous(gt, dt, &cg, fn);
  bool have_in = have_g && gs__as_contiguous(in, dt, &cin, fn);
  bool have_grid = have_in && gs__as_contiguous(grid, dt, &cgrid, fn);
  gs_tensor d_in = GS_NO_TENSOR, d_grid = GS_NO_TENSOR;
  if (have_grid && gs__needs_grad(n, 0))
    d_in = gs_zeros(dt, n->inputs[0].shape, n->inputs[0].ndim);
  if (have_grid && gs__needs_grad(n, 1))
    d_grid = gs_zeros(dt, n->inputs[1].shape, n->inputs[1].ndim);
  /* looked up after both are made: a registration may move the tensor table */
  gs__tensor *di = d_in.id ? gs__lookup(d_in, fn) : NULL;
  gs__tensor *dg = d_grid.id ? gs__lookup(d_grid, fn) : NULL;
  bool ok = have_grid && (d_in.id || !gs__needs_grad(n, 0)) && (d_grid.id || !gs__needs_grad(n, 1));
  if (ok && dt == GS_F32)
    grid_sample_backward_f32(
        &geom, (const float *)gs__tensor_data(&cg), (const float *)gs__tensor_data(&cin),
        (const float *)gs__tensor_data(&cgrid), di ? (float *)gs__tensor_data(di) : NULL,
        dg ? (float *)gs__tensor_data(dg) : NULL);
  else if (ok)
    grid_sample_backward_f64(
        &geom, (const double *)gs__tensor_data(&cg), (const double *)gs__tensor_data(&cin),
        (const double *)gs__tensor_data(&cgrid), di ? (double *)gs__tensor_data(di) : NULL,
        dg ? (double *)gs__tensor_data(dg) : NULL);
  if (have_grid)
    gs__tensor_release(&cgrid);
  if (have_in)
    gs__tensor_release(&cin);
  if (have_g)
    gs__tensor_release(&cg);
  if (ok) {
    if (d_in.id)
      grads[0] = gs__reduce_grad(n, 0, d_in);
    if (d_grid.id)
      grads[1] = gs__reduce_grad(n, 1, d_grid);
    return;
  }
  if (d_in.id)
    gs_dispose(d_in);
  if (d_grid.id)
    gs_dispose(d_grid);
}
GS__BACKWARD(GridSampler2dBackward, grid_sampler_backward);
GS__BACKWARD(GridSampler3dBackward, grid_sampler_backward);

/* The checks torch's grid_sampler makes, in its words where it has them; false after
 * reporting. */
static bool check_grid_sample(const gs__tensor *in, const gs__tensor *grid,
                              gs_grid_sample_mode mode, gs_grid_padding padding, const char *fn) {
  char si[GS__SHAPE_STR], sg[GS__SHAPE_STR];
  if ((unsigned)mode > GS_GRID_SAMPLE_BICUBIC || (unsigned)padding > GS_GRID_PADDING_REFLECTION) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "expected a mode 0 to 2 (bilinear, nearest, bicubic) and a padding 0 to 2 (zeros, "
              "border, reflection), got mode %d and padding %d",
              (int)mode, (int)padding);
    return false;
  }
  if (!gs_dtype_is_floating(in->dtype) || in->dtype != grid->dtype) {
    gs__error(GS_ERR_DTYPE, fn,
              "expected input and grid of one floating dtype (f32 or f64), got input %s and "
              "grid %s",
              gs_dtype_name(in->dtype), gs_dtype_name(grid->dtype));
    return false;
  }
  gs__shape_str(si, in->shape, in->ndim), gs__shape_str(sg, grid->shape, grid->ndim);
  int nd = in->ndim;
  if ((nd != 4 && nd != 5) || grid->ndim != nd) {
    gs__error(GS_ERR_SHAPE, fn,
              "expected a 4-D input [N, C, H, W] with a 4-D grid [N, Ho, Wo, 2], or a 5-D input "
              "[N, C, D, H, W] with a 5-D grid [N, Do, Ho, Wo, 3], got input with sizes %s and "
              "grid with sizes %s",
              si, sg);
    return false;
  }
  if (nd == 5 && mode == GS_GRID_SAMPLE_BICUBIC) {
    gs__error(GS_ERR_ARGUMENT, fn, "bicubic interpolation only supports 4D input");
    return false;
  }
  if (in->shape[0] != grid->shape[0]) {
    gs__error(GS_ERR_SHAPE, fn,
              "expected grid and input to have same batch size, but got input with sizes %s and "
              "grid with sizes %s",
              si, sg);
    return false;
  }
  if (grid->shape[nd - 1] != nd - 2) {
    gs__error(GS_ERR_SHAPE, fn,
              "expected grid to have size %d in last dimension, but got grid with sizes %s", nd - 2,
              sg);
    return false;
  }
  for (int d = 2; d < nd; d++)
    if (in->shape[d] <= 0) {
      gs__error(GS_ERR_SHAPE, fn,
                "expected input to have non-empty spatial dimensions, but input has sizes %s with "
                "dimension %d being empty",
                si, d);
      return false;
    }
  return true;
}

gs_tensor gs_grid_sample(gs_tensor hin, gs_tensor hgrid, gs_grid_sample_mode mode,
                         gs_grid_padding padding, bool align_corners) {
  const char *fn = "grid_sampler";
  gs__tensor *in = gs__lookup(hin, fn), *grid = in ? gs__lookup(hgrid, fn) : NULL;
  if (!grid || !check_grid_sample(in, grid, mode, padding, fn))
    return GS_NO_TENSOR;
  int nd = in->ndim;
  gs__grid_geom geom = geom_of(in->shape, grid->shape, nd, mode, padding, align_corners);
  gs__tensor cin, cgrid;
  if (!gs__as_contiguous(in, in->dtype, &cin, fn))
    return GS_NO_TENSOR;
  if (!gs__as_contiguous(grid, grid->dtype, &cgrid, fn)) {
    gs__tensor_release(&cin);
    return GS_NO_TENSOR;
  }
  gs__tensor *out;
  int64_t out_shape[5] = {geom.n, geom.c, geom.od, geom.oh, geom.ow};
  if (nd == 4)
    out_shape[2] = geom.oh, out_shape[3] = geom.ow;
  gs_tensor h = gs__tensor_new(in->dtype, out_shape, nd, fn, &out);
  if (h.id && in->dtype == GS_F32)
    grid_sample_forward_f32(&geom, (const float *)gs__tensor_data(&cin),
                            (const float *)gs__tensor_data(&cgrid), (float *)gs__tensor_data(out));
  else if (h.id)
    grid_sample_forward_f64(&geom, (const double *)gs__tensor_data(&cin),
                            (const double *)gs__tensor_data(&cgrid),
                            (double *)gs__tensor_data(out));
  gs__tensor_release(&cgrid);
  gs__tensor_release(&cin);
  if (!h.id)
    return GS_NO_TENSOR;
  /* the new tensor may have moved the table: look all three up again */
  in = gs__lookup(hin, fn), grid = gs__lookup(hgrid, fn), out = gs__lookup(h, fn);
  gs__node *n = gs__record(nd == 5 ? &GridSampler3dBackward : &GridSampler2dBackward, out, 2,
                           (const gs__tensor *[]){in, grid}, 2);
  if (n) {
    gs__save(n, 0, in);
    gs__save(n, 1, grid);
    n->ints[0] = mode, n->ints[1] = padding, n->ints[2] = align_corners;
  }
  return h;
}
