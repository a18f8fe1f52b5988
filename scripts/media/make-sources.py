"""Remuxes an MP4 (no re-encoding) into each layout a clip may be cut from:

    "$(scripts/lib/venv.sh media)/bin/python" scripts/media/make-sources.py SOURCE.mp4 OUT_DIR

OUT_DIR/index-first.mp4 (`moov` before `mdat`), index-last.mp4 (`moov` after `mdat`, as
LiveKit's egress writes through GStreamer's mp4mux) and fragmented.mp4 (a `moof` and `mdat` a
keyframe interval, FFmpeg's `frag_keyframe+empty_moov+default_base_moof`, with its `mfra`),
and fragmented-no-mfra.mp4, the same without its `mfra` (found fragment by fragment).
"""

import struct

import os
import sys

import av

LAYOUTS = {
    "index-first.mp4": {"movflags": "+faststart"},
    "index-last.mp4": {},
    "fragmented.mp4": {"movflags": "frag_keyframe+empty_moov+default_base_moof"},
}


def remux(source, out, options):
    with av.open(source) as inp, av.open(out, "w", format="mp4", options=options) as output:
        streams = {}
        for stream in inp.streams:
            if stream.type in ("video", "audio"):
                streams[stream.index] = output.add_stream_from_template(stream)
        for packet in inp.demux(list(inp.streams)):
            if packet.dts is None or packet.stream.index not in streams:
                continue
            packet.stream = streams[packet.stream.index]
            output.mux(packet)


def main():
    source, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    for name, options in LAYOUTS.items():
        remux(source, os.path.join(out_dir, name), options)
    with open(os.path.join(out_dir, "fragmented.mp4"), "rb") as file:
        data = file.read()
    mfra_size = struct.unpack(">I", data[-4:])[0]
    assert data[-mfra_size + 4:-mfra_size + 8] == b"mfra", "the fragmented file ends with its mfra"
    with open(os.path.join(out_dir, "fragmented-no-mfra.mp4"), "wb") as file:
        file.write(data[:-mfra_size])


if __name__ == "__main__":
    main()
