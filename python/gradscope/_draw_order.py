"""gradscope._draw_order: where torch's CPU kernels put a tensor's random draws. They walk a
lone output as TensorIterator does, in memory order, so an in-place fill of a transposed or
channels-last tensor puts the n-th draw at the n-th element in memory, not in index order;
the in-place samplers (normal_, uniform_, bernoulli_, exponential_, random_) draw through
in_memory_order to get torch's values at torch's places."""


def memory_order(tensor):
    """The dims of tensor, outermost first, in the order torch's TensorIterator walks it as a
    lone output: by stride (larger outside), equal strides by size (larger outside), as
    its reorder_dimensions sorts them; None for a contiguous tensor (its own order)."""
    if tensor.is_contiguous():
        return None
    shape, strides = tuple(tensor.shape), tensor.stride()
    perm = list(range(len(shape)))[::-1]  # innermost first, then sorted as torch's insertion sort

    def should_swap(d0, d1):
        s0, s1 = strides[d0], strides[d1]
        if s0 == 0 or s1 == 0:
            return 0
        if s0 != s1:
            return -1 if s0 < s1 else 1
        return 1 if shape[d0] > shape[d1] else 0

    for i in range(1, len(perm)):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return perm[::-1]


def in_memory_order(tensor, draw):
    """The values draw(shape) makes for tensor (a contiguous tensor of that shape, drawn in
    order), placed as torch's kernels place them: draw is asked for tensor's shape walked in
    memory order, and the result is indexed as tensor is."""
    order = memory_order(tensor)
    if order is None:
        return draw(tuple(tensor.shape))
    values = draw(tuple(tensor.shape[d] for d in order))
    back = [0] * len(order)
    for i, d in enumerate(order):
        back[d] = i
    return values.permute(*back)
