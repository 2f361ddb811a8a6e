"""A training run on disk: its folder and lock, metrics and TensorBoard log, checkpoints, and loading its trained
policy (:mod:`~bridgefleet.runs.load`) without the trainer."""
