/* tours.c: the guided tours' steps, as data (issue 21). Each tour's program is in
 * examples/tours/; its marks and tensor names are what the queries below search for, so a
 * change there must change here (the cli suite's tours test resolves every step of every
 * tour in its program's fresh log and fails on a step that finds nothing). Paragraphs say
 * what to look at and why; the facts (numbers, versions, owners) come from the model's own
 * sentence for the event, shown beside the paragraph. */
#include <glib/gi18n-lib.h>
#include <string.h>

#include "tours.h"

#define EVENTS GS_TOUR_PAGE_EVENTS
#define GRAPH GS_TOUR_PAGE_GRAPH
#define MEMORY GS_TOUR_PAGE_MEMORY
#define SCOPES GS_TOUR_PAGE_SCOPES

static const gs_tour_step storage_steps[] = {
    {"views", "tensor_create", NULL, "x", EVENTS,
     N_("x is six numbers in one storage: a tensor is a view of its storage (an offset, a "
        "shape and strides), and the storage holds the bytes.")},
    {"views", "tensor_create", NULL, "m", EVENTS,
     N_("m = x.view(2, 3) makes a new tensor over the same storage: no byte moves, only the "
        "shape and strides (3, 1) are new.")},
    {"views", "tensor_create", NULL, "t", EVENTS,
     N_("t = m.T swaps the strides to (1, 3). It still reads the same bytes, so t is not "
        "contiguous: walking it row by row jumps through memory.")},
    {"contiguous", "tensor_create", NULL, "t_contiguous", EVENTS,
     N_("contiguous() copies only when it must: for t it allocates a new storage with "
        "row-major strides; for m, already row-major, it returns a view.")},
    {"blob", "tensor_create", NULL, "b", EVENTS,
     N_("from_blob wraps memory the program owns, without copying: the program's own writes "
        "show in the tensor, as torch.from_numpy does with an array.")},
    {"numpy", "tensor_create", NULL, "from_npy", MEMORY,
     N_("A .npy file, as numpy.save writes it, is mapped as the storage: the file's pages are "
        "the tensor's bytes, read when touched, never copied.")},
};

static const gs_tour_step clone_detach_steps[] = {
    {"clone", "tensor_create", NULL, "c", EVENTS,
     N_("c = a.clone() is a copy in meaning, but it costs nothing yet: c's storage shares "
        "a's bytes copy-on-write.")},
    {"write the clone", "storage_materialise", NULL, NULL, MEMORY,
     N_("The first write to c copies the bytes into a storage of its own, just before "
        "writing, so a never sees it.")},
    {"detach", "tensor_create", NULL, "d", EVENTS,
     N_("d = a.detach() is a new leaf outside the graph over the same storage, and it shares "
        "a's version counter too.")},
    {"write through detach", "inplace_write", NULL, "d", EVENTS,
     N_("A write through d lands in a's bytes and bumps the version they share, so a backward "
        "that saved a can tell its input changed.")},
};

static const gs_tour_step version_steps[] = {
    {"forward", "node_create", "MulBackward", "b", GRAPH,
     N_("b = a * a records MulBackward, which saves a (its gradient is 2a) and the version a "
        "had when it was saved.")},
    {"in-place write", "inplace_write", NULL, "alias", EVENTS,
     N_("A write through a detached alias of a bumps the version counter a shares: the saved "
        "a is not what MulBackward saw any more.")},
    {"backward", "error", NULL, NULL, EVENTS,
     N_("Backward checks every saved tensor's version before using it, and stops with an "
        "error naming the tensor, both versions and the op that wrote it.")},
    {"fix", "inplace_write", NULL, "copy", EVENTS,
     N_("The fix: write on a clone. It has its own bytes (copied on this write) and its own "
        "version counter, so what MulBackward saved stays untouched.")},
    {"fix", "backward_end", NULL, NULL, GRAPH,
     N_("This time backward finds every saved tensor at the version it was saved at, and "
        "accumulates a's gradient.")},
};

static const gs_tour_step micrograd_steps[] = {
    {"forward", "node_create", "MulBackward", "e", GRAPH,
     N_("e = a * b: the multiplication records a node beside its output. Its formula, "
        "de = b da + a db, needs a and b, so it saves them.")},
    {"forward", "node_create", "MulBackward", "L", GRAPH,
     N_("L = d * f ends the expression: the graph now leads from L back to the four leaves "
        "a, b, c and f.")},
    {"backward", "backward_begin", NULL, "L", GRAPH,
     N_("Backward starts from L with dL/dL = 1 and walks the nodes in reverse topological "
        "order, each node applying the chain rule to its inputs.")},
    {"backward", "grad_accumulate", NULL, "a", GRAPH,
     N_("A leaf's gradient arrives at its AccumulateGrad: dL/da = dL/de * b = (-2) * (-3) = "
        "6, as micrograd computes it by hand.")},
    {"backward", "backward_end", NULL, NULL, GRAPH,
     N_("Backward is done: every leaf holds its gradient, and the graph's saved tensors are "
        "freed (unless the graph was retained).")},
};

static const gs_tour_step scopes_steps[] = {
    {"scope", "scope_begin", "step", NULL, SCOPES,
     N_("A dispose scope begins: from now on, what this thread creates belongs to it, as in "
        "TorchSharp's NewDisposeScope.")},
    {"tensor in the scope", "tensor_create", NULL, "w", SCOPES,
     N_("w is created inside the scope: 'created in scope' goes up by one, and the scope "
        "owns w.")},
    {"parameter", "tensor_move", NULL, NULL, SCOPES,
     N_("Making a parameter of w moves its handle: w's handle is invalid now, the scope owns "
        "the parameter in its place, and the counters count one object, not two.")},
    {"scope end", "scope_end", NULL, NULL, SCOPES,
     N_("Ending the scope disposes everything it still owns, the parameter too: 'disposed in "
        "scope' goes up and the live count is back to zero.")},
};

static const gs_tour_step packed_steps[] = {
    {"collate without move", "composite_create", NULL, NULL, SCOPES,
     N_("The collate scope packs three padded sequences into a PackedSequence: four tensors "
        "that the scope owns as one object.")},
    {"collate without move", "scope_end", NULL, NULL, SCOPES,
     N_("The collate scope ends without moving the batch out, so it disposes it with "
        "everything else it owns.")},
    {"use after the scope", "error", NULL, NULL, EVENTS,
     N_("The LSTM gets a stale handle: the error names who disposed the packed sequence and "
        "at which event, instead of reading freed memory.")},
    {"move to outer", "owner_change", NULL, NULL, SCOPES,
     N_("This time the batch is moved out before the collate scope ends, to the enclosing "
        "scope or, with none open as here, to the program: its tensors move with it, as one.")},
    {"lstm", "node_create", "LSTMRecurrenceBackward", NULL, GRAPH,
     N_("The LSTM runs over the packed rows, each time step over the sequences still active, "
        "and records one fused node per layer for backward.")},
};

static const gs_tour_step memory_steps[] = {
    {"forward", "node_create", NULL, "hidden", MEMORY,
     N_("The forward pass begins: each op that needs its input for backward saves it, so the "
        "batch is held by the graph as well as by the program.")},
    {"forward", "node_create", NULL, "logits", MEMORY,
     N_("The second layer saves its input, the ReLU's activation, to compute its weight's "
        "gradient: from here the timeline counts it as saved for backward (by category).")},
    {"backward", "backward_begin", NULL, "loss", MEMORY,
     N_("Backward begins with every activation still saved; the gradients it makes now come "
        "on top of them.")},
    {"backward", "node_free_saved", NULL, NULL, MEMORY,
     N_("As backward passes a node, it frees the tensors the node saved: the saved band "
        "shrinks during backward, not at the end.")},
    {"backward", "peak", NULL, NULL, MEMORY,
     N_("The step's peak, the most bytes alive at once: the gradients flowing between nodes "
        "(held by the engine, under 'other') and the first parameter gradients are alive while "
        "the activations backward has not reached yet are still saved.")},
    {"backward", "scope_end", NULL, NULL, MEMORY,
     N_("The step's scope ends and disposes its temporaries: what stays is parameters, "
        "their gradients and the program's own data.")},
};

static const gs_tour_step sharing_steps[] = {
    {"from numpy", "storage_alloc", NULL, NULL, MEMORY,
     N_("gradscope.from_numpy(a) copies nothing: x's storage wraps the array's own bytes, and "
        "keeps the array alive until the engine lets the bytes go.")},
    {"from numpy", "inplace_write", NULL, "x", EVENTS,
     N_("x += 1 writes into the array, and the values recorded right after it hold NumPy's "
        "earlier write too (100 became 101). NumPy's writes bypass the version counter: only "
        "x's own write counts.")},
    {"back to numpy", "tensor_dispose", NULL, "x", MEMORY,
     N_("x.numpy() and memoryview(x) hand out the same bytes again. The array from x.numpy() "
        "pins the storage: x is disposed here, but its storage stays alive.")},
    {"let go", "storage_free", NULL, NULL, MEMORY,
     N_("The last pin goes and the storage with it. The bytes were NumPy's, so the engine "
        "frees nothing of them: it lets go of the array, which still holds them.")},
    {"to torch", "inplace_write", NULL, "y", EVENTS,
     N_("torch.from_dlpack(y) is a PyTorch tensor at y's data pointer: PyTorch's in-place "
        "multiplication by 10 shows in the values recorded right after gradscope's own write, "
        "y += 1.")},
    {"from torch", "storage_alloc", NULL, NULL, MEMORY,
     N_("gradscope.from_dlpack(w) goes the other way: z's storage wraps the bytes PyTorch lent "
        "through DLPack, at w's data pointer.")},
    {"from torch", "tensor_dispose", NULL, "z", MEMORY,
     N_("When z goes, its storage goes in the same event and hands the bytes back to PyTorch "
        "(DLPack's deleter) instead of freeing them: w is still PyTorch's, alive and "
        "writable.")},
};

#define TOUR(name, title, steps) {name, title, "tour-" name, GS_TOUR_C, steps, G_N_ELEMENTS(steps)}
#define PYTHON_TOUR(name, title, steps)                                                       \
  {name, title, "tour-" name ".py", GS_TOUR_PYTHON, steps, G_N_ELEMENTS(steps)}

static const gs_tour tours[] = {
    TOUR("storage", N_("Storage, shape and strides"), storage_steps),
    TOUR("clone-detach", N_("Clone is copy-on-write, detach shares the version"),
         clone_detach_steps),
    TOUR("version", N_("The version counter and the in-place error"), version_steps),
    TOUR("micrograd", N_("Autograd from scratch"), micrograd_steps),
    TOUR("scopes", N_("Dispose scopes and their statistics"), scopes_steps),
    TOUR("packed", N_("A PackedSequence crossing a collate scope"), packed_steps),
    TOUR("memory", N_("A training step's memory"), memory_steps),
    PYTHON_TOUR("sharing", N_("Tensors shared with NumPy and PyTorch"), sharing_steps),
};

guint gs_tour_count(void) { return G_N_ELEMENTS(tours); }

const gs_tour *gs_tour_at(guint i) { return i < G_N_ELEMENTS(tours) ? &tours[i] : NULL; }

const gs_tour *gs_tour_find(const char *name) {
  for (guint i = 0; name && i < G_N_ELEMENTS(tours); i++)
    if (!strcmp(tours[i].name, name))
      return &tours[i];
  return NULL;
}

const char *gs_tour_page_name(gs_tour_page page) {
  static const char *const names[GS_TOUR_PAGE_N] = {"events", "graph", "memory", "scopes"};
  return page < GS_TOUR_PAGE_N ? names[page] : "events";
}
