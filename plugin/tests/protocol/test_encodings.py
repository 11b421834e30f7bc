import gzip
import io
import random
import time
import tracemalloc
import zlib
from collections.abc import Callable
from pathlib import Path

import brotli
import pytest
import zstandard
from hypothesis import given, settings, strategies as st

from reflex_lookout.protocol.encodings import MAX_CODINGS, DecodeError, decode, decode_start

DATA = Path(__file__).parent / "data"
MIB = 1024 * 1024

# Text-like and incompressible bytes, long enough to take several decoding steps.
PAYLOAD = b'{"message":"hello","level":"error"}\n' * 20_000 + random.Random(0).randbytes(300_000)


def raw_deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush()


def br(data: bytes) -> bytes:
    """Quality 5: the default, 11, is needlessly slow for tests."""
    return brotli.compress(data, quality=5)


def zstd_without_size(data: bytes) -> bytes:
    """A streamed frame: its header does not state the content size."""
    frame = b"".join(zstandard.ZstdCompressor().read_to_iter(io.BytesIO(data)))
    assert zstandard.get_frame_parameters(frame).content_size == zstandard.CONTENTSIZE_UNKNOWN
    return frame


def zstd_with_size(data: bytes) -> bytes:
    frame = zstandard.ZstdCompressor().compress(data)
    assert zstandard.get_frame_parameters(frame).content_size == len(data)
    return frame


ENCODERS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": gzip.compress,
    "deflate": zlib.compress,
    "br": br,
    "zstd": zstd_with_size,
}


@pytest.mark.parametrize(
    ("content_encoding", "encode"),
    [
        ("gzip", gzip.compress),
        ("x-gzip", gzip.compress),
        ("deflate", zlib.compress),
        ("deflate", raw_deflate),
        ("br", br),
        ("zstd", zstd_with_size),
        ("zstd", zstd_without_size),
        (None, lambda data: data),
        ("", lambda data: data),
        ("identity", lambda data: data),
        ("  GZip ", gzip.compress),
        ("BR", br),
    ],
    ids=[
        "gzip",
        "x-gzip",
        "deflate-zlib",
        "deflate-raw",
        "br",
        "zstd-with-size",
        "zstd-without-size",
        "none",
        "empty",
        "identity",
        "case-and-space",
        "upper-br",
    ],
)
def test_round_trip(content_encoding: str | None, encode: Callable[[bytes], bytes]) -> None:
    assert decode(encode(PAYLOAD), content_encoding, 10 * MIB) == PAYLOAD


@pytest.mark.parametrize(
    ("content_encoding", "layers"),
    [
        ("gzip, br", [gzip.compress, br]),
        ("deflate,zstd , gzip", [zlib.compress, zstd_without_size, gzip.compress]),
        ("identity, gzip, identity", [gzip.compress]),
        ("br, br", [br, br]),
    ],
)
def test_stacked_codings_are_undone_last_first(
    content_encoding: str, layers: list[Callable[[bytes], bytes]]
) -> None:
    body = PAYLOAD
    for encode in layers:
        body = encode(body)
    assert decode(body, content_encoding, 10 * MIB) == PAYLOAD


@pytest.mark.parametrize("coding", sorted(ENCODERS))
def test_empty_content_round_trips(coding: str) -> None:
    assert decode(ENCODERS[coding](b""), coding, 0) == b""


@pytest.mark.parametrize("coding", [*sorted(ENCODERS), "identity"])
def test_limit_is_inclusive(coding: str) -> None:
    body = ENCODERS.get(coding, lambda data: data)(PAYLOAD)
    assert decode(body, coding, len(PAYLOAD)) == PAYLOAD
    with pytest.raises(DecodeError) as caught:
        decode(body, coding, len(PAYLOAD) - 1)
    assert caught.value.status == 413
    assert f"exceeds {len(PAYLOAD) - 1} bytes" in caught.value.message


@pytest.mark.parametrize("content_encoding", ["compress", "gzip, snappy", "br;q=1", "x-br"])
def test_unknown_coding_is_415_naming_it_and_the_supported_ones(content_encoding: str) -> None:
    with pytest.raises(DecodeError) as caught:
        decode(b"anything", content_encoding, MIB)
    assert caught.value.status == 415
    unknown = [name.strip() for name in content_encoding.split(",")][-1]
    assert repr(unknown) in caught.value.message
    assert "gzip, x-gzip, deflate, br, zstd, identity" in caught.value.message


def test_too_many_stacked_codings_is_415() -> None:
    with pytest.raises(DecodeError) as caught:
        decode(b"", ", ".join(["gzip"] * (MAX_CODINGS + 1)), MIB)
    assert caught.value.status == 415
    assert f"at most {MAX_CODINGS}" in caught.value.message


def _corruptions() -> list[tuple[str, str, bytes]]:
    cases = []
    for coding, encode in ENCODERS.items():
        body = encode(PAYLOAD)
        cases += [
            (coding, "garbage", b"this is not compressed at all"),
            (coding, "empty", b""),
            (coding, "truncated", body[: len(body) // 2]),
            (coding, "last-byte-missing", body[:-1]),
            (coding, "trailing-garbage", body + b"junk"),
        ]
    for coding in ("gzip", "deflate"):  # checksummed formats: any flipped byte is detected
        body = ENCODERS[coding](PAYLOAD)
        cases.append((coding, "flipped-byte", body[:40] + bytes([body[40] ^ 0xFF]) + body[41:]))
    cases += [
        ("gzip", "two-members", gzip.compress(b"a") + gzip.compress(b"b")),
        ("gzip", "zero-padding", gzip.compress(PAYLOAD) + bytes(8)),
        ("zstd", "two-frames", zstd_with_size(b"a") + zstd_with_size(b"b")),
        ("deflate", "raw-truncated", raw_deflate(PAYLOAD)[:-10]),
        ("zstd", "truncated-without-size", zstd_without_size(PAYLOAD)[:-3]),
    ]
    return cases


CORRUPTIONS = _corruptions()


@pytest.mark.parametrize(
    ("coding", "body"),
    [(coding, body) for coding, _, body in CORRUPTIONS],
    ids=[f"{coding}-{name}" for coding, name, _ in CORRUPTIONS],
)
def test_corrupt_data_is_400_with_a_sentence(coding: str, body: bytes) -> None:
    with pytest.raises(DecodeError) as caught:
        decode(body, coding, 10 * MIB)
    assert caught.value.status == 400
    assert caught.value.message.startswith("The ") and caught.value.message.endswith(".")
    assert str(caught.value) == caught.value.message


def _measure(body: bytes, content_encoding: str, max_bytes: int) -> tuple[DecodeError, float, int]:
    """Decode expecting a refusal; return it, the CPU seconds the decoding took (this thread's: what
    the decoder did, not what the machine's other processes made it wait) and the peak traced memory."""
    tracemalloc.start()
    started = time.thread_time()
    try:
        with pytest.raises(DecodeError) as caught:
            decode(body, content_encoding, max_bytes)
        elapsed = time.thread_time() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return caught.value, elapsed, peak


@pytest.mark.parametrize(
    ("name", "content_encoding"),
    [("zeros-10gib.br", "br"), ("zeros-10gib.br.br", "br, br")],
)
def test_a_10_gib_bomb_is_refused_quickly_in_little_memory(name: str, content_encoding: str) -> None:
    """`zeros-10gib.br` (8,081 bytes) is brotli of 10 GiB (10,737,418,240 bytes) of zeros, made by
    feeding 640 chunks of 16 MiB zeros to `brotli.Compressor(quality=5, lgwin=24)`.
    `zeros-10gib.br.br` (136 bytes) is `brotli.compress(<that file>, quality=11)`: the same bomb
    behind a second brotli layer, sent as `Content-Encoding: br, br`.
    """
    body = (DATA / name).read_bytes()
    assert len(body) <= 8 * 1024
    error, elapsed, peak = _measure(body, content_encoding, MIB)
    assert error.status == 413
    assert "exceeds 1048576 bytes" in error.message
    assert elapsed < 2.0
    assert peak < 150 * MIB


@pytest.fixture(scope="module")
def zeros_64mib() -> bytes:
    return bytes(64 * MIB)


@pytest.mark.parametrize(
    ("content_encoding", "encode"),
    [
        ("gzip", lambda data: gzip.compress(data, compresslevel=1)),
        ("deflate", lambda data: zlib.compress(data, 1)),
        ("deflate", raw_deflate),
        ("br", lambda data: brotli.compress(data, quality=1)),
        ("zstd", lambda data: zstandard.ZstdCompressor(level=1).compress(data)),
        ("zstd", zstd_without_size),
    ],
    ids=["gzip", "deflate-zlib", "deflate-raw", "br", "zstd-with-size", "zstd-without-size"],
)
def test_every_decoder_stops_near_the_limit(
    zeros_64mib: bytes, content_encoding: str, encode: Callable[[bytes], bytes]
) -> None:
    """64 MiB of zeros against a 1 MiB limit: an unbounded decoder would hold all 64 MiB."""
    body = encode(zeros_64mib)
    error, elapsed, peak = _measure(body, content_encoding, MIB)
    assert error.status == 413
    assert elapsed < 2.0
    assert peak < 16 * MIB


def zstd_stream_with(params: zstandard.ZstdCompressionParameters, data: bytes) -> bytes:
    compressor = zstandard.ZstdCompressor(compression_params=params)
    return b"".join(compressor.read_to_iter(io.BytesIO(data)))


def test_a_zstd_frame_asking_for_a_huge_window_is_refused() -> None:
    params = zstandard.ZstdCompressionParameters.from_level(3, window_log=27)
    body = zstandard.ZstdCompressor(compression_params=params).compress(b"x" * 100)
    body_without_size = zstd_stream_with(params, b"x" * 100)
    assert decode(body, "zstd", MIB) == b"x" * 100  # a small known size shrinks the window
    with pytest.raises(DecodeError) as caught:
        decode(body_without_size, "zstd", MIB)
    assert caught.value.status == 400


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=4096), coding=st.sampled_from(sorted(ENCODERS)))
def test_any_bytes_round_trip(data: bytes, coding: str) -> None:
    assert decode(ENCODERS[coding](data), coding, len(data)) == data


@settings(max_examples=300, deadline=None)
@given(body=st.binary(max_size=512), coding=st.sampled_from([*sorted(ENCODERS), "gzip, br"]))
def test_arbitrary_bytes_decode_or_raise_decode_error(body: bytes, coding: str) -> None:
    try:
        decode(body, coding, 64 * 1024)
    except DecodeError as exc:
        assert exc.status in {400, 413}


# The start of a body: enough to read the envelope's header line, nothing more ---------------------


@pytest.mark.parametrize("content_encoding", [*sorted(ENCODERS), "", "gzip, br"])
def test_decode_start_stops_early_and_ignores_what_it_did_not_decode(content_encoding: str) -> None:
    body = b"first line\n" + PAYLOAD
    for coding in [c.strip() for c in content_encoding.split(",") if c.strip()]:
        body = ENCODERS[coding](body)
    start = decode_start(body, content_encoding, 1000, lambda start: b"\n" in start)
    assert start == (b"first line\n" + PAYLOAD)[: len(start)] and b"first line\n" in start
    assert len(start) <= 1000
    if content_encoding:  # a body cut in half still has its start; decoding it all refuses it
        half = body[: len(body) // 2]
        assert decode_start(half, content_encoding, 1000, lambda start: b"\n" in start).startswith(b"first line\n")
        with pytest.raises(DecodeError):
            decode(half, content_encoding, 10 * MIB)


def test_decode_start_of_a_short_body_is_all_of_it_and_unknown_codings_are_415() -> None:
    assert decode_start(gzip.compress(b"short"), "gzip", 1000) == b"short"
    with pytest.raises(DecodeError) as caught:
        decode_start(b"x", "lzma", 1000)
    assert caught.value.status == 415


def test_decoding_a_20_mib_body_costs_about_what_it_decodes() -> None:
    """Fed whole, zlib copied the rest of the input on every 64 KiB step: for ~20 MiB of gzip that
    inflates past the cap, ~1,600 copies of up to 20 MiB (seconds). Fed in slices, it is linear:
    here the work is counted as the input bytes zlib is handed."""
    text = random.Random(3).randbytes(MIB).translate(bytes(b"acgt"[n % 4] for n in range(256)))
    compressor = zlib.compressobj(1, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    body = b"".join([*(compressor.compress(text) for _ in range(12)), compressor.flush()])
    handed: list[int] = []
    real = zlib.decompressobj

    class Counting:
        def __init__(self, wbits: int) -> None:
            self._inner = real(wbits)

        def decompress(self, data: bytes, max_length: int) -> bytes:
            handed.append(len(data))
            return self._inner.decompress(data, max_length)

        def __getattr__(self, name: str) -> object:
            return getattr(self._inner, name)

    import reflex_lookout.protocol.encodings as module

    module.zlib.decompressobj = Counting  # type: ignore[assignment]  # a stand-in that counts what it is handed
    try:
        with pytest.raises(DecodeError):
            decode(body, "gzip", 4 * MIB)
    finally:
        module.zlib.decompressobj = real  # type: ignore[assignment]  # mypy sees zlib's function, not its object type
    assert sum(handed) < 2 * len(body)
