"""Reading a report's stamp costs bounded work whatever the PDF holds: the sweep reads every hand-in's
report.pdf on the staff's login node (attempt_records.report_check), and `make submit` reads the
student's. A deflate bomb, a flood of streams and text made to make a search backtrack are each
read in a child process limited to 512 MiB of address space and a few CPU seconds: the read finishes
there, well inside both, and says "unreadable, because ..." or finds no stamp — never the staff's
memory or hours of CPU."""
import json
import resource
import subprocess
import sys
import zlib

from support.paths import ROOT

sys.path.insert(0, str(ROOT / "grader" / "scripts"))
import fingerprint  # noqa: E402

MIB = 1 << 20
MEMORY_LIMIT = 512 * MIB
CPU_LIMIT_S = 5  # each read takes well under a second; today's reader needed hours or gigabytes
OBJSTM = b"/Type/ObjStm/N 1/First 4/Filter/FlateDecode"  # where xelatex keeps the document information
FP = {"name": "alice", "fingerprint": "sha256:" + "ab" * 32,
      "files": {"naive.cu": "sha256:" + "cd" * 32, "tiled.cu": "sha256:" + "ef" * 32}}

READ_IN_CHILD = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
import fingerprint
start = time.process_time()
try:
    out = {"stamp": fingerprint.read_report_stamp(sys.argv[2])}
except ValueError as e:
    out = {"unreadable": str(e)}
print(json.dumps({**out, "cpu_s": time.process_time() - start}))
"""


def read_in_child(pdf):
    """read_report_stamp of the file pdf, in a child limited to MEMORY_LIMIT and CPU_LIMIT_S:
    {"stamp": ...} or {"unreadable": reason}, with the read's "cpu_s"."""
    def limits():
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
        resource.setrlimit(resource.RLIMIT_CPU, (CPU_LIMIT_S, CPU_LIMIT_S))
    # (the wall time only bounds a hang: the CPU limit is the bound, and a loaded machine spends it slowly)
    r = subprocess.run([sys.executable, "-c", READ_IN_CHILD, str(ROOT / "grader" / "scripts"), str(pdf)],
                       capture_output=True, text=True, preexec_fn=limits, timeout=600)
    assert r.returncode == 0, f"the read did not finish within {MEMORY_LIMIT // MIB} MiB and {CPU_LIMIT_S} s " \
                              f"of CPU (exit {r.returncode}):\n{r.stderr[-2000:]}"
    return json.loads(r.stdout)


def pdf(*streams, tail=b""):
    """The bytes of a PDF made of the given (dictionary, data) streams, each an object of its own."""
    out = [b"%PDF-1.5\n"]
    for i, (dictionary, data) in enumerate(streams, 1):
        out.append(b"%d 0 obj\n<<%s/Length %d>>\nstream\n%s\nendstream\nendobj\n" % (i, dictionary, len(data), data))
    return b"".join(out) + tail + b"%%EOF\n"


def info_object(fp=FP) -> bytes:
    """The document information as xelatex writes it: Keywords a UTF-16BE hex string."""
    keywords = ", ".join(["GEMM", "CUDA", *fingerprint.report_keywords(fp)])
    return b"1 0 <</Keywords<feff%s>/Producer(xdvipdfmx)>>" % keywords.encode("utf-16-be").hex().encode()


def deflate_bomb(mib: int) -> bytes:
    """zlib data that inflates to `mib` MiB of zeros (about a thousandth of that in size), made
    without holding them: after a full flush every compressed MiB of zeros is the same bytes."""
    c = zlib.compressobj(9)
    first = c.compress(bytes(MIB)) + c.flush(zlib.Z_FULL_FLUSH)
    again = c.compress(bytes(MIB)) + c.flush(zlib.Z_FULL_FLUSH)
    last = c.flush()[:-4]  # the final block; the checksum of all the zeros instead of these two MiB
    adler = ((mib * MIB) % 65521) << 16 | 1  # adler-32 of zeros: a = 1, b = their count
    return first + again * (mib - 1) + last + adler.to_bytes(4, "big")


def test_the_bomb_is_one():
    small = deflate_bomb(3)
    assert zlib.decompress(small) == bytes(3 * MIB)
    assert len(deflate_bomb(1024)) < 2 * MIB  # a GiB of zeros in a file of a MiB or so


def test_a_stamp_is_read_past_a_deflate_bomb_in_a_stream_that_cannot_hold_it(tmp_path):
    """Images, fonts and pages are never inflated: only object streams can hold the document
    information, so a bomb anywhere else costs nothing, and the stamp behind it is read."""
    report = tmp_path / "report.pdf"
    report.write_bytes(pdf((b"/Filter/FlateDecode", deflate_bomb(1024)),
                           (b"/Subtype/Image/Filter/FlateDecode", b"not deflate at all"),
                           (OBJSTM, zlib.compress(info_object()))))
    out = read_in_child(report)
    assert out["stamp"]["fingerprint"] == FP["fingerprint"] and out["stamp"]["submission"] == "alice", out
    assert fingerprint.read_report_stamp(report.read_bytes()) == out["stamp"]


def test_a_deflate_bomb_in_an_object_stream_is_unreadable(tmp_path):
    report = tmp_path / "report.pdf"
    report.write_bytes(pdf((OBJSTM, deflate_bomb(1024)), (OBJSTM, zlib.compress(info_object()))))
    out = read_in_child(report)
    assert "unreadable" in out, out
    assert "object stream 1" in out["unreadable"] and f"{fingerprint.STREAM_CAP // MIB} MiB" in out["unreadable"]


def test_object_streams_together_larger_than_the_budget_are_unreadable(tmp_path):
    each = fingerprint.STREAM_CAP // MIB  # at the cap: each alone is allowed
    count = fingerprint.TOTAL_CAP // fingerprint.STREAM_CAP + 1
    report = tmp_path / "report.pdf"
    report.write_bytes(pdf(*[(OBJSTM, deflate_bomb(each))] * count, (OBJSTM, zlib.compress(info_object()))))
    out = read_in_child(report)
    assert "unreadable" in out and f"{fingerprint.TOTAL_CAP // MIB} MiB" in out["unreadable"], out


def test_more_streams_than_a_report_has_are_unreadable(tmp_path):
    report = tmp_path / "report.pdf"
    report.write_bytes(pdf(*[(OBJSTM, zlib.compress(b"1 0 <<>>"))] * 100_000, (OBJSTM, zlib.compress(info_object()))))
    out = read_in_child(report)
    assert "unreadable" in out and f"more than {fingerprint.MAX_STREAMS}" in out["unreadable"], out
    assert out["cpu_s"] < CPU_LIMIT_S / 5, out


def test_stream_keywords_without_their_ends_are_passed_once(tmp_path):
    """Today's reader searched from every `stream` to the end of the file and copied what it found."""
    report = tmp_path / "report.pdf"
    report.write_bytes(b"%PDF-1.5\n" + b"1 0 obj <<>> stream\n" * 200_000 + b"endstream\n%%EOF\n")
    out = read_in_child(report)
    assert out.get("stamp") == fingerprint.parse_stamp(""), out
    assert out["cpu_s"] < CPU_LIMIT_S / 5, out


def test_keywords_made_to_backtrack_are_read_in_one_pass(tmp_path):
    """A Keywords string that never closes, a hundred thousand times over, in the file and in an object
    stream: each byte is looked at a bounded number of times, and a string longer than a report's
    Keywords (fingerprint.STRING_CAP) is not read."""
    never_closed = b"/Keywords(" + b"x" * 20
    report = tmp_path / "report.pdf"
    report.write_bytes(pdf((OBJSTM, zlib.compress(never_closed * 100_000)), tail=never_closed * 100_000))
    out = read_in_child(report)
    assert out.get("stamp") == fingerprint.parse_stamp(""), out
    assert out["cpu_s"] < CPU_LIMIT_S / 5, out


def test_literal_and_hex_keywords_are_read_as_before():
    text = ", ".join(fingerprint.report_keywords(FP))
    literal = b"<</Keywords (%s \\(with \\\\ escapes\\051)>>" % text.encode()
    assert fingerprint.pdf_keywords(pdf(tail=literal)) == text + " (with \\ escapes)"
    assert fingerprint.pdf_keywords(pdf((OBJSTM, zlib.compress(info_object())))) == \
        ", ".join(["GEMM", "CUDA", text])
    assert fingerprint.pdf_keywords(pdf((b"/Filter/FlateDecode", zlib.compress(b"1 0 <</Keywords(no)>>")))) is None
    too_long = b"<</Keywords(%s)>>" % (b"x" * (fingerprint.STRING_CAP + 1))
    assert fingerprint.pdf_keywords(pdf(tail=too_long)) is None
