"""nbmake collects the tutorial notebooks only; ``executed/`` holds copies run on a GPU, kept with their outputs."""

collect_ignore_glob = ["executed/*"]
