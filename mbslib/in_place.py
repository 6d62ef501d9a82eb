"""``in_place``: numba compilation for code that works in the arrays it is given.

Such a function allocates no array and returns none, so it needs no reference counting of the
arrays it receives. numba otherwise counts each array argument up on entry and down on exit, an
atomic operation each, and it cannot remove the pair when the function calls through a function
pointer (the models' kernels, :mod:`mbslib.formulations.compiled`): 10–25 % of a
generalized-α step of the heavy top went there. :data:`in_place` compiles without reference
counting (numba's ``_nrt=False``: an allocation is then a compile error) and refuses, also at
compile time, a function whose result holds an array (the caller would count a reference that
was never taken, and free the array under its owner).
"""

from __future__ import annotations

import numba
from numba.core import types
from numba.core.compiler import CompilerBase, DefaultPassBuilder
from numba.core.compiler_machinery import AnalysisPass, register_pass
from numba.core.errors import TypingError
from numba.core.typed_passes import NopythonTypeInference


def _holds_array(ty) -> bool:
    if isinstance(ty, types.Array):
        return True
    return isinstance(ty, types.BaseTuple) and any(_holds_array(t) for t in ty.types)


@register_pass(mutates_CFG=False, analysis_only=True)
class _NoArrayReturned(AnalysisPass):
    """Compile error if the function's result holds an array."""

    _name = "no_array_returned"

    def __init__(self):
        AnalysisPass.__init__(self)

    def run_pass(self, state):
        if _holds_array(state.return_type):
            raise TypingError(f"{state.func_id.func_qualname} is compiled in_place and returns "
                              f"{state.return_type}: return scalars, or write into an array it is given")
        return False


class _InPlaceCompiler(CompilerBase):
    """numba's nopython pipeline with :class:`_NoArrayReturned` after type inference."""

    def define_pipelines(self):
        pipeline = DefaultPassBuilder.define_nopython_pipeline(self.state)
        pipeline.add_pass_after(_NoArrayReturned, NopythonTypeInference)
        pipeline.finalize()
        return [pipeline]


#: Decorator: ``numba.njit`` (cached) without reference counting, for functions that allocate no
#: array and return none (both checked when numba compiles them).
in_place = numba.njit(cache=True, _nrt=False, pipeline_class=_InPlaceCompiler)
