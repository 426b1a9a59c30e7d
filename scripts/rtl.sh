#!/bin/sh
# The RTL's co-simulation, mutation check and synthesis (docs/rtl.md).
#   sh scripts/rtl.sh test    `make rtl-test`: builds the Verilator testbench of each
#                             configuration, runs the default model and random layers
#                             against the C simulator, then the mutation check
#   sh scripts/rtl.sh mutate [systolic|easynpu|rowstat]
#                             only the mutation check (of one engine)
#   sh scripts/rtl.sh synth [CFG...]
#                             `make synth`: Yosys, cells and area per unit beside the
#                             area model (of the engines' presets, or of CFG...)
#   sh scripts/rtl.sh lint    verilator --lint-only -Wall on every configuration
# Everything is built in build-rtl/ (the library with cmake, the testbenches
# in build-rtl/rtl/CFG/).  RTL_RANDOM (default 50) random cases per
# configuration (the systolic engine's: 4 x RTL_RANDOM in all, see
# NRAND_PRESET); RTL_JOBS (default 2) parallel compile jobs; RTL_FULL=1 every
# preset and more random archs (see below); RTL_ONLY=systolic, easynpu or
# rowstat one engine's configurations and mutations; RTL_MUT_EVERY=K with
# RTL_MUT_PICK=R only the mutants n with (n + R) % K == 0 of each engine
# (CI's budget; every mutant by default).
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)
B=build-rtl
O=$B/rtl
JOBS=${RTL_JOBS:-2}
NRAND=${RTL_RANDOM:-50}
# a systolic preset runs the default model and this many random cases (its
# cycles are the dearest); the systolic random archs share the rest of 200
NRAND_PRESET=${RTL_RANDOM_PRESET:-10}
# The configurations.  A preset's array (1024 PEs) costs most of the build,
# so the default run (CI's budget) builds one preset, the default model's
# arch with its 2x2 bank grid, and random archs small enough to compile in
# seconds that cover the other bank arrangements: rand-11 6x1 (a column of
# banks, like systolic-4x1), rand-12 1x4 (a row, like systolic-1x4, and
# 12-byte words), rand-21 3x2 (the mutation check's arch, built anyway).
# RTL_FULL=1: every preset and more seeds.
# EasyNPU's PE array: its preset and random archs (enpu-rand-SEED: 1..3 PE
# rows of 4..32 PEs, lane groups, pad and psum depths, latencies), all small.
# The row-stationary array: preset eyeriss (12 x 14 PEs, 4 values a cycle on
# each network: its PE buffers are the small ones; preset rowstat's 2048-entry
# FIFO and filter buffer in RTL_FULL) and random archs (rs-rand-SEED: 2..6 x
# 3..10 PEs, 1..4 values a cycle, buffer depths, pipeline): rs-rand-1 3 x 4
# with 4 values a cycle (the mutation check's), rs-rand-2 2 x 4 with 3,
# rs-rand-5 6 x 7 (chains of up to 6 PEs).
if [ -n "${RTL_FULL:-}" ]; then
    PRESETS="systolic systolic-1x4 systolic-4x1"
    RSEEDS="${RTL_SEEDS:-11 12 13 21}"
    ESEEDS="${RTL_ENPU_SEEDS:-3 7 13 14 17 19}"
    RS_PRESETS="eyeriss rowstat"
    RS_SEEDS="${RTL_RS_SEEDS:-1 2 5 7}"
else
    PRESETS="systolic"
    RSEEDS="${RTL_SEEDS:-11 12 21}"
    ESEEDS="${RTL_ENPU_SEEDS:-3 13 17}"
    RS_PRESETS="eyeriss"
    RS_SEEDS="${RTL_RS_SEEDS:-1 2 5}"
fi
MODEL="models/kws_cnn.onnx models/kws_cnn/calib models/kws_cnn/sample_0.npy"
SRC_SYA="pe.v pe_row.v pe_bank.v pe_array.v glb.v requant.v sync_shape.v sya_top.v"
SRC_ENPU="ifmap_pad.v weight_pad.v requant.v pe.v pe_array.v pe_ctrl.v writer.v loader.v weight_reader.v enpu_top.v"
SRC_RS="pe.v noc.v rs_top.v"

lib() {
    sh scripts/deps.sh --rtl
    if [ ! -f $B/CMakeCache.txt ]; then
        cmake -S . -B $B -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    fi
    cmake --build $B -j "$JOBS" --target easynpu_cli >$B/lib-build.log 2>&1 ||
        { cat $B/lib-build.log; exit 1; }
}

# params CFG: writes $O/CFG/{arch.json,vflags,chparam.ys,params.h}
params() {
    cfg=$1
    mkdir -p $O
    case $cfg in
    enpu-rand-*)
        [ -f $O/easynpu.json ] || $B/easynpu arch easynpu --json >$O/easynpu.json
        python3 scripts/rtl_params.py --random "${cfg#enpu-rand-}" $O/easynpu.json $O/$cfg >/dev/null ;;
    rs-rand-*)
        [ -f $O/rowstat.json ] || $B/easynpu arch rowstat --json >$O/rowstat.json
        python3 scripts/rtl_params.py --random "${cfg#rs-rand-}" $O/rowstat.json $O/$cfg >/dev/null ;;
    rand-*)
        [ -f $O/systolic.json ] || $B/easynpu arch systolic --json >$O/systolic.json
        python3 scripts/rtl_params.py --random "${cfg#rand-}" $O/systolic.json $O/$cfg >/dev/null ;;
    *)
        $B/easynpu arch "$cfg" --json >$O/$cfg.json
        python3 scripts/rtl_params.py $O/$cfg.json $O/$cfg >/dev/null ;;
    esac
}

# engine CFG: the RTL folder, top module and testbench of CFG's engine
engine() {
    if grep -q '"engine": "easynpu"' $O/$1/arch.json; then
        dir=easynpu top=enpu_top exe=enpu_tb src=$SRC_ENPU
    elif grep -q '"engine": "rowstat"' $O/$1/arch.json; then
        dir=rowstat top=rs_top exe=rs_tb src=$SRC_RS
    else
        dir=systolic top=sya_top exe=sya_tb src=$SRC_SYA
    fi
}

# tb CFG RTLDIR [trace [BASE]]: builds $O/CFG/obj[-trace]/TB from the RTL in
# RTLDIR, again only when the RTL, the testbench, the parameters or the
# library changed.  Compiling dominates: the Verilator runtime's objects are
# compiled once per run and shared by every configuration ($O/rt[-trace]),
# and a build from the same parameters as BASE's (a mutant's) reuses BASE's
# testbench object when its interface header came out the same, so that it
# compiles only its model.
tb() {
    cfg=$1 rtl=$2 trace=${3:-} base=${4:-}
    obj=$O/$cfg/obj$trace
    engine "$cfg"
    stamp=$( (cat $O/$cfg/vflags; for f in $src; do cat "$rtl/$dir/$f"; done; cat rtl/cosim/$exe.cpp rtl/cosim/*.h;
        echo "$trace"; ls -l --time-style=+%s $B/libeasynpu.a) | cksum)
    if [ -x $obj/$exe ] && [ "$(cat $obj/stamp 2>/dev/null)" = "$stamp" ]; then return 0; fi
    rm -rf $obj
    mkdir -p $obj
    tflag=
    [ -n "$trace" ] && tflag=--trace
    # shellcheck disable=SC2046
    if ! verilator --cc --exe -O3 --x-assign fast --x-initial fast --noassert $tflag \
        --top-module $top $(cat $O/$cfg/vflags) -I"$rtl/$dir" "$rtl/$dir/$top.v" \
        "$ROOT/rtl/cosim/$exe.cpp" --Mdir $obj -o $exe \
        -CFLAGS "-std=c++17 -I$ROOT/include -I$ROOT/rtl/cosim -I$ROOT/$O/$cfg" \
        -LDFLAGS "$ROOT/$B/libeasynpu.a -lprotobuf-c -ljansson -lz -lm -lpthread" >$obj/build.log 2>&1; then
        tail -30 $obj/build.log
        echo "rtl: verilating $cfg failed (log: $obj/build.log)"
        exit 1
    fi
    # copied after Verilator wrote the makefile, the objects are newer than
    # it and their sources: make keeps them
    rt=$O/rt$trace-$(verilator --version | cksum | cut -d' ' -f1)
    [ -d $rt ] && cp $rt/*.o $obj/
    if [ -n "$base" ] && [ -f $base/$exe.o ] && cmp -s $base/V$top.h $obj/V$top.h &&
        cmp -s "$base/../params.h" $O/$cfg/params.h; then
        cp $base/$exe.o $obj/
    fi
    # The model's evaluation code runs once per cycle: -O1 compiles it in a
    # fraction of -O2's time at a small cost in speed.  A large array's (a
    # preset's 1024 PEs: 30 MB of C++) runs few cycles and compiles four
    # times faster at -O0; the testbench, which compares every register
    # every cycle, stays at -O1 (built first: make then keeps it).  The
    # initialisation (the __Slow files, about half the code) runs once: -O0.
    # A mutant runs only to its first difference: -O0 as well.
    fast=-O1
    [ "$(cat $obj/V$top*.cpp | wc -c)" -gt "${RTL_O0_BYTES:-8000000}" ] && fast=-O0
    [ -n "$base" ] && fast=-O0
    if ! { [ -f $obj/$exe.o ] || make -C $obj -f V$top.mk OPT_FAST=-O1 $exe.o >>$obj/build.log 2>&1; } ||
        ! make -C $obj -f V$top.mk -j "$JOBS" OPT_FAST=$fast OPT_SLOW=-O0 OPT_GLOBAL=-O1 >>$obj/build.log 2>&1; then
        tail -30 $obj/build.log
        echo "rtl: building the testbench of $cfg failed (log: $obj/build.log)"
        exit 1
    fi
    if [ ! -d $rt ]; then
        mkdir -p $rt.tmp
        cp -p $obj/verilated*.o $rt.tmp/
        mv $rt.tmp $rt
    fi
    echo "$stamp" >$obj/stamp
}

# run CFG ARGS...: runs the testbench, its summary line to $O/CFG/result
run_cfg() {
    cfg=$1
    shift
    engine "$cfg"
    start=$(date +%s)
    set +e
    $O/$cfg/obj/$exe --arch $O/$cfg/arch.json "$@" >$O/$cfg/out.txt 2>&1
    rc=$?
    set -e
    grep -Ev '^rtl-(sya|enpu|rs) .*: random .*: equal' $O/$cfg/out.txt || true
    if [ $rc -ne 0 ]; then
        # the same cases again with tracing, for the VCD window of the difference
        tb "$cfg" rtl -trace
        $O/$cfg/obj-trace/$exe --arch $O/$cfg/arch.json "$@" --vcd-dir $O/$cfg >$O/$cfg/out-trace.txt 2>&1 || true
        grep 'VCD of' $O/$cfg/out-trace.txt || true
    fi
    echo "$(tail -1 $O/$cfg/out.txt) in $(($(date +%s) - start)) s" >$O/$cfg/result
    return $rc
}

# lint CFG: verilator --lint-only -Wall on CFG's parameters
lint_cfg() {
    engine "$1"
    # shellcheck disable=SC2046
    verilator --lint-only -Wall -Irtl/$dir rtl/$dir/$top.v --top-module $top $(cat $O/$1/vflags)
}

# the configurations of this run (RTL_ONLY=systolic or easynpu: one engine's)
cfg_list() {
    if [ "${RTL_ONLY:-systolic}" = systolic ]; then
        for c in $PRESETS; do echo "$c"; done
        for s in $RSEEDS; do echo "rand-$s"; done
    fi
    if [ "${RTL_ONLY:-easynpu}" = easynpu ]; then
        echo easynpu
        for s in $ESEEDS; do echo "enpu-rand-$s"; done
    fi
    if [ "${RTL_ONLY:-rowstat}" = rowstat ]; then
        for c in $RS_PRESETS; do echo "$c"; done
        for s in $RS_SEEDS; do echo "rs-rand-$s"; done
    fi
}

cmd_test() {
    lib
    t0=$(date +%s)
    fails=0
    cfgs=$(cfg_list | tr '\n' ' ')
    rm -f $O/*/result
    for c in $cfgs; do
        params "$c"
        echo "rtl: building $c ($(tr ' ' '\n' <$O/$c/vflags | head -4 | tr '\n' ' '))"
        tb "$c" rtl
    done
    for c in $cfgs; do
        lint_cfg "$c" || { echo "rtl: verilator --lint-only -Wall is not clean on $c"; exit 1; }
    done
    echo "rtl: lint clean (verilator --lint-only -Wall) on $cfgs"
    tb_s=$(($(date +%s) - t0))
    np=$(echo $PRESETS | wc -w) nr=$(echo $RSEEDS | wc -w)
    NSYA=$(( (4 * NRAND - np * NRAND_PRESET + nr - 1) / nr ))
    seed=1
    for c in $cfgs; do
        case $c in
        enpu-rand-* | rs-rand-*) run_cfg "$c" --random "$NRAND" --seed "$seed" || fails=1 ;;
        eyeriss | rowstat) run_cfg "$c" --model $MODEL --random "$NRAND" --seed "$seed" || fails=1 ;;
        rand-*) run_cfg "$c" --random "$NSYA" --seed "$seed" || fails=1 ;;
        easynpu) run_cfg "$c" --model $MODEL --random "$NRAND" --seed "$seed" || fails=1 ;;
        *) run_cfg "$c" --model $MODEL --random "$NRAND_PRESET" --seed "$seed" || fails=1 ;;
        esac
        seed=$((seed + 1))
    done
    cmd_mutate "${RTL_ONLY:-all}" || fails=1
    # one line per engine: cases, equal, differ, cycles (summed over its configurations)
    for e in sya enpu rs; do
        cat $O/*/result | grep -q "^rtl-$e " || continue
        cat $O/*/result | grep "^rtl-$e " | awk -v e=$e -v tb="$tb_s" -v all="$(($(date +%s) - t0))" '
            { gsub(/\(/, "")
              for (i = 1; i <= NF; i++) {
                  if ($(i+1) == "cases") cases += $i; if ($(i+1) == "equal,") eq += $i
                  if ($(i+1) == "differ,") df += $i; if ($(i+1) == "cycles,") cy += $i
                  if ($(i+1) == "random),") rn += $i; if ($(i+1) == "random,") rn += $i } }
            END { printf "rtl: %d cases, %d equal, %d differ (%s: %d random layers, %d cycles compared; builds %d s, all %d s)\n",
                         cases, eq, df, e == "sya" ? "systolic" : e == "rs" ? "rowstat" : "easynpu", rn, cy, tb, all }'
    done
    return $fails
}

# The mutation check: a one-line change in a copy of the RTL must make the
# co-simulation report a difference naming the unit.  Lines:
#   file|sed expression|what|the unit the report must name
MUTATIONS_SYA='glb.v|s/assign q = sk\[r-1\];/assign q = sk[r > 1 ? r - 2 : 0];/|an off-by-one in the activation skew (row r >= 2 delayed r - 1 cycles)|glb (row
glb.v|s/: word\[8\*lane+:8\];/: word[8*(lane^1)+:8];/|a wrong byte lane read from the activation word|glb (row
pe.v|s/assign nacc = in_a_first ? prod_x : acc + prod_x;/assign nacc = in_a_last ? prod_x : acc + prod_x;/|the accumulator restarting on the last step instead of the first|pe (
sync_shape.v|s/wire from_west = (c == C0);/wire from_west = (c == C0 + 1);/|a word spanning two bank columns not continued from the west register|sync_shape (
requant.v|s/<< (prm_s - 6.d1));/<< prm_s);/|the rounding term one bit too high|requant ('
MUTATIONS_ENPU='ifmap_pad.v|s/assign rword\[8\*P\*v+:8\*P\] = mem\[a\];/assign rword[8*P*v+:8*P] = mem[a + 1'"'"'b1];/|a wrong pad index (the next entry read)|ifmap_pad,
pe_array.v|s/: word\[8\*lane+:8\];/: word[8*i+:8];/|a broadcast read giving PE i its own lane|pe,
pe.v|s/= first ? bias_u\[ACC_W-1:0\] : ps\[e\];/= first ? {ACC_W{1'"'"'b0}} : ps[e];/|the first pass not starting from the bias|pe,
weight_pad.v|s/if (pop) head_idx <= head_n >= DW\[SW:0\]/if (pop) head_idx <= head_n >= DW[SW:0] - 1'"'"'b1/|the weight pad head wrapping one slot early|weight_pad,
requant.v|s/<< (s - 6.d1));/<< s);/|the rounding term one bit too high|requant,
pe_array.v|s/wait_cnt <= LAT > 0 ? LAT\[CW-1:0\] - 1.b1/wait_cnt <= LAT > 0 ? LAT[CW-1:0]/|a psum entry ready one cycle late|pe_array,
pe_ctrl.v|s/(!started \&\& (par_cnt != 0 .. !w_rdy)) ? W_FILL/(!started \&\& par_cnt != 0) ? W_FILL/|the fill stall not waiting for the first weight word|pe_ctrl,
pe_ctrl.v|s/tapoff <= rowoff + dhxi;/tapoff <= rowoff;/|the pad offset of a kernel row not advanced with it|pe_ctrl,
writer.v|s/wire z0 = !two \&\& c0w == co_w \&\& end0 == {2'"'"'b0, co_l};/wire z0 = 1'"'"'b0;/|no zero fill after the last channel of the layer|writer,
loader.v|s/assign rd_en = rd_req \&\& !bus_busy;/assign rd_en = rd_req;/|a read granted the main bus in a cycle the writer has it|loader,
loader.v|s/(iy >= 0 \&\& iy < \$signed({2'"'"'b0, cfg_hi}) \&\& ix >= 0/(iy >= 0 \&\& iy < $signed({2'"'"'b0, cfg_hi}) \&\& ix > 0/|the left edge column of the map taken for padding|loader,
weight_reader.v|s/tapbase <= chbase + cfg_ch_stride;/tapbase <= tapbase + cfg_ch_stride;/|the next channel'"'"'s weights read from the last tap'"'"'s instead of the channel'"'"'s first|weight_reader,
loader.v|s/cfg_ifmap + pix \* cfg_wpp + cfg_iword + a_kz;/cfg_ifmap + pix * cfg_wpp + a_kz;/|the first channel word read in each pixel (ifmap_word) left out of the address|loader,'
MUTATIONS_RS='pe.v|s/first ? (HAS_IN != 0 ? in_val : {PSW{1.b0}}) : ps/first ? {PSW{1'"'"'b0}} : ps/|a unit not adding the psum from the PE above|pe (
pe.v|s/slot_s >= {1.b0, L} ? slot_s/slot_s > {1'"'"'b0, L} ? slot_s/|an off-by-one in the loop buffer window wrap|pe (
pe.v|s/if (col_end) lb_head <= head_w\[CW-1:0\];/if (col_end) lb_head <= lb_head;/|the window head not advanced when its oldest values are replaced|pe (
pe.v|s/cnt <= D - 1.b1;/cnt <= D;/|the link ready one cycle late|pe (
pe.v|s/fifo_rdy = fn != 0 .. .if_vld;/fifo_rdy = fn != 0;/|no FIFO bypass (a value delivered in a cycle not usable in it)|pe (
noc.v|s/== s0_rtag\[i\*TW+:TW\];/== s0_ctag[i*TW+:TW];/|a row node comparing the column tag|noc (
noc.v|s/s1_pass\[gi\*ROWS+gr\] \&\& col_id\[ID+TW\] \&\&/s1_pass[gi*ROWS+gr] \&\&/|a column node ignoring that it takes nothing|noc ('


# mutate_engine CFG DIR MUTATIONS ARGS...: the mutants of DIR's RTL on CFG
mutate_engine() {
    cfg=$1 mdir=$2 list=$3
    shift 3
    params "$cfg"
    # the unmutated build first: every mutant reuses its testbench object
    tb "$cfg" rtl
    engine "$cfg"
    n=0
    mkdir -p $O/mut
    echo "$list" | while IFS='|' read -r file expr what unit; do
        n=$((n + 1))
        # RTL_MUT_EVERY=K (CI): only every K-th mutant, from RTL_MUT_PICK
        # (CI takes it from the commit's hash); unset, all of them
        if [ -n "${RTL_MUT_EVERY:-}" ] && [ $(((n + ${RTL_MUT_PICK:-0}) % RTL_MUT_EVERY)) -ne 0 ]; then
            echo "rtl mutation $mdir $n ($file: $what): left to another run (RTL_MUT_EVERY=$RTL_MUT_EVERY)"
            continue
        fi
        m=$O/mut/$mdir-$n
        rm -rf "$m"
        mkdir -p "$m"
        cp -r "rtl/$mdir" "$m/$mdir"
        sed -i "$expr" "$m/$mdir/$file"
        changed=$(diff "rtl/$mdir/$file" "$m/$mdir/$file" | grep -c '^>' || true)
        if [ "$changed" -ne 1 ]; then
            echo "rtl mutation $mdir $n ($file: $what): the change did not apply ($changed lines)"
            echo 1 >>$O/mut/fails
            continue
        fi
        mc=$cfg-mut$n
        mkdir -p $O/$mc
        cp $O/$cfg/arch.json $O/$cfg/vflags $O/$cfg/params.h $O/$mc/
        if ! (tb "$mc" "$m" "" "$O/$cfg/obj"); then
            echo "rtl mutation $mdir $n ($file: $what): the mutated RTL did not build"
            echo 1 >>$O/mut/fails
            continue
        fi
        set +e
        $O/$mc/obj/$exe --arch $O/$mc/arch.json "$@" >$O/$mc/out.txt 2>&1
        rc=$?
        set -e
        line=$(grep -m1 'DIFFER' $O/$mc/out.txt || true)
        if [ $rc -ne 0 ] && echo "$line" | grep -q "cycle [0-9]*: unit $unit"; then
            echo "rtl mutation $mdir $n ($file: $what): found: ${line#*DIFFER: }"
        else
            echo "rtl mutation $mdir $n ($file: $what): NOT found as expected (unit '$unit'): ${line:-no difference}"
            echo 1 >>$O/mut/fails
        fi
    done
}

cmd_mutate() {
    [ -x $B/easynpu ] || lib
    rm -f $O/mut/fails
    # shellcheck disable=SC2086
    case ${1:-all} in all | systolic)
        mutate_engine rand-${RTL_MUT_SEED:-21} systolic "$MUTATIONS_SYA" --model $MODEL --random 10 --seed 5 ;;
    esac
    # shellcheck disable=SC2086
    case ${1:-all} in all | easynpu)
        mutate_engine easynpu easynpu "$MUTATIONS_ENPU" --model $MODEL --random 10 --seed 5 ;;
    esac
    # shellcheck disable=SC2086
    case ${1:-all} in all | rowstat)
        mutate_engine rs-rand-${RTL_RS_MUT_SEED:-1} rowstat "$MUTATIONS_RS" --random 10 --seed 5 ;;
    esac
    if [ -s $O/mut/fails ]; then
        rm -f $O/mut/fails
        return 1
    fi
    return 0
}

cmd_lint() {
    lib
    for c in $(cfg_list); do
        params "$c"
        lint_cfg "$c"
    done
    echo "rtl lint: clean (verilator --lint-only -Wall): $(cfg_list | tr '\n' ' ')"
}

# synth_unit CFG MODULE NAME PARAM=VALUE...: Yosys on one module of CFG's
# RTL as its own top, its stat to $B/synth/CFG-NAME.stat
synth_unit() {
    cfg=$1 mod=$2 name=$3
    shift 3
    {
        echo "read_verilog -sv rtl/$dir/$mod.v"
        echo "chparam $(for kv in "$@"; do printf -- '-set %s %s ' "${kv%%=*}" "${kv#*=}"; done)$mod"
        echo "hierarchy -top $mod"
        echo "synth -top $mod"
        echo "tee -o $B/synth/$cfg-$name.stat stat"
    } >$B/synth/$cfg-$name.ys
    yosys -q -l $B/synth/$cfg-$name.log -s $B/synth/$cfg-$name.ys >/dev/null
}

# The row-stationary array is ROWS x COLS copies of one PE and two networks:
# each is synthesized once as its own top (the whole array, every PE's
# buffers in flip-flops, is more than Yosys does in minutes) and counted per
# instance.
synth_rs() {
    cfg=$1
    v() { tr ' ' '\n' <$O/$cfg/vflags | sed -n "s/^-G$1=//p"; }
    start=$(date +%s)
    synth_unit "$cfg" pe pe DW=$(v DW) PSW=$(v PSW) FD=$(v FD) LBD=$(v LBD) FLD=$(v FLD) PD=$(v PD) \
        NVI=$(v NVI) NVF=$(v NVF) CW=$(v CW) UW=$(v UW) DPW=$(v DPW) HAS_IN=1
    for n in ifmap:NVI filter:NVF; do
        synth_unit "$cfg" noc "noc-${n%%:*}" ROWS=$(v ROWS) COLS=$(v COLS) NV=$(v "${n#*:}") DW=$(v DW) TW=$(v TW)
    done
    echo "yosys: $cfg synthesized in $(($(date +%s) - start)) s (logs: $B/synth/$cfg-*.log)"
    $B/easynpu arch $O/$cfg/arch.json >$B/synth/$cfg.arch.txt
    python3 scripts/rtl_area.py --rowstat $B/synth/$cfg-pe.stat $B/synth/$cfg-noc-ifmap.stat \
        $B/synth/$cfg-noc-filter.stat $B/synth/$cfg.arch.txt $O/$cfg/arch.json
}

# synth_cfg CFG: Yosys on CFG's top, its cells and area beside the area model
synth_cfg() {
    cfg=$1
    params "$cfg"
    engine "$cfg"
    mkdir -p $B/synth
    if [ "$dir" = rowstat ]; then
        synth_rs "$cfg"
        return 0
    fi
    {
        echo "read_verilog -sv $(for f in $src; do printf 'rtl/%s/%s ' "$dir" "$f"; done)"
        cat $O/$cfg/chparam.ys
        echo "hierarchy -top $top"
        echo "synth -top $top"
        echo "tee -o $B/synth/$cfg.stat stat"
    } >$B/synth/$cfg.ys
    start=$(date +%s)
    yosys -q -l $B/synth/$cfg.log -s $B/synth/$cfg.ys >/dev/null
    echo "yosys: $cfg synthesized in $(($(date +%s) - start)) s (log: $B/synth/$cfg.log)"
    $B/easynpu arch $O/$cfg/arch.json >$B/synth/$cfg.arch.txt
    python3 scripts/rtl_area.py $B/synth/$cfg.stat $B/synth/$cfg.arch.txt $O/$cfg/arch.json
}

# `make synth`: the systolic top (RTL_SYNTH_ARCH, default its preset),
# EasyNPU's (RTL_SYNTH_ENPU_ARCH, default its preset) and the row-stationary
# array's units (RTL_SYNTH_RS_ARCH, default preset eyeriss); or the configurations
# named (sh scripts/rtl.sh synth CFG...)
cmd_synth() {
    lib
    if [ $# -gt 0 ]; then
        for c in "$@"; do synth_cfg "$c"; done
        return 0
    fi
    synth_cfg "${RTL_SYNTH_ARCH:-systolic}"
    synth_cfg "${RTL_SYNTH_ENPU_ARCH:-easynpu}"
    synth_cfg "${RTL_SYNTH_RS_ARCH:-eyeriss}"
}

case "${1:-}" in
test) cmd_test ;;
mutate) cmd_mutate "${2:-all}" ;;
synth) shift; cmd_synth "$@" ;;
lint) cmd_lint ;;
build) lib; params "$2"; tb "$2" rtl ;;  # one configuration's testbench
*) echo "usage: sh scripts/rtl.sh test|mutate|synth|lint" >&2; exit 2 ;;
esac
