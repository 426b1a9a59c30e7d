#!/usr/bin/python3
"""Makes the .npz fixtures of the tests (committed; run from the project root
with Debian's python to remake them):

  tests/data/npz/kws_stored.npz    numpy.savez: 'a' = sample_0.npy [1,1,26,49],
                                   'b' = calib_00..02 stacked [3,1,26,49]
  tests/data/npz/kws_deflated.npz  numpy.savez_compressed, the same arrays
  tests/bad/npz/*.npz              broken archives for the bad-input corpus
"""
import io
import zipfile

import numpy as np

K = "models/kws_cnn"
a = np.load(f"{K}/sample_0.npy")
b = np.concatenate([np.load(f"{K}/calib/calib_{i:02d}.npy") for i in range(3)])
np.savez("tests/data/npz/kws_stored.npz", a=a, b=b)
np.savez_compressed("tests/data/npz/kws_deflated.npz", a=a, b=b)

stored = open("tests/data/npz/kws_stored.npz", "rb").read()
deflated = open("tests/data/npz/kws_deflated.npz", "rb").read()
B = "tests/bad/npz/"
open(B + "truncated.npz", "wb").write(stored[: len(stored) // 2])
bad = bytearray(stored)
bad[200] ^= 0xFF  # inside member 'a's data: the CRC-32 no longer matches
open(B + "bad_crc.npz", "wb").write(bytes(bad))
bad = bytearray(deflated)
start = 30 + len("a.npy") + 20  # local header, name, zip64 extra
for i in range(start + 10, start + 60):
    bad[i] ^= 0x5A
open(B + "bad_deflate.npz", "wb").write(bytes(bad))


def zip_bytes(members, method=zipfile.ZIP_STORED):
    f = io.BytesIO()
    with zipfile.ZipFile(f, "w", method) as z:
        for name, data in members:
            z.writestr(name, data)
    return f.getvalue()


npy = io.BytesIO()
np.save(npy, a)
open(B + "not_npy_member.npz", "wb").write(zip_bytes([("a.npy", npy.getvalue()), ("readme.txt", b"hi")]))
open(B + "bzip2.npz", "wb").write(zip_bytes([("a.npy", npy.getvalue())], zipfile.ZIP_BZIP2))
open(B + "empty.npz", "wb").write(zip_bytes([]))
enc = bytearray(zip_bytes([("a.npy", npy.getvalue())]))
cd = enc.rfind(b"PK\x01\x02")
enc[cd + 8] |= 1  # central directory flags: encrypted
open(B + "encrypted.npz", "wb").write(bytes(enc))
open(B + "not_zip.npz", "wb").write(npy.getvalue())
