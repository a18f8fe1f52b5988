"""Makes the MP4 a test stream's recording is (shared/domain/assets/test-recording.mp4):

    "$(scripts/lib/venv.sh media)/bin/python" scripts/media/make-test-recording.py [OUT]

62 s of 160x90 H.264 (Main profile, 10 frames a second, B-frames, a keyframe every 2 s exactly)
and mono AAC-LC (22,050 Hz, a tone that changes every second), with its index (`moov`) first,
so a browser plays it from the first byte and clips can be cut from it (docs/clips.md). A bar
sweeps across the picture and the second it shows is drawn as a binary row, so a clip's frames
can be told apart by eye. Made with FFmpeg's libraries through PyAV, single-threaded, so the
same version makes the same bytes.
"""

import math
import sys
from array import array

import av

SECONDS = 62
FPS = 10
WIDTH, HEIGHT = 160, 90
SAMPLE_RATE = 22_050
AUDIO_FRAME = 1024


def picture(index):
    frame = av.VideoFrame(WIDTH, HEIGHT, "yuv420p")
    second = index // FPS
    luma = bytearray([16 + (second * 37) % 200] * (WIDTH * HEIGHT))
    bar = (index * 4) % WIDTH
    for y in range(HEIGHT):
        for x in range(bar, min(bar + 8, WIDTH)):
            luma[y * WIDTH + x] = 235
    # The second, as 8 white or black cells across the top.
    for bit in range(8):
        value = 235 if second >> (7 - bit) & 1 else 16
        for y in range(4, 12):
            for x in range(8 + bit * 18, 8 + bit * 18 + 14):
                luma[y * WIDTH + x] = value
    frame.planes[0].update(bytes(luma))
    chroma = (WIDTH // 2) * (HEIGHT // 2)
    frame.planes[1].update(bytes([128 + (second * 11) % 64] * chroma))
    frame.planes[2].update(bytes([128 - (second * 7) % 64] * chroma))
    frame.pts = index
    return frame


def sound(index):
    frame = av.AudioFrame(format="s16", layout="mono", samples=AUDIO_FRAME)
    start = index * AUDIO_FRAME
    pitch = 330 + 55 * ((start // SAMPLE_RATE) % 8)
    tone = array("h", (int(6000 * math.sin(2 * math.pi * pitch * (start + i) / SAMPLE_RATE)) for i in range(AUDIO_FRAME)))
    frame.planes[0].update(tone.tobytes())
    frame.sample_rate = SAMPLE_RATE
    frame.pts = start
    return frame


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "shared/domain/assets/test-recording.mp4"
    container = av.open(out, "w", format="mp4", options={"movflags": "+faststart"})
    video = container.add_stream("libx264", rate=FPS)
    video.width, video.height, video.pix_fmt = WIDTH, HEIGHT, "yuv420p"
    video.options = {
        "g": str(2 * FPS), "keyint_min": str(2 * FPS), "sc_threshold": "0", "bf": "2",
        "crf": "34", "preset": "slow", "profile": "main", "threads": "1",
    }
    audio = container.add_stream("aac", rate=SAMPLE_RATE)
    audio.layout = "mono"
    audio.bit_rate = 16_000
    # In time order, so the muxer interleaves the two tracks as a recorder would.
    audio_frames = SECONDS * SAMPLE_RATE // AUDIO_FRAME
    next_audio = 0
    for index in range(SECONDS * FPS):
        for packet in video.encode(picture(index)):
            container.mux(packet)
        while next_audio < audio_frames and next_audio * AUDIO_FRAME * FPS < (index + 1) * SAMPLE_RATE:
            for packet in audio.encode(sound(next_audio)):
                container.mux(packet)
            next_audio += 1
    for stream in (video, audio):
        for packet in stream.encode(None):
            container.mux(packet)
    container.close()


if __name__ == "__main__":
    main()
