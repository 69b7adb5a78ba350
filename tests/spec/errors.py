"""The runner's own outcomes that are not assertion failures."""


class Skip(Exception):
    """The test needs something this runner or a standalone server does not offer
    (fail points, transactions, change streams, ...); the message says what."""
