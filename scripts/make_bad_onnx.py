#!/usr/bin/python3
"""Generates the small ONNX fixtures of tests/bad/onnx/ (committed, so the
tests need no Python).  Run from the project root:

    /usr/bin/python3 scripts/make_bad_onnx.py

bad_*.onnx are models the importer must refuse with a precise error;
good_*.onnx exercise import paths the shared models and the ONNX node tests
do not (old-opset attribute forms, IR < 4 inputs with initializers, ...).
tests/unit/test_onnx_import.c lists what each must produce.  The models are
built with onnx.helper and deliberately never passed through onnx.checker.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "bad", "onnx")
F = TensorProto.FLOAT


def vi(name, shape, dtype=F):
    return helper.make_tensor_value_info(name, dtype, shape)


def model(nodes, inputs, outputs, inits=(), opset=13, ir=8, domain_opsets=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    ops = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in domain_opsets]
    m = helper.make_model(g, opset_imports=ops, producer_name="make_bad_onnx")
    m.ir_version = ir
    return m


def save(name, m):
    data = m if isinstance(m, bytes) else m.SerializeToString()
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def conv_model(**attrs):
    w = numpy_helper.from_array(np.arange(2 * 1 * 3 * 3, dtype=np.float32).reshape(2, 1, 3, 3), "w")
    n = helper.make_node("Conv", ["x", "w"], ["y"], name="conv0", **attrs)
    return model([n], [vi("x", [1, 1, 8, 8])], [vi("y", None)], [w])


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(7)

    # --- not a model at all -------------------------------------------------
    save("bad_empty.onnx", b"")
    save("bad_not_onnx.onnx", b"this is a text file, not an ONNX model\n")
    big = numpy_helper.from_array(rng.standard_normal((4, 1, 3, 3)).astype(np.float32), "w")
    full = model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv0")],
                 [vi("x", [1, 1, 8, 8])], [vi("y", None)], [big]).SerializeToString()
    save("bad_truncated.onnx", full[: len(full) // 2])
    save("bad_no_graph.onnx", onnx.ModelProto(ir_version=8, opset_import=[helper.make_opsetid("", 13)]))

    # --- opsets and domains ---------------------------------------------------
    relu = [helper.make_node("Relu", ["x"], ["y"], name="relu0")]
    save("bad_opset_old.onnx", model(relu, [vi("x", [1, 4])], [vi("y", [1, 4])], opset=0))
    save("bad_hardswish_opset13.onnx",
         model([helper.make_node("HardSwish", ["x"], ["y"], name="hswish0")],
               [vi("x", [1, 4])], [vi("y", [1, 4])], opset=13))
    save("bad_opset_new.onnx", model(relu, [vi("x", [1, 4])], [vi("y", [1, 4])], opset=18))
    save("bad_domain.onnx", model([helper.make_node("Relu", ["x"], ["y"], name="ms_relu",
                                                    domain="com.microsoft")],
                                  [vi("x", [1, 4])], [vi("y", [1, 4])],
                                  domain_opsets=[("com.microsoft", 1)]))

    # --- graph structure ------------------------------------------------------
    save("bad_unknown_op.onnx", model([helper.make_node("FancyOp", ["x"], ["y"], name="fancy0")],
                                      [vi("x", [1, 4])], [vi("y", [1, 4])]))
    save("bad_missing_input.onnx", model([helper.make_node("Add", ["x", "ghost"], ["y"], name="add0")],
                                         [vi("x", [1, 4])], [vi("y", [1, 4])]))
    c = numpy_helper.from_array(np.ones(4, np.float32), "c")
    save("bad_duplicate_initializer.onnx",
         model([helper.make_node("Add", ["x", "c"], ["y"], name="add0")],
               [vi("x", [1, 4])], [vi("y", [1, 4])], [c, c]))
    save("bad_duplicate_output.onnx",
         model([helper.make_node("Relu", ["x"], ["t"], name="relu_a"),
                helper.make_node("Relu", ["x"], ["t"], name="relu_b")],
               [vi("x", [1, 4])], [vi("t", [1, 4])]))
    save("bad_cycle.onnx",
         model([helper.make_node("Add", ["x", "b"], ["a"], name="add_a"),
                helper.make_node("Relu", ["a"], ["b"], name="relu_b")],
               [vi("x", [1, 4])], [vi("b", [1, 4])]))
    save("bad_graph_output.onnx", model(relu, [vi("x", [1, 4])], [vi("nowhere", [1, 4])]))

    # --- shapes and data ------------------------------------------------------
    save("bad_overflow_dim.onnx", model(relu, [vi("x", [1, 1 << 40])], [vi("y", None)]))
    save("bad_negative_dim.onnx", model(relu, [vi("x", [1, -3])], [vi("y", None)]))
    huge = TensorProto(name="huge", data_type=F, dims=[1 << 20, 1 << 20])
    save("bad_overflow_init.onnx",
         model([helper.make_node("Add", ["x", "huge"], ["y"], name="add0")],
               [vi("x", [1, 4])], [vi("y", None)], [huge]))
    save("bad_symbolic_dim.onnx", model(relu, [vi("x", [1, "width"])], [vi("y", None)]))
    short = TensorProto(name="short", data_type=F, dims=[4], raw_data=np.ones(3, np.float32).tobytes())
    save("bad_init_size.onnx",
         model([helper.make_node("Add", ["x", "short"], ["y"], name="add0")],
               [vi("x", [1, 4])], [vi("y", None)], [short]))
    ext = TensorProto(name="weights", data_type=F, dims=[2, 1, 3, 3],
                      data_location=TensorProto.EXTERNAL)
    for k, v in (("location", "weights.bin"), ("offset", "0"), ("length", "72")):
        e = ext.external_data.add()
        e.key, e.value = k, v
    save("bad_external_data.onnx",
         model([helper.make_node("Conv", ["x", "weights"], ["y"], name="conv0")],
               [vi("x", [1, 1, 8, 8])], [vi("y", None)], [ext]))
    save("bad_string_init.onnx",
         model([helper.make_node("Identity", ["s"], ["y"], name="id0")], [], [vi("y", None)],
               [helper.make_tensor("s", TensorProto.STRING, [1], [b"hello"])]))

    # --- attributes -----------------------------------------------------------
    m = conv_model(kernel_shape=[3, 3])
    a = helper.make_attribute("strides", 2.0)  # FLOAT where INTS is expected
    m.graph.node[0].attribute.append(a)
    save("bad_attr_type.onnx", m)
    save("bad_stride_zero.onnx", conv_model(strides=[0, 1]))
    save("bad_group_zero.onnx", conv_model(group=0))
    save("bad_pads_count.onnx", conv_model(pads=[1, 1, 1]))
    save("bad_auto_pad.onnx", conv_model(auto_pad="SOMETIMES"))
    w3 = numpy_helper.from_array(np.ones((2, 1, 3, 3, 3), np.float32), "w")
    save("bad_conv3d.onnx", model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv3d")],
                                  [vi("x", [1, 1, 5, 5, 5])], [vi("y", None)], [w3]))
    pads = numpy_helper.from_array(np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64), "pads")
    save("bad_pad_wrap.onnx",
         model([helper.make_node("Pad", ["x", "pads"], ["y"], name="pad0", mode="wrap")],
               [vi("x", [1, 1, 4, 4])], [vi("y", None)], [pads]))
    save("bad_clip_dynamic.onnx",
         model([helper.make_node("Clip", ["x", "lo", "hi"], ["y"], name="clip0")],
               [vi("x", [1, 4]), vi("lo", []), vi("hi", [])], [vi("y", None)]))
    # pads computed at run time: the output's shape would depend on them
    save("bad_pad_dynamic.onnx",
         model([helper.make_node("Pad", ["x", "p"], ["y"], name="pad0")],
               [vi("x", [1, 1, 4, 4]), vi("p", [8], TensorProto.INT64)], [vi("y", None)]))
    save("bad_maxpool_indices.onnx",
         model([helper.make_node("MaxPool", ["x"], ["y", "idx"], name="pool0", kernel_shape=[2, 2])],
               [vi("x", [1, 1, 4, 4])], [vi("y", None), vi("idx", None, TensorProto.INT64)]))
    bn = [numpy_helper.from_array(np.ones(2, np.float32), n) for n in ("s", "b", "m", "v")]
    save("bad_bn_training.onnx",
         model([helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"],
                                 ["y", "rm", "rv"], name="bn0", training_mode=1)],
               [vi("x", [1, 2, 3, 3])], [vi("y", None)], bn, opset=15))
    save("bad_dropout_mask.onnx",
         model([helper.make_node("Dropout", ["x"], ["y", "mask"], name="drop0"),
                helper.make_node("Cast", ["mask"], ["mf"], name="cast0", to=F)],
               [vi("x", [1, 4])], [vi("y", None), vi("mf", None)]))
    save("bad_concat_no_axis.onnx",
         model([helper.make_node("Concat", ["x", "x"], ["y"], name="cat0")],
               [vi("x", [1, 4])], [vi("y", None)]))
    # Opset < 7 forms refused: training mode, legacy broadcasts that do not fit.
    save("bad_bn_is_test0.onnx",
         model([helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"],
                                 name="bn6", is_test=0)],
               [vi("x", [1, 2, 3, 3])], [vi("y", None)], bn, opset=6, ir=3))
    save("bad_legacy_axis.onnx",
         model([helper.make_node("Add", ["x", "b3"], ["y"], name="add6", broadcast=1, axis=1)],
               [vi("x", [1, 2, 3, 4])], [vi("y", None)],
               [numpy_helper.from_array(np.ones(3, np.float32), "b3")], opset=6, ir=3))
    save("bad_legacy_shapes.onnx",
         model([helper.make_node("Sub", ["x", "z"], ["y"], name="sub6")],
               [vi("x", [1, 4]), vi("z", [4])], [vi("y", None)], opset=6, ir=3))
    save("bad_reshape1_no_shape.onnx",
         model([helper.make_node("Reshape", ["x"], ["y"], name="reshape1")],
               [vi("x", [1, 4])], [vi("y", None)], opset=1, ir=3))
    save("bad_transpose_perm.onnx",
         model([helper.make_node("Transpose", ["x"], ["y"], name="tr0", perm=[0, 0, 1])],
               [vi("x", [1, 4, 2])], [vi("y", None)]))

    # --- good models for paths not covered elsewhere -------------------------
    # IR 3 (mnist-8 style): initializers also listed as graph inputs; opset 7
    # attribute forms of Clip, Pad, Squeeze/Unsqueeze; Softmax legacy axis;
    # Constant node forms; Dropout with an unused mask; symbolic batch dim;
    # 1-D Conv; Transpose(0,3,1,2) input layout hint.
    wconv = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(3, 2, 1), "w1d")
    nodes = [
        helper.make_node("Transpose", ["img"], ["img_nchw"], name="to_nchw", perm=[0, 3, 1, 2]),
        helper.make_node("Clip", ["img_nchw"], ["clipped"], name="clip7", min=-1.0, max=6.0),
        helper.make_node("Pad", ["clipped"], ["padded"], name="pad7",
                         pads=[0, 0, 1, 2, 0, 0, 3, 4], value=0.5),
        helper.make_node("Squeeze", ["sq_in"], ["sq_out"], name="squeeze7", axes=[0, -1]),
        helper.make_node("Unsqueeze", ["sq_out"], ["usq_out"], name="unsqueeze7", axes=[1]),
        helper.make_node("Softmax", ["usq_out"], ["sm"], name=""),
        helper.make_node("Constant", [], ["k_float"], value_float=2.5),
        helper.make_node("Constant", [], ["k_ints"], value_ints=[1, 2, 3]),
        helper.make_node("Constant", [], ["k_tensor"],
                         value=numpy_helper.from_array(np.array([[1, 2], [3, 4]], np.int32))),
        helper.make_node("Mul", ["sm", "k_float"], ["scaled"], name="mul0"),
        helper.make_node("Dropout", ["scaled"], ["dropped", "unused_mask"], name="drop7"),
        helper.make_node("Conv", ["seq", "w1d"], ["seq_out"], name="conv1d",
                         strides=[2], pads=[1, 0], dilations=[1]),
        helper.make_node("LeakyRelu", ["seq_out"], ["lrelu"], name="lrelu0"),
        helper.make_node("HardSigmoid", ["lrelu"], ["hsig"], name="hsig0", alpha=0.25),
        helper.make_node("Gemm", ["mat", "wg"], ["gemm_out"], name="gemm0", transB=1, alpha=0.5),
        helper.make_node("Flatten", ["padded"], ["flat"], name="flat0"),
    ]
    wg = numpy_helper.from_array(np.ones((3, 4), np.float32), "wg")
    inputs = [vi("img", ["N", 4, 4, 2]), vi("sq_in", [1, 3, 1]), vi("seq", [1, 2, 7]),
              vi("mat", [2, 4]), vi("w1d", [3, 2, 1]), vi("wg", [3, 4])]
    outputs = [vi(n, None) for n in ("flat", "dropped", "hsig", "gemm_out", "k_ints", "k_tensor")]
    save("good_opset7.onnx", model(nodes, inputs, outputs, [wconv, wg], opset=7, ir=3))

    # Opset 13 forms: Clip/Pad/Squeeze/Unsqueeze parameters as constant inputs;
    # Reshape with a constant target; Softmax default axis -1; Conv without
    # kernel_shape; MaxPool with auto_pad; AveragePool 1-D and ceil_mode.
    cw = numpy_helper.from_array(np.ones((4, 2, 3, 3), np.float32), "cw")
    inits = [cw,
             numpy_helper.from_array(np.array(0.0, np.float32), "lo"),
             numpy_helper.from_array(np.array(6.0, np.float32), "hi"),
             numpy_helper.from_array(np.array([0, 0, 1, 1, 0, 0, 2, 2], np.int64), "pads13"),
             numpy_helper.from_array(np.array(-1.5, np.float32), "padval"),
             numpy_helper.from_array(np.array([2], np.int64), "sq_axes"),
             numpy_helper.from_array(np.array([0, -1], np.int64), "target")]
    nodes = [
        helper.make_node("Conv", ["x", "cw"], ["c"], name="conv_nokernel", pads=[1, 2, 3, 4],
                         strides=[1, 2], group=1),
        helper.make_node("Clip", ["c", "lo", "hi"], ["r6"], name="relu6"),
        helper.make_node("Clip", ["r6", "", "hi"], ["r6b"], name="clip_max_only"),
        helper.make_node("Pad", ["r6b", "pads13", "padval"], ["p"], name="pad13"),
        helper.make_node("MaxPool", ["p"], ["mp"], name="mp_same", kernel_shape=[3, 3],
                         strides=[2, 2], auto_pad="SAME_UPPER"),
        helper.make_node("Reshape", ["mp", "target"], ["flat"], name="reshape13"),
        helper.make_node("Softmax", ["flat"], ["sm"], name="softmax13"),
        helper.make_node("Unsqueeze", ["sm", "sq_axes"], ["u"], name="unsqueeze13"),
        helper.make_node("Squeeze", ["u", "sq_axes"], ["s"], name="squeeze13"),
        helper.make_node("AveragePool", ["seq"], ["ap"], name="ap1d", kernel_shape=[3],
                         strides=[2], pads=[1, 1], ceil_mode=1, count_include_pad=1),
        helper.make_node("Conv", ["x", "cw"], ["c2"], name="conv_nchw_hint", kernel_shape=[3, 3]),
    ]
    save("good_opset13.onnx",
         model(nodes, [vi("x", [1, 2, 9, 9]), vi("seq", [1, 3, 10])],
               [vi("s", None), vi("ap", None), vi("c2", None)], inits, opset=13))

    # Opset 1 forms: legacy broadcast with an axis (constant B and a graph
    # input B, both needing trailing 1s), without one, and broadcast = 0;
    # BatchNormalization and Dropout with is_test and consumed_inputs; PRelu
    # with a per-channel slope; Reshape's shape attribute; Pad's paddings;
    # Concat's default axis; Clip's attributes; Gemm with broadcast.  Values
    # are small integers and halves, so every result is exact in float32;
    # the expected outputs, computed here with numpy, sit beside the model.
    x = (np.arange(12, dtype=np.float32) - 5).reshape(1, 2, 2, 3)
    bvar = np.array([2.0, 0.5], np.float32)
    mat = np.array([[1, -2, 3], [0.5, 4, -1]], np.float32)
    c = {
        "bconst": np.array([1.0, -2.0], np.float32),
        "s": np.array([1.0, 2.0], np.float32), "b": np.array([0.5, -0.5], np.float32),
        "mean": np.array([1.0, 0.0], np.float32), "var": np.array([0.75, 0.75], np.float32),
        "slope": np.array([0.25, 0.5], np.float32),
        "mc": np.array([[1, 1, 1], [2, 2, 2]], np.float32),
        "row": np.array([10, 20, 30], np.float32),
        "wg": np.arange(12, dtype=np.float32).reshape(3, 4) - 6,
        "cg": np.array([1, 2, 3, 4], np.float32),
    }
    nodes = [
        helper.make_node("Add", ["x", "bconst"], ["a1"], name="add1", broadcast=1, axis=1,
                         consumed_inputs=[0, 0]),
        helper.make_node("Mul", ["a1", "bvar"], ["m1"], name="mul1", broadcast=1, axis=1),
        helper.make_node("BatchNormalization", ["m1", "s", "b", "mean", "var"], ["bn"],
                         name="bn1", is_test=1, epsilon=0.25, consumed_inputs=[0, 0, 0, 1, 1]),
        helper.make_node("PRelu", ["bn", "slope"], ["pr"], name="prelu1"),
        helper.make_node("Reshape", ["pr"], ["rs"], name="reshape1", shape=[2, 6]),
        helper.make_node("Pad", ["rs"], ["pd"], name="pad1", paddings=[0, 1, 0, 1], value=0.5),
        helper.make_node("Concat", ["pd", "pd"], ["cc"], name="concat1"),
        helper.make_node("Dropout", ["cc"], ["dr"], name="drop1", is_test=1),
        helper.make_node("Clip", ["dr"], ["cl"], name="clip1", min=-4.0, max=4.0),
        helper.make_node("Sub", ["mat", "mc"], ["sb"], name="sub1"),
        helper.make_node("Add", ["sb", "row"], ["sb2"], name="add1b", broadcast=1),
        helper.make_node("Gemm", ["mat", "wg", "cg"], ["gm"], name="gemm1", broadcast=1),
    ]
    inits = [numpy_helper.from_array(v, k) for k, v in c.items()]
    save("good_opset1.onnx",
         model(nodes, [vi("x", [1, 2, 2, 3]), vi("bvar", [2]), vi("mat", [2, 3])],
               [vi("cl", None), vi("sb2", None), vi("gm", None)], inits, opset=1, ir=3))
    a1 = x + c["bconst"][:, None, None]
    m1 = a1 * bvar[:, None, None]
    bn_ = ((m1 - c["mean"][:, None, None]) / np.sqrt(c["var"] + 0.25)[:, None, None]
           * c["s"][:, None, None] + c["b"][:, None, None])
    pr = np.where(bn_ < 0, bn_ * c["slope"][:, None, None], bn_)
    pd = np.pad(pr.reshape(2, 6), ((0, 0), (1, 1)), constant_values=0.5)
    cl = np.clip(np.concatenate([pd, pd], axis=1), -4, 4).astype(np.float32)
    sb2 = (mat - c["mc"] + c["row"]).astype(np.float32)
    gm = (mat @ c["wg"] + c["cg"]).astype(np.float32)
    for k, v in (("in_x", x), ("in_bvar", bvar), ("in_mat", mat), ("out_cl", cl),
                 ("out_sb2", sb2), ("out_gm", gm)):
        np.save(os.path.join(OUT, "good_opset1_%s.npy" % k), v)

    # --- every problem at once: five operators EasyNPU does not implement
    # and a symbolic dimension, reported in one error --------------------------
    i64 = TensorProto.INT64
    k = numpy_helper.from_array(np.array([2], np.int64), "k")
    ax = numpy_helper.from_array(np.array(0, np.int64), "ax")
    idx = numpy_helper.from_array(np.zeros((4, 4), np.int64), "idx")
    nodes = [
        helper.make_node("Einsum", ["x"], ["e"], name="einsum0", equation="ij->ji"),
        helper.make_node("TopK", ["e", "k"], ["tv", "ti"], name="topk0"),
        helper.make_node("CumSum", ["x", "ax"], ["cs"], name="cumsum0"),
        helper.make_node("GatherElements", ["x", "idx"], ["ge"], name="gatherel0"),
        helper.make_node("Trilu", ["x"], ["tr"], name="trilu0"),
        helper.make_node("Relu", ["z"], ["zr"], name="relu0"),
    ]
    save("bad_five_unsupported.onnx",
         model(nodes, [vi("x", [4, 4]), vi("z", [1, "N", "T"])],
               [vi("tv", None), vi("cs", None), vi("ge", None), vi("tr", None), vi("zr", None)],
               [k, ax, idx], opset=14))

    # --- shape folding: what exporters emit to compute shapes, on a symbolic
    # H and W that --input-shape fixes (x = 1x3x4x6 here) ---------------------
    def c64(name, v):
        return numpy_helper.from_array(np.array(v, np.int64), name)

    nodes = [
        helper.make_node("Shape", ["x"], ["sh"], name="shape0"),
        helper.make_node("Gather", ["sh", "i0"], ["n"], name="gather_n", axis=0),
        helper.make_node("Gather", ["sh", "i2"], ["h"], name="gather_h", axis=0),
        helper.make_node("Gather", ["sh", "i3"], ["w"], name="gather_w", axis=0),
        helper.make_node("Mul", ["h", "w"], ["hw"], name="mul_hw"),
        helper.make_node("Div", ["hw", "two"], ["hw2"], name="div_hw"),
        helper.make_node("Unsqueeze", ["n", "ax0"], ["n1"], name="unsq_n"),
        helper.make_node("Unsqueeze", ["hw2", "ax0"], ["hw21"], name="unsq_hw"),
        helper.make_node("Concat", ["n1", "six", "hw21"], ["tgt"], name="concat_shape", axis=0),
        # Reshape x [1,3,H,W] to [N, 6, H*W/2]
        helper.make_node("Reshape", ["x", "tgt"], ["r"], name="reshape0"),
        # Equal/Where on a shape (a -1 spelled out), Cast, ConstantOfShape, Range
        helper.make_node("Equal", ["tgt", "six3"], ["eq"], name="equal0"),
        helper.make_node("Where", ["eq", "minus1", "tgt"], ["tgt2"], name="where0"),
        helper.make_node("Reshape", ["r", "tgt2"], ["r2"], name="reshape1"),
        helper.make_node("Slice", ["sh", "st", "en"], ["hwv"], name="slice_shape"),
        helper.make_node("Cast", ["hwv"], ["hwf"], name="cast0", to=TensorProto.FLOAT),
        helper.make_node("ReduceSum", ["hwf"], ["hws"], name="sum_hw", keepdims=0),
        helper.make_node("ConstantOfShape", ["tgt"], ["ones"], name="ones0",
                         value=numpy_helper.from_array(np.array([1.0], np.float32))),
        helper.make_node("Mul", ["r2", "ones"], ["r3"], name="mul_ones"),
        helper.make_node("Add", ["r3", "hws"], ["r4"], name="add_hw"),
        helper.make_node("Range", ["z0", "hw2", "one"], ["rg"], name="range0"),
        helper.make_node("Cast", ["rg"], ["rgf"], name="cast1", to=TensorProto.FLOAT),
        helper.make_node("Add", ["r4", "rgf"], ["y"], name="add_range"),
    ]
    inits = [c64("i0", 0), c64("i2", 2), c64("i3", 3), c64("two", 2), c64("ax0", [0]),
             c64("six", [6]), c64("six3", [1, -7, -7]), c64("minus1", [-1, -1, -1]),
             c64("st", [2]), c64("en", [4]), c64("z0", 0), c64("one", 1)]
    save("good_shape_fold.onnx",
         model(nodes, [vi("x", [1, 3, "H", "W"])], [vi("y", None)], inits, opset=13))
    xs = rng.standard_normal((1, 3, 4, 6)).astype(np.float32)
    r = xs.reshape(1, 6, 12)
    y = (r * 1.0 + np.float32(4 + 6) + np.arange(12, dtype=np.float32)).astype(np.float32)
    np.save(os.path.join(OUT, "good_shape_fold_in_x.npy"), xs)
    np.save(os.path.join(OUT, "good_shape_fold_out_y.npy"), y)

    # --- integer graph input and output: the float reference computes it
    # (uint8 codes carried in float32), the int8 compiler refuses it ----------
    nodes = [
        helper.make_node("DequantizeLinear", ["x", "s", "zp"], ["xf"], name="dq0"),
        helper.make_node("Relu", ["xf"], ["r"], name="relu0"),
        helper.make_node("QuantizeLinear", ["r", "s", "zp"], ["y"], name="q0"),
    ]
    inits = [numpy_helper.from_array(np.array(0.5, np.float32), "s"),
             numpy_helper.from_array(np.array(128, np.uint8), "zp")]
    save("bad_int_io.onnx",
         model(nodes, [vi("x", [1, 4], TensorProto.UINT8)], [vi("y", [1, 4], TensorProto.UINT8)],
               inits, opset=13))
    placement()
    return 0


def placement():
    """good_placement.onnx: one branch per operator of docs/ops.md on one
    input x [1,16,8,8], each node named npu_* (runs on the NPU or as a view)
    or host_* (a host op); tests/unit/test_op_placement.c compiles it and
    checks every name, and runs it bit-exact.  Plus a sample input."""
    g = np.random.default_rng(11)
    inits, nodes, outs = [], [], []

    def const(name, a):
        inits.append(numpy_helper.from_array(np.asarray(a), name))
        return name

    def w(name, shape, s=0.2):
        return const(name, (g.standard_normal(shape) * s).astype(np.float32))

    def f32(name, v):
        return const(name, np.array(v, np.float32))

    def i64(name, v):
        return const(name, np.array(v, np.int64))

    def node(op, ins, name, **attrs):
        nodes.append(helper.make_node(op, ins, [name], name=name, **attrs))
        return name

    def out(t):
        outs.append(vi(t, None))

    x = "x"
    # --- NPU: convolutions, FC, elementwise, tables, pools, reductions, moves
    out(node("Conv", [x, w("wc", (16, 16, 3, 3)), w("bc", (16,))], "npu_Conv", pads=[1, 1, 1, 1]))
    fl = node("Flatten", [x], "npu_Flatten", axis=1)
    out(node("Gemm", [fl, w("wg", (1024, 10), 0.03)], "npu_Gemm"))
    r3 = node("Reshape", [x, i64("s3", [1, 16, 64])], "npu_Reshape")
    t3 = node("Transpose", [r3], "npu_Transpose", perm=[0, 2, 1])
    out(node("MatMul", [t3, w("wm", (16, 8))], "npu_MatMul"))
    out(node("Add", [x, node("Relu", [x], "npu_Relu")], "npu_Add"))
    out(node("Mul", [x, node("Tanh", [x], "npu_Tanh")], "npu_Mul"))
    out(node("Sub", [x, f32("half", 0.5)], "npu_Sub"))
    out(node("Div", [x, f32("two", 2.0)], "npu_Div"))
    out(node("Max", [x, f32("lo", 0.1)], "npu_Max"))
    out(node("Min", [x, f32("hi", 0.3)], "npu_Min"))
    out(node("Pow", [x, f32("p2", 2.0)], "npu_Pow"))
    out(node("Clip", [x, f32("cmin", -1.0), f32("cmax", 1.0)], "npu_Clip"))
    out(node("LeakyRelu", [x], "npu_LeakyRelu", alpha=0.1))
    out(node("Sigmoid", [x], "npu_Sigmoid"))
    out(node("HardSigmoid", [x], "npu_HardSigmoid"))
    out(node("HardSwish", [x], "npu_HardSwish"))
    out(node("Erf", [x], "npu_Erf"))
    out(node("Neg", [x], "npu_Neg"))
    out(node("Abs", [x], "npu_Abs"))
    e = node("Exp", [x], "npu_Exp")
    out(e)
    out(node("Log", [e], "npu_Log"))
    out(node("Reciprocal", [e], "npu_Reciprocal"))
    out(node("Sqrt", [e], "npu_Sqrt"))
    bn = [w("bs", (16,)), w("bb", (16,)), w("bm", (16,)), const("bv", np.full(16, 1.5, np.float32))]
    out(node("BatchNormalization", [x] + bn, "npu_BatchNormalization"))
    out(node("MaxPool", [x], "npu_MaxPool", kernel_shape=[2, 2], strides=[2, 2]))
    out(node("AveragePool", [x], "npu_AveragePool", kernel_shape=[2, 2], strides=[2, 2]))
    gap = node("GlobalAveragePool", [x], "npu_GlobalAveragePool")
    out(gap)
    out(node("ReduceMean", [x], "npu_ReduceMean", axes=[2, 3], keepdims=1))
    out(node("ReduceSum", [x, i64("ax23", [2, 3])], "npu_ReduceSum", keepdims=1))
    out(node("ReduceMax", [x], "npu_ReduceMax", axes=[2, 3], keepdims=1))
    pz = node("Pad", [x, i64("pz", [0, 0, 1, 1, 0, 0, 1, 1])], "npu_Pad")
    out(node("Conv", [pz, w("wp", (16, 16, 3, 3))], "npu_ConvPadded"))
    ca = node("Conv", [x, w("wa", (16, 16, 1, 1))], "npu_ConvA")
    cb = node("Conv", [x, w("wb", (16, 16, 1, 1))], "npu_ConvB")
    out(node("Concat", [ca, cb], "npu_Concat", axis=1))
    # --- host ops
    out(node("ConvTranspose", [x, w("wt", (16, 4, 2, 2))], "host_ConvTranspose", strides=[2, 2]))
    out(node("Softmax", [x], "host_Softmax", axis=1))
    out(node("LayerNormalization", [x, const("lg", np.ones(8, np.float32)),
                                     const("lb", np.zeros(8, np.float32))],
             "host_LayerNormalization", axis=-1))
    out(node("Floor", [x], "host_Floor"))
    out(node("Ceil", [x], "host_Ceil"))
    sc = f32("sc", [1, 1, 2, 2])
    out(node("Resize", [x, "", sc], "host_Resize", mode="nearest"))
    out(node("Resize", [x, "", sc], "host_ResizeLinear", mode="linear"))
    out(node("Slice", [x, i64("s0", [0]), i64("s4", [4]), i64("sax", [2])], "host_Slice"))
    out(node("Gather", [x, i64("gi", [0, 2, 4])], "host_Gather", axis=1))
    gap2 = node("GlobalAveragePool", [x], "npu_GlobalAveragePool2")
    out(node("Expand", [gap2, i64("es", [1, 16, 8, 8])], "host_Expand"))
    out(node("Sub", [x, node("Relu", [x], "npu_Relu2")], "host_Sub"))
    out(node("Max", [x, node("Tanh", [x], "npu_Tanh2")], "host_Max"))
    out(node("ReduceMean", [x], "host_ReduceMean", axes=[1], keepdims=1))
    cond = const("cond", (np.arange(64).reshape(1, 1, 8, 8) % 3 == 0))
    out(node("Where", [cond, x, node("Neg", [x], "npu_Neg2")], "host_Where"))
    out(node("Pad", [x, i64("pe", [0, 0, 1, 1, 0, 0, 1, 1])], "host_PadEdge", mode="edge"))
    save("good_placement.onnx", model(nodes, [vi("x", [1, 16, 8, 8])], outs, inits, opset=17))
    np.save(os.path.join(OUT, "good_placement_in_x.npy"),
            g.standard_normal((1, 16, 8, 8)).astype(np.float32))


if __name__ == "__main__":
    sys.exit(main())
