"""Pure array kernels under the roster: numpy over the panel, numba where a recursion cannot be vectorised."""
