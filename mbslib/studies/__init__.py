"""Studies: a paper's system run by an integrator, with the outputs its chapter reports."""
