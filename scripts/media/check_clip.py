"""Reads a clip with FFmpeg's libraries (PyAV) and prints what a player would see, as JSON:

    "$(scripts/lib/venv.sh media)/bin/python" scripts/media/check_clip.py CLIP.mp4

{"boxes": top-level box types in order, "video": {...}, "audio": {...}}, each track with
"start" (seconds: its first presented sample, after the edit list), "duration" (seconds),
"packets", "first_packet_keyframe", "decoded" (frames decoded without error) and
"first_frame_time" (seconds). The Rust tests judge the figures (shared/media/tests).
"""

import json
import struct
import sys

import av


def boxes(path):
    kinds = []
    with open(path, "rb") as file:
        data = file.read()
    offset = 0
    while offset + 8 <= len(data):
        size, kind = struct.unpack(">I4s", data[offset:offset + 8])
        if size == 1:
            size = struct.unpack(">Q", data[offset + 8:offset + 16])[0]
        kinds.append(kind.decode("latin-1"))
        if size < 8:
            break
        offset += size
    return kinds


def track(path, kind):
    with av.open(path) as container:
        stream = next(s for s in container.streams if s.type == kind)
        base = stream.time_base
        packets, first_keyframe, decoded, first_frame = 0, None, 0, None
        for packet in container.demux(stream):
            # The last, empty, packet flushes the decoder.
            if packet.size:
                if first_keyframe is None:
                    first_keyframe = bool(packet.is_keyframe)
                packets += 1
            for frame in packet.decode():
                decoded += 1
                if first_frame is None and frame.pts is not None:
                    first_frame = float(frame.pts * base)
        return {
            "codec": stream.codec_context.name,
            "start": float(stream.start_time * base) if stream.start_time is not None else None,
            "duration": float(stream.duration * base) if stream.duration else None,
            "packets": packets,
            "first_packet_keyframe": first_keyframe,
            "decoded": decoded,
            "first_frame_time": first_frame,
        }


def main():
    path = sys.argv[1]
    with av.open(path) as container:
        kinds = {s.type for s in container.streams}
    print(json.dumps({
        "boxes": boxes(path),
        "video": track(path, "video") if "video" in kinds else None,
        "audio": track(path, "audio") if "audio" in kinds else None,
    }))


if __name__ == "__main__":
    main()
