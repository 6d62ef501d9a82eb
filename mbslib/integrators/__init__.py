"""Time integrators of mbsbook, one module per family of schemes."""
