// The row-stationary array's datapath (C model: the PE loop of
// src/sim/rowstat/ctrl.c pass_cycle, docs/rowstat.md "The engine"): ROWS x
// COLS PEs (pe.v) whose psum links run down each column, fed by the ifmap
// and filter multicast networks (noc.v).  PE (r, c)'s link goes to PE
// (r + 1, c), which takes it with its unit's first MAC; the output network
// (outside the RTL, collector.c) takes the bottom PE's of each chain
// (ctake).  PE r's link is free for its last MAC in the cycle the PE below
// takes it (the C model steps each column from the bottom up): the take
// ripples up the column combinationally.
// cfg is the controller's configuration edge before a pass: every PE's
// registers (flat, PE (r, c) at index r * COLS + c) and both networks' IDs.
module rs_top #(
    parameter ROWS = 12,
    parameter COLS = 14,
    parameter NVI = 4,
    parameter NVF = 4,
    parameter DW = 16,
    parameter PSW = 64,
    parameter FD = 256,
    parameter LBD = 12,
    parameter FLD = 224,
    parameter PD = 24,
    parameter CW = 9,
    parameter UW = 24,
    parameter TW = 16,
    parameter DPW = 5
) (
    input wire clk,
    input wire cfg,
    input wire [ROWS*COLS-1:0] cfg_used,
    input wire [ROWS*COLS*CW-1:0] cfg_L,
    input wire [ROWS*COLS*CW-1:0] cfg_p,
    input wire [ROWS*COLS*UW-1:0] cfg_wo,
    input wire [ROWS*COLS*CW-1:0] cfg_R,
    input wire [DPW-1:0] cfg_D,
    input wire [ROWS*(TW+1)-1:0] cfg_if_row_id,
    input wire [ROWS*COLS*(TW+1)-1:0] cfg_if_col_id,
    input wire [ROWS*(TW+1)-1:0] cfg_fl_row_id,
    input wire [ROWS*COLS*(TW+1)-1:0] cfg_fl_col_id,
    // the global buffer's reads onto the networks this cycle
    input wire [NVI-1:0] if_in_vld,
    input wire [NVI*DW-1:0] if_in_val,
    input wire [NVI*TW-1:0] if_in_rtag,
    input wire [NVI*TW-1:0] if_in_ctag,
    input wire [NVF-1:0] fl_in_vld,
    input wire [NVF*DW-1:0] fl_in_val,
    input wire [NVF*TW-1:0] fl_in_rtag,
    input wire [NVF*TW-1:0] fl_in_ctag,
    input wire go,
    input wire [ROWS*COLS-1:0] ctake,  // the output network takes PE (r, c)'s link
    // co-simulation: the networks' values to the PEs and stages (the PEs'
    // registers and which values each takes: pe.v's, read by name)
    output wire [NVI*DW-1:0] if_dlv_val,
    output wire [NVI-1:0] if_s0_vld,
    output wire [NVI*DW-1:0] if_s0_val,
    output wire [NVI*TW-1:0] if_s0_rtag,
    output wire [NVI*TW-1:0] if_s0_ctag,
    output wire [NVI-1:0] if_s1_vld,
    output wire [NVI*TW-1:0] if_s1_ctag,
    output wire [NVI*ROWS-1:0] if_s1_pass,
    output wire [NVF*DW-1:0] fl_dlv_val,
    output wire [NVF-1:0] fl_s0_vld,
    output wire [NVF*DW-1:0] fl_s0_val,
    output wire [NVF*TW-1:0] fl_s0_rtag,
    output wire [NVF*TW-1:0] fl_s0_ctag,
    output wire [NVF-1:0] fl_s1_vld,
    output wire [NVF*TW-1:0] fl_s1_ctag,
    output wire [NVF*ROWS-1:0] fl_s1_pass
);
    noc #(
        .ROWS(ROWS),
        .COLS(COLS),
        .NV(NVI),
        .DW(DW),
        .TW(TW)
    ) u_ifmap (
        .clk(clk),
        .cfg(cfg),
        .cfg_row_id(cfg_if_row_id),
        .cfg_col_id(cfg_if_col_id),
        .in_vld(if_in_vld),
        .in_val(if_in_val),
        .in_rtag(if_in_rtag),
        .in_ctag(if_in_ctag),
        .dlv(if_dlv),
        .dlv_val(if_dlv_val),
        .s0_vld(if_s0_vld),
        .s0_val(if_s0_val),
        .s0_rtag(if_s0_rtag),
        .s0_ctag(if_s0_ctag),
        .s1_vld(if_s1_vld),
        .s1_ctag(if_s1_ctag),
        .s1_pass(if_s1_pass)
    );
    noc #(
        .ROWS(ROWS),
        .COLS(COLS),
        .NV(NVF),
        .DW(DW),
        .TW(TW)
    ) u_filter (
        .clk(clk),
        .cfg(cfg),
        .cfg_row_id(cfg_fl_row_id),
        .cfg_col_id(cfg_fl_col_id),
        .in_vld(fl_in_vld),
        .in_val(fl_in_val),
        .in_rtag(fl_in_rtag),
        .in_ctag(fl_in_ctag),
        .dlv(fl_dlv),
        .dlv_val(fl_dlv_val),
        .s0_vld(fl_s0_vld),
        .s0_val(fl_s0_val),
        .s0_rtag(fl_s0_rtag),
        .s0_ctag(fl_s0_ctag),
        .s1_vld(fl_s1_vld),
        .s1_ctag(fl_s1_ctag),
        .s1_pass(fl_s1_pass)
    );

    wire [ROWS*COLS*NVI-1:0] if_dlv;
    wire [ROWS*COLS*NVF-1:0] fl_dlv;
    // the links, one element a PE (not packed: no vector of every PE's)
    wire in_take[0:ROWS*COLS-1];
    wire out_full[0:ROWS*COLS-1];
    wire out_rdy[0:ROWS*COLS-1];
    wire [UW-1:0] out_unit[0:ROWS*COLS-1];
    wire [PSW-1:0] out_val[0:ROWS*COLS-1];
    genvar r, c;
    generate
        for (r = 0; r < ROWS; r = r + 1) begin : g_row
            for (c = 0; c < COLS; c = c + 1) begin : g_col
                localparam integer N = r * COLS + c;
                // the link from above (the top row has none: tied off)
                wire a_full, a_rdy;
                wire [UW-1:0] a_unit;
                wire [PSW-1:0] a_val;
                wire take_below;
                if (r > 0) begin : g_above
                    assign a_full = out_full[N-COLS];
                    assign a_rdy = out_rdy[N-COLS];
                    assign a_unit = out_unit[N-COLS];
                    assign a_val = out_val[N-COLS];
                end else begin : g_top
                    assign a_full = 1'b0;
                    assign a_rdy = 1'b0;
                    assign a_unit = {UW{1'b0}};
                    assign a_val = {PSW{1'b0}};
                end
                if (r < ROWS - 1) begin : g_below
                    assign take_below = in_take[N+COLS] || ctake[N];
                end else begin : g_bottom
                    assign take_below = ctake[N];
                end
                pe #(
                    .DW(DW),
                    .PSW(PSW),
                    .FD(FD),
                    .LBD(LBD),
                    .FLD(FLD),
                    .PD(PD),
                    .NVI(NVI),
                    .NVF(NVF),
                    .CW(CW),
                    .UW(UW),
                    .DPW(DPW),
                    .HAS_IN(r > 0 ? 1 : 0)
                ) u_pe (
                    .clk(clk),
                    .cfg(cfg),
                    .cfg_used(cfg_used[N]),
                    .cfg_L(cfg_L[N*CW+:CW]),
                    .cfg_p(cfg_p[N*CW+:CW]),
                    .cfg_wo(cfg_wo[N*UW+:UW]),
                    .cfg_R(cfg_R[N*CW+:CW]),
                    .cfg_D(cfg_D),
                    .if_vld(if_dlv[N*NVI+:NVI]),
                    .if_val(if_dlv_val),
                    .fl_vld(fl_dlv[N*NVF+:NVF]),
                    .fl_val(fl_dlv_val),
                    .go(go),
                    .in_full(a_full),
                    .in_unit(a_unit),
                    .in_val(a_val),
                    .in_rdy(a_rdy),
                    .in_take(in_take[N]),
                    .out_take(take_below),
                    .out_full(out_full[N]),
                    .out_unit(out_unit[N]),
                    .out_val(out_val[N]),
                    .out_rdy(out_rdy[N])
                );
            end
        end
    endgenerate
endmodule
