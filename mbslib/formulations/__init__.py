"""Formulations: one coordinate-free description (:mod:`mbslib.model`) in each integrator
family's coordinates, and every trajectory mapped back to body poses and velocities
(:class:`mbslib.model.BodyStates`), where :mod:`mbslib.model`'s diagnostics apply alike."""
