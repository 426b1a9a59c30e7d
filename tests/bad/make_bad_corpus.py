#!/usr/bin/python3
"""Generates the bad-input corpus files of tests/bad/{npy,pb,limits,program}
that are not hand-written (committed, so the tests need no Python).  Run from
the project root:

    /usr/bin/python3 tests/bad/make_bad_corpus.py

Each file is refused by the reader with the category and message listed for
it in tests/bad/MANIFEST (run by tests/bad/test_bad_corpus.c).  Files are
derived from the real ones where that is the point (a truncated copy of
models/kws_cnn/sample_0.npy or of an ONNX test-data .pb) and built byte by
byte where a precise defect is wanted.  Deterministic: running
it twice gives the same bytes.
"""
import os
import struct

import numpy as np
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BAD = os.path.join(ROOT, "tests", "bad")


def out(sub, name, data):
    d = os.path.join(BAD, sub)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def npy_header(d, version=1):
    """A .npy header for the dict text d (padded to 64 bytes as numpy does)."""
    body = d.encode("latin1")
    if version == 1:
        pre = 10
        hl = (pre + len(body) + 1 + 63) // 64 * 64 - pre
        return b"\x93NUMPY\x01\x00" + struct.pack("<H", hl) + body + b" " * (hl - len(body) - 1) + b"\n"
    pre = 12
    hl = (pre + len(body) + 1 + 63) // 64 * 64 - pre
    return (b"\x93NUMPY" + bytes([version, 0]) + struct.pack("<I", hl) + body +
            b" " * (hl - len(body) - 1) + b"\n")


def npy(descr, shape, payload=b"", fortran="False", version=1):
    shp = "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
    return npy_header("{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shp),
                      version) + payload


def make_npy():
    sample = open(os.path.join(ROOT, "models", "kws_cnn", "sample_0.npy"), "rb").read()
    out("npy", "truncated_data.npy", sample[: len(sample) - 100])
    out("npy", "truncated_header.npy", sample[:40])
    out("npy", "extra_data.npy", sample + b"\0\0\0\0")
    out("npy", "bad_magic.npy", b"\x93NUMPZ" + sample[6:])
    out("npy", "not_npy.npy", b"this is not a numpy file at all\n")
    out("npy", "empty.npy", b"")
    out("npy", "version9.npy", b"\x93NUMPY\x09\x00" + sample[8:])
    # header length past the end of the file (version 2: 32-bit length)
    out("npy", "header_len_huge.npy", b"\x93NUMPY\x02\x00\xff\xff\xff\x7f{'descr': '<f4'")
    out("npy", "overflow_shape.npy", npy("<f4", [2147483648, 2147483648, 2147483648]))
    out("npy", "huge_dim.npy", npy("<f4", [99999999999999999999]))
    out("npy", "rank9.npy", npy("<f4", [1] * 9, b"\0" * 4))
    out("npy", "negative_dim.npy", npy("<f4", [1, -26, 49, 1]))
    out("npy", "big_endian.npy", npy(">f4", [1, 26, 49, 1], b"\0" * 4 * 26 * 49))
    out("npy", "fortran_order.npy", npy("<f4", [1, 26, 49, 1], b"\0" * 4 * 26 * 49, fortran="True"))
    out("npy", "float16.npy", npy("<f2", [1, 26, 49, 1], b"\0" * 2 * 26 * 49))
    out("npy", "object_dtype.npy", npy("|O", [1]))
    out("npy", "structured.npy",
        npy_header("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }") + b"\0" * 4)
    out("npy", "unknown_key.npy",
        npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1, }") + b"\0" * 4)
    out("npy", "missing_shape.npy", npy_header("{'descr': '<f4', 'fortran_order': False, }"))
    out("npy", "unterminated_dict.npy", npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1,"))
    # valid files that do not fit the model they are given to
    out("npy", "wrong_shape.npy", npy("<f4", [1, 1, 49, 26], b"\0" * 4 * 26 * 49))
    out("npy", "zero_size.npy", npy("<f4", [1, 1, 0, 49]))
    out("npy", "zero_size_rank1.npy", npy("<f4", [0]))


def tensor_bytes(t):
    return t.SerializeToString()


def make_pb():
    src = os.path.join(os.path.dirname(ROOT), "shared", "models", "mnist-8", "test_data_set_0", "input_0.pb")
    real = open(src, "rb").read() if os.path.exists(src) else None
    if real is None:
        t = numpy_helper.from_array(np.zeros((1, 1, 28, 28), np.float32), "Input3")
        real = tensor_bytes(t)
    out("pb", "truncated.pb", real[: len(real) - 7])
    out("pb", "empty.pb", b"")
    out("pb", "not_protobuf.pb", b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff")

    def tp(name, dtype, dims, raw=None, **kw):
        t = TensorProto()
        t.name = name
        if dtype is not None:
            t.data_type = dtype
        t.dims.extend(dims)
        if raw is not None:
            t.raw_data = raw
        for k, v in kw.items():
            getattr(t, k).extend(v)
        return t

    out("pb", "raw_size_mismatch.pb", tensor_bytes(tp("x", TensorProto.FLOAT, [1, 4], b"\0" * 12)))
    out("pb", "typed_count_mismatch.pb", tensor_bytes(tp("x", TensorProto.FLOAT, [2, 3], float_data=[1.0] * 5)))
    out("pb", "no_data_type.pb", tensor_bytes(tp("x", None, [1], b"\0" * 4)))
    out("pb", "string_dtype.pb", tensor_bytes(tp("s", TensorProto.STRING, [1], string_data=[b"hi"])))
    out("pb", "float16_dtype.pb", tensor_bytes(tp("h", TensorProto.FLOAT16, [2], b"\0" * 4)))
    out("pb", "unknown_dtype.pb", tensor_bytes(tp("u", 99, [1], b"\0")))
    out("pb", "rank9.pb", tensor_bytes(tp("r9", TensorProto.FLOAT, [1] * 9, b"\0" * 4)))
    out("pb", "negative_dim.pb", tensor_bytes(tp("neg", TensorProto.FLOAT, [1, -5], b"")))
    out("pb", "huge_dim.pb", tensor_bytes(tp("big", TensorProto.FLOAT, [1 << 40], b"")))
    out("pb", "overflow_dims.pb", tensor_bytes(tp("ovf", TensorProto.INT8, [1 << 31, 1 << 31, 1 << 31], b"")))
    t = tp("ext", TensorProto.FLOAT, [4])
    t.data_location = TensorProto.EXTERNAL
    e = t.external_data.add()
    e.key, e.value = "location", "/etc/passwd"
    out("pb", "external_data.pb", tensor_bytes(t))
    t = tp("seg", TensorProto.FLOAT, [4], b"\0" * 16)
    t.segment.begin, t.segment.end = 0, 4
    out("pb", "segment.pb", tensor_bytes(t))
    # valid tensor, wrong shape for mnist-8's 1x1x28x28 input
    out("pb", "wrong_shape.pb", tensor_bytes(tp("Input3", TensorProto.FLOAT, [1, 1, 28, 27], b"\0" * 4 * 28 * 27)))


# ---- ONNX models over the limits ------------------------------------------

F = TensorProto.FLOAT


def model(nodes, inputs, outputs, inits=(), opset=13, name="g"):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m.SerializeToString()


def vi(name, shape, dtype=F):
    return helper.make_tensor_value_info(name, dtype, shape)


def make_onnx_limits():
    relu = lambda i, o, n="relu0": helper.make_node("Relu", [i], [o], name=n)
    out("limits", "onnx_rank9.onnx", model([relu("x", "y")], [vi("x", [1] * 9)], [vi("y", None)]))
    out("limits", "onnx_dim_huge.onnx",
        model([relu("x", "y")], [vi("x", [1, 3, 1 << 32, 1])], [vi("y", None)]))
    out("limits", "onnx_elems_overflow.onnx",
        model([relu("x", "y")], [vi("x", [1 << 31, 1 << 31, 1 << 31, 1 << 31])], [vi("y", None)]))
    out("limits", "onnx_long_node_name.onnx",
        model([relu("x", "y", "n" * 5000)], [vi("x", [1, 4])], [vi("y", None)]))
    out("limits", "onnx_long_tensor_name.onnx",
        model([relu("x" * 5000, "y")], [vi("x" * 5000, [1, 4])], [vi("y", None)]))
    out("limits", "onnx_long_graph_name.onnx",
        model([relu("x", "y")], [vi("x", [1, 4])], [vi("y", None)], name="g" * 5000))
    ins = ["x%d" % i for i in range(65)]
    out("limits", "onnx_node_65_inputs.onnx",
        model([helper.make_node("Concat", ins, ["y"], name="cat0", axis=1)],
              [vi(n, [1, 1]) for n in ins], [vi("y", None)]))
    big = numpy_helper.from_array(np.zeros(4, np.float32), "w")
    del big.dims[:]
    big.dims.extend([1 << 20, 1 << 20, 1 << 20])
    out("limits", "onnx_init_overflow.onnx",
        model([helper.make_node("Add", ["x", "w"], ["y"], name="add0")], [vi("x", [1, 4])],
              [vi("y", None)], inits=[big]))
    # zero-sized tensors where they make no sense
    w = numpy_helper.from_array(np.ones((4, 3, 3, 3), np.float32), "w")
    out("limits", "onnx_conv_zero_channels.onnx",
        model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv0", kernel_shape=[3, 3])],
              [vi("x", [1, 0, 8, 8])], [vi("y", None)], inits=[w]))
    out("limits", "onnx_conv_zero_kernel.onnx",
        model([helper.make_node("Conv", ["x", "w0"], ["y"], name="conv0")],
              [vi("x", [1, 3, 8, 8])], [vi("y", None)],
              inits=[numpy_helper.from_array(np.ones((4, 3, 0, 3), np.float32), "w0")]))
    out("limits", "onnx_input_float16.onnx",
        model([relu("x", "y")], [vi("x", [1, 4], TensorProto.FLOAT16)], [vi("y", None)]))
    # small inputs that shape inference would blow up past the element limit
    out("limits", "onnx_pad_amplify.onnx",
        model([helper.make_node("Pad", ["x", "p"], ["y"], name="pad0")], [vi("x", [1, 1, 1, 1])], [vi("y", None)],
              inits=[numpy_helper.from_array(np.array([0, 0, 60000, 60000, 0, 0, 60000, 60000], np.int64), "p")],
              opset=11))
    out("limits", "onnx_pad_huge.onnx",
        model([helper.make_node("Pad", ["x", "p"], ["y"], name="pad0")], [vi("x", [1])], [vi("y", None)],
              inits=[numpy_helper.from_array(np.array([0, 1 << 40], np.int64), "p")], opset=11))
    out("limits", "onnx_broadcast_amplify.onnx",
        model([helper.make_node("Add", ["x", "c"], ["y"], name="add0")], [vi("x", [1 << 30, 1])], [vi("y", None)],
              inits=[numpy_helper.from_array(np.ones((1, 8), np.float32), "c")]))
    out("limits", "onnx_kernel_huge.onnx",
        model([helper.make_node("MaxPool", ["x"], ["y"], name="pool0", kernel_shape=[70000, 1])],
              [vi("x", [1, 1, 8, 8])], [vi("y", None)]))


# ---- listings and arch descriptions ---------------------------------------
# (Program files are derived at test time by test_bad_corpus.c, since the
# program format is still moving.)

def make_listings():
    relu = ("relu name=\"r\" cast_mode=multicast hi=4 wi=4 ci=16 ho=4 wo=4 co=16 hk=1 wk=1 stride_h=1 "
            "stride_w=1 dil_h=1 dil_w=1 groups=1 tile_x=4 tile_y=4 tile_xi=4 tile_yi=4 zs=1 rows=1 "
            "clamp_lo=-128 clamp_hi=127 out_mult=1")
    out("limits", "asm_long_name.s", ('end name="%s"\n' % ("n" * 5000)).encode())
    out("limits", "asm_io_rank9.s", b"end\n.io input name=x dtype=int8 shape=1x1x1x1x1x1x1x1x1 mem=main addr=0\n")
    out("limits", "asm_zero_huge.s", b"end\n.section weights\n.zero 99999999999999\n")
    out("program", "instr_past_memory.s", (relu + " ofmap_addr=4090\nend\n").encode())
    out("program", "instr_ifmap_overlap.s", (relu + " ifmap_addr=0 ofmap_addr=8\nend\n").encode())


def make_arch():
    a = b'{"base": "easynpu", "main_dtcm_bytes": 0}'
    out("limits", "arch_main_dtcm_zero.json", a)
    out("limits", "arch_itcm_huge.json", b'{"itcm_bytes": 1099511627776}')
    out("limits", "arch_int_overflow.json", b'{"pes": 99999999999999999999999}')
    out("limits", "arch_deep_nesting.json", b'{"name": ' + b"[" * 5000 + b"]" * 5000 + b"}")
    out("limits", "arch_psum_huge.json", b'{"psum_depth": 1000000}')


def make_bind():
    """Values for --bind against tests/bad/onnx/bad_clip_dynamic.onnx (scalar
    float32 inputs 'lo' and 'hi'): a good one, and one of the wrong dtype."""
    for name, v in (("lo.npy", np.array(-0.5, np.float32)),
                    ("lo_float64.npy", np.array(-0.5, np.float64))):
        d = os.path.join(BAD, "bind")
        os.makedirs(d, exist_ok=True)
        np.save(os.path.join(d, name), v)


def main():
    make_bind()
    make_npy()
    make_pb()
    make_onnx_limits()
    make_listings()
    make_arch()


if __name__ == "__main__":
    main()
