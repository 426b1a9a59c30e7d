// The weight reader (C model: sim_sched_weights and sim_pass_info in
// src/sim/easynpu/scheduler.c; docs/microarch.md §11.6): it streams a chain's
// weight words from the weight memory into the weight pad, one word a cycle
// while the pad has a free slot (its count at the cycle's start: the PE
// controller's pop of the same cycle frees one only for the next).  First
// the chain's n_par parameter words (§11.3) take the weight bus, one a
// cycle, with no push; then, unit after unit, each pad-reading pass's words:
// a broadcast pass (conv, fc) reads zse words from its base, a multicast
// one (dwconv, avgpool) one.  A unit's passes are its input channels
// (outer) times the taps of its kernel-row band (row, column): the taps of a
// band are consecutive in the weight layout, tap_stride apart (broadcast:
// the words per tap wpg; multicast: the input words per pixel), and the
// next channel's first tap ch_stride after the channel's (hk * wk * wpg; fc:
// wpg), so the base advances by adding.  The unit's registers (its first
// pass's base wb0, channels, kernel rows, words per pass) come from the
// scheduler's unit cursor (nw_*): unit 0 at the chain's start (rst), the
// next when the unit's last word is pushed (unit_next).  The read port is
// combinational here (the testbench answers it from the C model's weight
// memory); the word is written into the pad's tail slot at the cycle's edge
// and the pad's countdown makes it usable LW cycles later, as the C model's
// ready time.
module weight_reader #(
    parameter CW = 16,
    parameter WAW = 12
) (
    input wire clk,
    input wire rst,  // the chain's start: unit 0 taken from nw_*
    input wire [CW-1:0] cfg_npar,
    input wire [CW-1:0] cfg_wk,
    input wire [WAW-1:0] cfg_tap_stride,
    input wire [WAW-1:0] cfg_ch_stride,
    // the scheduler's next unit for the weight stream
    input wire nw_done,
    input wire [WAW-1:0] nw_wb0,
    input wire [CW-1:0] nw_nch,
    input wire [CW-1:0] nw_nkh,
    input wire [CW-1:0] nw_zse,
    input wire pad_full,  // the weight pad has no free slot at the cycle's start
    // the weight memory's read port and the pad's push
    output wire rd_en,     // the weight bus reads in this cycle (parameters or a weight word)
    output wire rd_par,    // ... a parameter word
    output wire [WAW-1:0] rd_addr,
    output wire push,
    output wire unit_next,  // the unit's last word is pushed: the next one is taken
    output reg done
);
    reg [CW-1:0] par_left, nch, nkh, zse, ch, khr, kw, o;
    reg [WAW-1:0] chbase, tapbase;
    assign rd_par = par_left != 0;
    assign push = !rd_par && !done && !pad_full;
    assign rd_en = rd_par || push;
    /* verilator lint_off WIDTH */
    assign rd_addr = tapbase + o;  // o < zse: a word of the block
    /* verilator lint_on WIDTH */
    wire o_end = o == zse - 1'b1, kw_end = kw == cfg_wk - 1'b1, kh_end = khr == nkh - 1'b1;
    wire ch_end = ch == nch - 1'b1;
    assign unit_next = push && o_end && kw_end && kh_end && ch_end;
    always @(posedge clk) begin
        if (rst || unit_next) begin
            // a new unit: its first pass
            done <= nw_done;
            nch <= nw_nch;
            nkh <= nw_nkh;
            zse <= nw_zse;
            ch <= {CW{1'b0}};
            khr <= {CW{1'b0}};
            kw <= {CW{1'b0}};
            o <= {CW{1'b0}};
            chbase <= nw_wb0;
            tapbase <= nw_wb0;
        end else if (push) begin
            if (!o_end) begin
                o <= o + 1'b1;
            end else begin
                o <= {CW{1'b0}};
                if (!(kw_end && kh_end)) begin
                    // the band's next tap
                    tapbase <= tapbase + cfg_tap_stride;
                    if (kw_end) begin
                        kw <= {CW{1'b0}};
                        khr <= khr + 1'b1;
                    end else begin
                        kw <= kw + 1'b1;
                    end
                end else begin
                    // the next channel's first tap of the band
                    kw <= {CW{1'b0}};
                    khr <= {CW{1'b0}};
                    ch <= ch + 1'b1;
                    chbase <= chbase + cfg_ch_stride;
                    tapbase <= chbase + cfg_ch_stride;
                end
            end
        end
        if (rst) par_left <= cfg_npar;
        else if (rd_par) par_left <= par_left - 1'b1;
    end
endmodule
