// EasyNPU's PE array with its pads (docs/rtl.md): the ifmap pads
// (ifmap_pad), the weight pad (weight_pad) and the PE array (pe_array: the
// PEs, their psum files and requantizer output stages).  Outside, played by
// the testbench from the C model: the scheduler (the loader writes one pad
// word per cycle, the weight reader pushes one weight word), the PE
// controller (whether the array issues, the entry, the lane, the passes'
// first / final flags, the pad entry of each virtual row, the weight pad's
// pop) and the parameter registers (bias, M, S per lane of the psum word).
module enpu_top #(
    parameter P = 16,
    parameter ROWS = 1,
    parameter LGMAX = 4,
    parameter NLG = 3,
    parameter LGSW = 2,
    parameter ACC_W = 32,
    parameter DEPTH = 64,
    parameter EW = 6,
    parameter DIF = 64,
    parameter AW = 6,
    parameter DW = 16,
    parameter SW = 4,
    parameter LW = 1,
    parameter MB = 20,
    parameter LBW = 4,
    parameter VW = 3,
    parameter LAT = 4
) (
    input wire clk,
    input wire rst,
    // the loader
    input wire pad_we,
    input wire [AW-1:0] pad_waddr,
    input wire [8*P-1:0] pad_wdata,
    input wire pad_wmark,
    // the weight reader and the PE controller's pop
    input wire w_push,
    input wire [8*P-1:0] w_pdata,
    input wire w_pop,
    // the PE controller
    input wire iss,
    input wire iss_dw,
    input wire iss_first,
    input wire iss_final,
    input wire [EW-1:0] iss_e,
    input wire [LBW-1:0] iss_lane,
    input wire [LGSW-1:0] iss_lgsel,
    input wire [VW-1:0] iss_nrows,
    input wire [LBW:0] iss_nval,
    input wire [AW*ROWS*LGMAX-1:0] iss_entry,
    // the parameter registers of the psum word
    input wire [32*P-1:0] prm_bias,
    input wire [MB*P-1:0] prm_m,
    input wire [6*P-1:0] prm_s,
    input wire [7:0] prm_zp,
    input wire [7:0] prm_lo,
    input wire [7:0] prm_hi,
    // observed
    output wire [8*P*ROWS*LGMAX-1:0] pad_word,
    output wire [ROWS*LGMAX-1:0] pad_mark,
    output wire [8*P-1:0] w_head,
    output wire w_head_rdy,
    output wire [SW-1:0] w_head_idx,
    output wire [SW:0] w_count,
    output wire [DEPTH-1:0] ps_ready,
    input wire [EW-1:0] dbg_e,
    output wire [ACC_W*P*ROWS-1:0] dbg_ps,
    output wire [8*P*ROWS-1:0] dbg_sv
);
    localparam NV = ROWS * LGMAX;
    ifmap_pad #(
        .P(P),
        .DIF(DIF),
        .AW(AW),
        .NV(NV)
    ) u_ifmap_pad (
        .clk(clk),
        .we(pad_we),
        .waddr(pad_waddr),
        .wdata(pad_wdata),
        .wmark(pad_wmark),
        .raddr(iss_entry),
        .rword(pad_word),
        .rmark(pad_mark)
    );
    weight_pad #(
        .P(P),
        .DW(DW),
        .SW(SW),
        .LW(LW)
    ) u_weight_pad (
        .clk(clk),
        .rst(rst),
        .push(w_push),
        .pdata(w_pdata),
        .pop(w_pop),
        .head(w_head),
        .head_rdy(w_head_rdy),
        .head_idx(w_head_idx),
        .count(w_count)
    );
    pe_array #(
        .P(P),
        .ROWS(ROWS),
        .LGMAX(LGMAX),
        .NLG(NLG),
        .LGSW(LGSW),
        .ACC_W(ACC_W),
        .DEPTH(DEPTH),
        .EW(EW),
        .MB(MB),
        .LBW(LBW),
        .VW(VW),
        .LAT(LAT)
    ) u_pe_array (
        .clk(clk),
        .rst(rst),
        .en(iss),
        .dw(iss_dw),
        .first(iss_first),
        .final_pass(iss_final),
        .e(iss_e),
        .lane(iss_lane),
        .lgsel(iss_lgsel),
        .nrows(iss_nrows),
        .nval(iss_nval),
        .pad_word(pad_word),
        .w_word(w_head),
        .bias(prm_bias),
        .m(prm_m),
        .s(prm_s),
        .zp(prm_zp),
        .lo(prm_lo),
        .hi(prm_hi),
        .ready(ps_ready),
        .dbg_e(dbg_e),
        .dbg_ps(dbg_ps),
        .dbg_sv(dbg_sv)
    );
endmodule
