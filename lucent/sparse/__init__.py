"""Sparse matrices (SciPy CSR / CSC) in lucent graphs: ``import lucent.sparse as sparse``.

``sparse.csr_matrix('x')`` makes a symbolic sparse matrix, ``lucent.shared``
takes SciPy sparse values, and the ops of ``basic`` and ``math`` convert,
take apart, index, transpose, add, multiply, compare and dot them. They run
on the Python path; a graph holding sparse values compiled for FAST_RUN runs
there too (the Numba linker warns that sparse values have no Numba form).
"""

from lucent.sparse.basic import *  # noqa: F401,F403
from lucent.sparse.math import *  # noqa: F401,F403
from lucent.sparse import rewriting, sharedvar, vectorize  # noqa: F401,E402  (register rewrites, shared constructor, vectorization)
from lucent.sparse.sharedvar import sparse_constructor as shared  # noqa: F401
from lucent.sparse.type import SparseTensorType, _is_sparse  # noqa: F401
from lucent.sparse.variable import SparseConstant, SparseVariable  # noqa: F401
