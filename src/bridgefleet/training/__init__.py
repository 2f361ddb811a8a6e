"""Off-policy training: one loop (:mod:`~bridgefleet.training.loop`) for both agents, each supplying how it
collects experience and which learners it trains (:mod:`~bridgefleet.training.branching_run`,
:mod:`~bridgefleet.training.bridge_run`), and the precision and threads chosen for this machine."""
