"""The order in which a persistent GEMM hands out its output tiles, as a matplotlib figure.

Pure: a hand-out order in (:func:`ts_explore.kernels.gemm_tile_scheduler.tile_order`),
:class:`matplotlib.figure.Figure` out. Each output tile is coloured by the
round of the persistent loop that takes it (its number over the CTAs
launched): tiles of one colour are in flight together, so the fewer A rows and
B columns one colour spans, the more of them L2 serves. With few enough tiles
each one is labelled with the CTA that takes it.
"""

from __future__ import annotations

from typing import Sequence

from matplotlib.figure import Figure

LABEL_LIMIT = 256  # tiles up to which each one names its CTA


def tile_order_figure(order: Sequence[Sequence[int]], ctas: int, *, title: str = "", width: float = 6.0) -> Figure:
    """Rows: output tiles along M; columns: along N; colour: the round ``number // ctas`` that takes each tile."""
    import numpy as np

    numbers = np.asarray(order, dtype=np.int64)
    rounds = numbers // max(1, ctas)
    rows, cols = numbers.shape
    fig = Figure(figsize=(width, max(1.5, width * rows / max(cols, 1))))
    ax = fig.add_subplot()
    image = ax.imshow(rounds, cmap="viridis", interpolation="nearest", aspect="auto")
    fig.colorbar(image, ax=ax, label="round of the persistent loop")
    if numbers.size <= LABEL_LIMIT:
        for (r, c), n in np.ndenumerate(numbers):
            ax.text(c, r, str(n % max(1, ctas)), ha="center", va="center", fontsize="x-small", color="white")
    ax.set_xlabel("output tile along N")
    ax.set_ylabel("output tile along M")
    ax.set_title(title or f"tile hand-out order over {ctas} CTAs")
    return fig


__all__ = ["tile_order_figure"]
