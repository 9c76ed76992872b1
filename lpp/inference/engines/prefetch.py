"""Cache hints for numba kernels: ask the CPU to start loading a matrix row (or one cell)
before it is read.

The sparse sampler reads and writes rows of ``V x K`` tables at columns it knows a few entries
ahead; on a 10,000-word vocabulary those tables exceed the L2 cache, and each entry would
otherwise wait for a miss. :func:`prefetch_row` emits LLVM's ``llvm.prefetch`` for every
64-byte line of ``table[row, :]``, :func:`prefetch_cell` for the line of ``table[row, col]``.
They are only hints: they never change a result, and an out-of-range index is the caller's
error, exactly as for a read.
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

#: bytes per cache line on the x86-64 and ARMv8 cores this targets
CACHE_LINE = 64


@intrinsic
def prefetch_row(typingctx, table, row):
    """Hint that ``table[row, :]`` (a C-contiguous 2-D array) is about to be used."""
    if not (isinstance(table, types.Array) and table.ndim == 2 and table.layout == "C"
            and isinstance(row, types.Integer)):
        return None
    sig = types.void(table, row)

    def codegen(context, builder, signature, args):
        table_type, row_type = signature.args
        array = context.make_array(table_type)(context, builder, args[0])
        zero = context.get_constant(types.intp, 0)
        index = context.cast(builder, args[1], row_type, types.intp)
        start = cgutils.get_item_pointer(context, builder, table_type, array, [index, zero])
        byte_ptr = ir.IntType(8).as_pointer()
        start = builder.bitcast(start, byte_ptr)
        i32 = ir.IntType(32)
        hint_type = ir.FunctionType(ir.VoidType(), [byte_ptr, i32, i32, i32])
        hint = cgutils.get_or_insert_function(builder.module, hint_type, "llvm.prefetch.p0")
        n_cols = cgutils.unpack_tuple(builder, array.shape, count=2)[1]
        item = context.get_abi_sizeof(context.get_data_type(table_type.dtype))
        n_bytes = builder.mul(n_cols, context.get_constant(types.intp, item))
        line = context.get_constant(types.intp, CACHE_LINE)
        with cgutils.for_range_slice(builder, zero, n_bytes, line) as (offset, _):
            # read access (0), keep in all cache levels (3), data cache (1)
            builder.call(hint, [builder.gep(start, [offset]), ir.Constant(i32, 0),
                                ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def prefetch_cell(typingctx, table, row, col):
    """Hint that ``table[row, col]`` (a C-contiguous 2-D array) is about to be used: its one
    cache line."""
    if not (isinstance(table, types.Array) and table.ndim == 2 and table.layout == "C"
            and isinstance(row, types.Integer) and isinstance(col, types.Integer)):
        return None
    sig = types.void(table, row, col)

    def codegen(context, builder, signature, args):
        table_type, row_type, col_type = signature.args
        array = context.make_array(table_type)(context, builder, args[0])
        i = context.cast(builder, args[1], row_type, types.intp)
        j = context.cast(builder, args[2], col_type, types.intp)
        address = cgutils.get_item_pointer(context, builder, table_type, array, [i, j])
        byte_ptr = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        hint_type = ir.FunctionType(ir.VoidType(), [byte_ptr, i32, i32, i32])
        hint = cgutils.get_or_insert_function(builder.module, hint_type, "llvm.prefetch.p0")
        builder.call(hint, [builder.bitcast(address, byte_ptr), ir.Constant(i32, 0),
                            ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen
