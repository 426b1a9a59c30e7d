#!/bin/sh
# Synthesized keyword speech for the audio front end's tests and figures
# (docs/audio.md), without a microphone: Debian's espeak-ng speaks each word
# in several voices, speeds and pitches; sox resamples it to 16 kHz, trims
# the silence espeak-ng leaves around it, centres it in a 1 s clip, peaks it
# at -3 dBFS and mixes in a small noise floor (the keyword model was trained
# on recordings with background noise; digital silence is not what it
# hears).  Deterministic: sox runs with -R (fixed random seed) and -D (no
# dither), so the same packages give the same bytes.
#
#   scripts/make_kws_speech.sh set DIR        the accuracy set: DIR/*.wav and DIR/set.tsv
#   scripts/make_kws_speech.sh long FILE.wav  keywords with noise between them (word:voice:
#                                             speed:pitch in $KWS_LONG_WORDS, gaps of $KWS_GAP s);
#                                             FILE.tsv gets each word's start and end (s)
#   scripts/make_kws_speech.sh clip WORD VOICE SPEED PITCH FILE.wav   one clip
#
# The set: the ten MLPerf Tiny keywords, four words the model has not been
# taught (class "unknown") and noise alone (class "silence"), in six voices
# (en-us, en-us+f3, en-gb, en-gb+f2, en-gb-scotland, en-029) at 140 and 175
# words per minute and pitch 35 and 65: 24 clips per word.
#
# tests/audio/ keeps a few of them (docs/audio.md "Test data"): the clips
# yes_en-us (yes en-us 175 35), left_en-gb (left en-gb 140 35),
# right_en-us-f3 (right en-us+f3 175 65), no_en-029 (no en-029 175 35),
# silence (_silence_), yes_en-us_22k (yes_en-us through sox -R -D -r 22050),
# and long.wav, made by `make_kws_speech.sh long tests/audio/long.wav`.
set -eu
RATE=16000
NOISE_VOL=${KWS_NOISE_VOL:-0.01}   # white noise amplitude (0.01: -40 dBFS)
KEYWORDS="down go left no off on right stop up yes"
UNKNOWN="bird house tree cat"
VOICES="en-us en-us+f3 en-gb en-gb+f2 en-gb-scotland en-029"
SPEEDS="140 175"
PITCHES="35 65"

need() {
    command -v "$1" >/dev/null 2>&1 || {
        echo "make_kws_speech: $1 not found: install espeak-ng and sox (scripts/deps.sh)" >&2
        exit 2
    }
}
need espeak-ng
need sox
need soxi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM

# noise FILE SECONDS: the noise floor alone
noise() {
    # the rate before -n: synth counts "Ns" durations at the input rate
    sox -R -D -r $RATE -c 1 -n -b 16 "$1" synth "$2" whitenoise vol "$NOISE_VOL"
}

# speech WORD VOICE SPEED PITCH OUT: the word, trimmed, 16 kHz, peak -3 dBFS
speech() {
    espeak-ng -v "$2" -s "$3" -p "$4" -w "$TMP/raw.wav" "$1"
    sox -R -D "$TMP/raw.wav" -r $RATE -b 16 "$5" silence 1 0.01 0.3% reverse silence 1 0.01 0.3% \
        reverse gain -n -3
}

# clip WORD VOICE SPEED PITCH OUT: the word centred in 1 s over the noise
# floor; WORD "_silence_" is the noise alone
clip() {
    noise "$TMP/noise.wav" 1
    if [ "$1" = "_silence_" ]; then
        cp "$TMP/noise.wav" "$5"
        return
    fi
    speech "$1" "$2" "$3" "$4" "$TMP/word.wav"
    n=$(soxi -s "$TMP/word.wav")
    if [ "$n" -gt $RATE ]; then
        echo "make_kws_speech: '$1' in $2 at $3 wpm is $n samples, over 1 s" >&2
        exit 1
    fi
    before=$(((RATE - n) / 2))
    after=$((RATE - n - before))
    sox -R -D "$TMP/word.wav" "$TMP/padded.wav" pad "${before}s" "${after}s"
    sox -R -D -m -v 1 "$TMP/padded.wav" -v 1 "$TMP/noise.wav" -b 16 "$5"
}

label_of() {
    i=0
    for k in $KEYWORDS; do
        [ "$k" = "$1" ] && { echo $i; return; }
        i=$((i + 1))
    done
    [ "$1" = "_silence_" ] && { echo 10; return; }
    echo 11
}

make_set() {
    mkdir -p "$1"
    printf 'file\tword\tlabel\tvoice\tspeed\tpitch\n' >"$1/set.tsv"
    for w in $KEYWORDS $UNKNOWN _silence_; do
        for v in $VOICES; do
            for s in $SPEEDS; do
                for p in $PITCHES; do
                    f="$(echo "$w" | tr -d _)_$(echo "$v" | tr + -)_s${s}_p${p}.wav"
                    clip "$w" "$v" "$s" "$p" "$1/$f"
                    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$f" "$w" "$(label_of "$w")" "$v" "$s" "$p" \
                        >>"$1/set.tsv"
                done
            done
        done
    done
}

# long OUT: 1 s of noise, then each word followed by GAP s of noise
LONG_WORDS=${KWS_LONG_WORDS:-yes:en-us:160:50 left:en-us+f3:150:60 right:en-gb:160:50 no:en-029:160:40}
GAP=${KWS_GAP:-1.3}
make_long() {
    out=$1
    tsv="${out%.wav}.tsv"
    printf 'word\tstart_s\tend_s\n' >"$tsv"
    noise "$TMP/lead.wav" 1
    noise "$TMP/gap.wav" "$GAP"
    gap=$(soxi -s "$TMP/gap.wav")
    cp "$TMP/lead.wav" "$TMP/long.wav"
    t=$RATE
    for spec in $LONG_WORDS; do
        w=${spec%%:*}
        rest=${spec#*:}
        v=${rest%%:*}
        rest=${rest#*:}
        s=${rest%%:*}
        p=${rest#*:}
        speech "$w" "$v" "$s" "$p" "$TMP/word.wav"
        n=$(soxi -s "$TMP/word.wav")
        noise "$TMP/wn.wav" "${n}s"
        sox -R -D -m -v 1 "$TMP/word.wav" -v 1 "$TMP/wn.wav" -b 16 "$TMP/wordn.wav"
        printf '%s\t%s\t%s\n' "$w" "$(echo "$t $RATE" | awk '{printf "%.3f", $1 / $2}')" \
            "$(echo "$t $n $RATE" | awk '{printf "%.3f", ($1 + $2) / $3}')" >>"$tsv"
        t=$((t + n + gap))
        sox -R -D "$TMP/long.wav" "$TMP/wordn.wav" "$TMP/gap.wav" "$TMP/next.wav"
        mv "$TMP/next.wav" "$TMP/long.wav"
    done
    cp "$TMP/long.wav" "$out"
}

case "${1:-}" in
set) make_set "$2" ;;
long) make_long "$2" ;;
clip) clip "$2" "$3" "$4" "$5" "$6" ;;
*)
    echo "usage: $0 set DIR | long FILE.wav | clip WORD VOICE SPEED PITCH FILE.wav" >&2
    exit 2
    ;;
esac
