#!/bin/sh
# Builds the libFuzzer targets (clang, ASan+UBSan, leak detection) into
# build-fuzz/ and runs each for a bounded time, one after another, under
# `nice -n 19` (never two fuzzers at once: the machine is shared).
#
#   fuzz/run.sh [-t SECONDS] [TARGET...]     TARGET: onnx npy npz pb arch program asm qjson tflite wav
#
# SECONDS per target: -t, else $ENPU_FUZZ_SECONDS, else 60.  The corpus a
# run starts from is fuzz/corpus/<target>/ (committed, minimized seeds) plus
# seeds made from the real files (models/, ../shared/models, tests/bad/, the
# arch presets, listings assembled with the CLI), copied into
# build-fuzz/corpus/<target>/, which also keeps what the fuzzer finds from run
# to run.  A crash, leak, timeout or out-of-memory stops that target, leaves
# the input in build-fuzz/artifacts/<target>/ and makes the script exit 1
# after the other targets ran.  Logs: build-fuzz/logs/<target>.log; one
# summary line per target (executions, coverage cov/ft, corpus size) is
# printed and appended to build-fuzz/logs/summary.txt.
set -eu
cd "$(dirname "$0")/.."
B=${ENPU_FUZZ_BUILD:-build-fuzz}
SECONDS_PER=${ENPU_FUZZ_SECONDS:-60}
if [ "${1:-}" = "-t" ]; then
    SECONDS_PER=$2
    shift 2
fi
ALL="onnx npy npz pb arch program asm qjson tflite wav"
TARGETS=${*:-$ALL}
NICE="nice -n 19"
JOBS=${JOBS:-2}

# ---- build ----------------------------------------------------------------
# The stages that read files (not the compiler or the simulator) are compiled
# here with clang, instrumented, rather than through CMake: a unit that does
# not compile (work in progress elsewhere in the tree) is skipped with a
# warning, and only the targets that need it then fail to link.
sh scripts/deps.sh --fuzz
mkdir -p "$B/gen" "$B/obj" "$B/logs"
PROTO=/usr/include/onnx/onnx.proto
if [ ! -f "$B/gen/onnx.pb-c.c" ] || [ "$PROTO" -nt "$B/gen/onnx.pb-c.c" ]; then
    protoc-c --proto_path="$(dirname "$PROTO")" --c_out="$B/gen" "$PROTO"
fi
export ENPU_FUZZ_CFLAGS="-std=c11 -D_POSIX_C_SOURCE=200809L -g -O1 -fno-omit-frame-pointer \
-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -w -Iinclude -Isrc -I$B/gen \
$(pkg-config --cflags libprotobuf-c jansson fftw3 samplerate)"
export ENPU_FUZZ_OBJ=$B/obj
ls "$B/gen/onnx.pb-c.c" src/common/*.c src/ir/*.c src/frontend/*.c src/ref/*.c src/report/*.c \
    src/isa/*.c src/quant/*.c src/audio/*.c src/numerics/*.c src/tensor/*.c 2>/dev/null |
    $NICE xargs -P "$JOBS" -I{} sh -c '
        o="$ENPU_FUZZ_OBJ/$(echo "{}" | tr / _).o"
        clang $ENPU_FUZZ_CFLAGS -c "{}" -o "$o" 2>"$o.log" ||
            { echo "fuzz: warning: {} does not compile; left out (see $o.log)" >&2; rm -f "$o"; }'
rm -f "$B/libfuzzlib.a"
ar rcs "$B/libfuzzlib.a" "$B"/obj/*.o
LIBS="$(pkg-config --libs libprotobuf-c jansson zlib fftw3 samplerate) -lm -lpthread"
for t in $TARGETS; do
    src=fuzz/fuzz_$t.c
    [ -f "$src" ] || { echo "fuzz: no target '$t' ($src)" >&2; exit 2; }
    $NICE clang -std=c11 -D_POSIX_C_SOURCE=200809L -g -O1 -Wall -Wextra -Werror \
        -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer \
        -Iinclude -Isrc -Ifuzz "$src" "$B/libfuzzlib.a" $LIBS -o "$B/fuzz_$t"
done

# ---- seeds from the real files --------------------------------------------
# The CLI makes seeds (arch JSON, programs from listings, quantized graphs).
CLI=${ENPU_CLI:-build/easynpu}
[ -x "$CLI" ] || make build >/dev/null 2>&1 || echo "fuzz: warning: no $CLI; fewer seeds" >&2
SHARED=${ENPU_SHARED_MODELS:-../shared/models}
seed() { # seed TARGET FILE...: copies existing files into the working corpus
    t=$1
    shift
    for f in "$@"; do
        [ -f "$f" ] || continue
        # Keep the real files' names recognisable; sanitise the path.
        n=$(printf '%s' "$f" | sed 's|^\.\./||; s|[^A-Za-z0-9._-]|_|g')
        cp "$f" "$B/corpus/$t/seed_$n"
    done
}
mkseeds() {
    t=$1
    mkdir -p "$B/corpus/$t"
    tmp=$B/seedgen
    rm -rf "$tmp"
    mkdir -p "$tmp"
    case $t in
    onnx)
        # The default model (158 KB) is left out: every mutation of it costs
        # a parse of its weights; fuzz/corpus/onnx/small_cnn.onnx has its
        # structure in 2 KB (fuzz/make_seeds.py).
        seed onnx "$SHARED"/mnist-8/model.onnx "$SHARED"/alibaba-kws/model.onnx \
            tests/bad/onnx/*.onnx tests/bad/limits/*.onnx tests/bad/regress/*.onnx ;;
    npy)
        seed npy models/kws_cnn/sample_0.npy models/kws_cnn/calib/calib_00.npy tests/bad/npy/*.npy \
            tests/bad/regress/*.npy ;;
    npz)
        seed npz tests/data/npz/*.npz tests/bad/npz/*.npz "$SHARED"/alibaba-kws/sample_input.npz \
            tests/bad/regress/*.npz ;;
    pb)
        seed pb "$SHARED"/mnist-8/test_data_set_0/*.pb "$SHARED"/alibaba-kws/test_data_set_0/*.pb \
            "$SHARED"/mlperf-vww-float/test_data_set_0/output_0.pb tests/bad/pb/*.pb tests/bad/regress/*.pb ;;
    arch)
        for a in easynpu large; do
            "$CLI" arch "$a" --json >"$tmp/$a.json" 2>/dev/null || true
        done
        seed arch "$tmp"/*.json tests/bad/arch/*.json tests/bad/regress/*.json ;;
    asm)
        seed asm tests/bad/program/*.s tests/bad/regress/*.s ;;
    program)
        for s in fuzz/corpus/asm/*.s; do
            [ -f "$s" ] || continue
            "$CLI" asm "$s" -o "$tmp/$(basename "$s" .s).enpu" >/dev/null 2>&1 || true
        done
        seed program "$tmp"/*.enpu tests/bad/program/*.enpu tests/bad/regress/*.enpu ;;
    qjson)
        "$CLI" quantize "$SHARED"/mnist-8/model.onnx -o "$tmp/mnist.qjson" --quiet >/dev/null 2>&1 || true
        for m in fuzz/corpus/onnx/*.onnx; do
            "$CLI" quantize "$m" -o "$tmp/$(basename "$m" .onnx).qjson" --quiet >/dev/null 2>&1 || true
        done
        seed qjson "$tmp"/*.qjson tests/bad/qjson/*.qjson tests/bad/regress/*.qjson ;;
    tflite)
        # The MLPerf models (54-333 KB) are left out for speed, as the
        # default ONNX model is: the fixtures have their operators in < 2 KB.
        seed tflite tests/tflite/*.tflite tests/bad/tflite/*.tflite tests/bad/regress/*.tflite ;;
    wav)
        # the 1 s clips (32 KB; the long recording is left out for speed)
        seed wav tests/audio/yes_en-us.wav tests/audio/yes_en-us_22k.wav tests/bad/wav/*.wav \
            tests/bad/regress/*.wav ;;
    esac
    rm -rf "$tmp"
}

# ---- run ------------------------------------------------------------------
status=0
for t in $TARGETS; do
    mkseeds "$t"
    mkdir -p "$B/artifacts/$t" "fuzz/corpus/$t"
    dict=""
    [ -f "fuzz/dict/$t.dict" ] && dict="-dict=fuzz/dict/$t.dict"
    # Inputs past 64 KiB only slow the search down (the real files that are
    # larger are not seeds); programs need room for their memory images.
    maxlen=-max_len=65536
    log=$B/logs/$t.log
    start=$(date +%s)
    # -timeout: one input may take 25 s (a valid model can be big);
    # -rss_limit_mb: a reader that allocates more than this for a small
    # input has skipped a limit check.  The first corpus directory gets the
    # new inputs; the committed seeds are only read.
    rc=0
    ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1} \
    UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
        $NICE "$B/fuzz_$t" -max_total_time="$SECONDS_PER" -timeout=25 -rss_limit_mb=2560 \
        -malloc_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$B/artifacts/$t/" $maxlen $dict \
        "$B/corpus/$t" "fuzz/corpus/$t" >"$log" 2>&1 || rc=$?
    end=$(date +%s)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    last=$(grep -E '^#[0-9]+' "$log" | tail -1)
    cov=$(printf '%s' "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
    ft=$(printf '%s' "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
    corp=$(printf '%s' "$last" | sed -n 's/.* corp: \([0-9]*\/[0-9A-Za-z]*\).*/\1/p')
    if [ "$rc" -ne 0 ]; then
        result="FINDING (exit $rc): see $log and $B/artifacts/$t/"
        status=1
    else
        result=ok
    fi
    line="fuzz_$t: $((end - start))s execs=${execs:-?} cov=${cov:-?} ft=${ft:-?} corpus=${corp:-?} $result"
    echo "$line"
    echo "$(date -u +%FT%TZ) $line" >>"$B/logs/summary.txt"
    if [ "$rc" -ne 0 ]; then
        grep -E 'ERROR|SUMMARY|invariant|runtime error|Test unit written' "$log" | head -8 >&2 || true
    fi
done
exit $status
