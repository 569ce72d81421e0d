"""Verification as its own room: which searches an instance needs, the engines behind one interface, the Verdict.

:func:`ts_explore.verify` lives here (:mod:`.verify`). It asks
:mod:`ts_explore.reader` to read the TS objects into our model, decides which
exhaustive searches the instance needs (:mod:`.scope`: normal and
skipped-tile runs, each ``when_true``/``when_false`` assignment, the tile
counts of a persistent schedule), runs them through one engine
(:mod:`.engines`: ts-explore's checker in :mod:`ts_explore.check`, or TS's
BFS as the reference) and assembles the :class:`~ts_explore.model.verdict.Verdict`
with its scope. :mod:`.trip_search` finds the smallest failing trip count.
"""
