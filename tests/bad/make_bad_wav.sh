#!/bin/sh
# Makes tests/bad/wav/ (tests/bad/test_bad_wav.c) from the committed clip
# tests/audio/yes_en-us.wav: 50 ms of it in the formats the reader refuses
# (sox), cut short, emptied, patched.
set -eu
cd "$(dirname "$0")/wav"
Y=../../audio/yes_en-us.wav
sox -R -D $Y -c 2 stereo.wav trim 0 0.05
sox -R -D $Y -b 8 8bit.wav trim 0 0.05
sox -R -D $Y -b 24 24bit.wav trim 0 0.05
sox -R -D $Y -e floating-point -b 32 float.wav trim 0 0.05
sox -R -D $Y -e a-law alaw.wav trim 0 0.05
sox -R -D $Y short.wav trim 0 0.05
head -c 1000 short.wav >truncated.wav                       # the data chunk cut
: >empty.wav
echo "this is not a WAV file" >not_a_wav.wav
{ head -c 40 short.wav; printf '\000\000\000\000'; } >no_samples.wav  # data size 0
# the sample rate field (bytes 24..27) set to 500 Hz (0x01f4)
{ head -c 24 short.wav; printf '\364\001\000\000'; tail -c +29 short.wav; } >rate_500.wav
rm short.wav
