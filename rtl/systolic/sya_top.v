// The systolic engine's datapath (docs/rtl.md): the global buffer's read
// side with the skew (glb), the PE array (pe_array: banks, rows, PEs, the
// rows' output MUXes), one requantizer per MUX (requant) and the re-shaping
// unit (sync_shape).  The controller (C model: ccu.c) and the SRAMs are
// outside: the controller issues units (their configuration registers are
// read by tag through the cfg ports, the instruction's parameter registers
// through the prm ports) and presents each step's addresses; the SRAMs
// answer the read ports LA / LW cycles later and take the write ports.
// The handshake towards the controller: act_rdy, whether a unit of req_k
// steps may start now without its first results reaching the output MUXes
// before they are through with the last unit (ActRdy; the C model's
// mux_free rule).
module sya_top #(
    parameter NR = 16,
    parameter NC = 16,
    parameter BR = 2,
    parameter BC = 2,
    parameter ACC_W = 26,
    parameter TW = 7,
    parameter AW = 15,
    parameter WAW = 14,
    parameter WB = 32,
    parameter LBW = 5,
    parameter LA = 1,
    parameter LW = 1,
    parameter MB = 20,
    parameter IW = 16,
    parameter OW = 16,
    parameter RQ = 2,
    parameter KW = 24,
    // derived (given by the generator so that every tool sees the same)
    parameter CW = 4,   // bits of a column within a bank
    parameter CGW = 7   // bits of an array column, holding C
) (
    input wire clk,
    input wire rst,
    // the controller's address generator (unskewed)
    input wire [BR*NR-1:0] rq_a_vld,
    input wire [AW*BR*NR-1:0] rq_a_addr,
    input wire [LBW*BR*NR-1:0] rq_a_lane,
    input wire [BR*NR-1:0] rq_a_pad,
    input wire [BR*NR-1:0] rq_a_first,
    input wire [BR*NR-1:0] rq_a_last,
    input wire [TW*BR*NR-1:0] rq_a_tag,
    input wire [BC*NC-1:0] rq_w_vld,
    input wire [WAW*BC*NC-1:0] rq_w_addr,
    input wire [LBW*BC*NC-1:0] rq_w_lane,
    // SRAM read ports
    output wire [BR*NR-1:0] act_rd_en,
    output wire [AW*BR*NR-1:0] act_rd_addr,
    input wire [8*WB*BR*NR-1:0] act_rdata,
    output wire [BC*NC-1:0] wgt_rd_en,
    output wire [WAW*BC*NC-1:0] wgt_rd_addr,
    input wire [8*WB*BC*NC-1:0] wgt_rdata,
    // configuration registers (by tag): the input zero point per row
    output wire [TW*BR*NR-1:0] zp_tag,
    input wire [8*BR*NR-1:0] zp_val,
    // ... the requantizer's fields per MUX
    output wire [TW*BR*NR*BC-1:0] rq_cfg_tag,
    input wire [IW*BR*NR*BC-1:0] rq_cfg_instr,
    input wire [OW*BR*NR*BC-1:0] rq_cfg_og0,
    input wire [8*BR*NR*BC-1:0] rq_cfg_zp,
    input wire [8*BR*NR*BC-1:0] rq_cfg_lo,
    input wire [8*BR*NR*BC-1:0] rq_cfg_hi,
    // parameter registers (instruction, channel) per MUX
    output wire [IW*BR*NR*BC-1:0] prm_instr,
    output wire [OW*BR*NR*BC-1:0] prm_ch,
    input wire [32*BR*NR*BC-1:0] prm_bias,
    input wire [MB*BR*NR*BC-1:0] prm_m,
    input wire [6*BR*NR*BC-1:0] prm_s,
    // ... the re-shaping unit's fields per MUX
    output wire [TW*BR*NR*BC-1:0] sh_cfg_tag,
    input wire [LBW*BR*NR*BC-1:0] sh_cfg_lane0,
    input wire [AW*BR*NR*BC-1:0] sh_cfg_addr0,
    input wire [AW*BR*NR*BC-1:0] sh_cfg_wpp,
    input wire [CGW*BR*NR*BC-1:0] sh_cfg_cols,
    // main DTCM write ports, one per MUX
    output wire [BR*NR*BC-1:0] wr_en,
    output wire [AW*BR*NR*BC-1:0] wr_addr,
    output wire [WB*BR*NR*BC-1:0] wr_be,
    output wire [8*WB*BR*NR*BC-1:0] wr_data,
    // the handshake with the controller
    input wire iss_vld,        // a unit issued this cycle ...
    input wire [KW-1:0] iss_k,  // ... with K steps
    input wire [CGW-1:0] iss_cols,  // ... and this many columns
    input wire [KW-1:0] req_k,  // the steps of the unit the controller waits to issue
    output wire act_rdy,
    // activity, for co-simulation and the VCD
    output wire [BR*NR*BC-1:0] mux_emit,  // results entering the requantizers
    output wire mux_err,
    // the array's edges (the global buffer's output) and registers, for
    // co-simulation: {tag, last, first, v, vld} per row, {v, vld} per column
    output wire [BR*NR*(TW+11)-1:0] dbg_west,
    output wire [BC*NC*9-1:0] dbg_north,
    output wire [BR*NR*BC*NC*(ACC_W+TW+20)-1:0] dbg_pe,
    output wire [BR*NR*BC-1:0] dbg_mux_vld,
    output wire [CW*BR*NR*BC-1:0] dbg_mux_c,
    output wire [ACC_W*BR*NR*BC-1:0] dbg_mux_acc,
    output wire [TW*BR*NR*BC-1:0] dbg_mux_tag,
    output wire [BR*NR*BC*(RQ > 0 ? RQ : 1)*(TW+CGW+9)-1:0] dbg_rq
);
    localparam R = BR * NR, C = BC * NC, NM = R * BC;
    localparam SW = TW + CGW + 9, RQS = RQ > 0 ? RQ : 1;

    wire [R-1:0] a_vld, a_first, a_last;
    wire [8*R-1:0] a_v;
    wire [TW*R-1:0] a_tag;
    wire [C-1:0] w_vld;
    wire [8*C-1:0] w_v;

    glb #(
        .R(R),
        .C(C),
        .TW(TW),
        .AW(AW),
        .WAW(WAW),
        .WB(WB),
        .LBW(LBW),
        .LA(LA),
        .LW(LW)
    ) u_glb (
        .clk(clk),
        .rst(rst),
        .rq_a_vld(rq_a_vld),
        .rq_a_addr(rq_a_addr),
        .rq_a_lane(rq_a_lane),
        .rq_a_pad(rq_a_pad),
        .rq_a_first(rq_a_first),
        .rq_a_last(rq_a_last),
        .rq_a_tag(rq_a_tag),
        .rq_w_vld(rq_w_vld),
        .rq_w_addr(rq_w_addr),
        .rq_w_lane(rq_w_lane),
        .act_rd_en(act_rd_en),
        .act_rd_addr(act_rd_addr),
        .act_rdata(act_rdata),
        .wgt_rd_en(wgt_rd_en),
        .wgt_rd_addr(wgt_rd_addr),
        .wgt_rdata(wgt_rdata),
        .zp_tag(zp_tag),
        .zp_val(zp_val),
        .a_vld(a_vld),
        .a_v(a_v),
        .a_first(a_first),
        .a_last(a_last),
        .a_tag(a_tag),
        .w_vld(w_vld),
        .w_v(w_v)
    );

    genvar e;
    generate
        for (e = 0; e < R; e = e + 1) begin : g_west
            assign dbg_west[(TW+11)*e+:TW+11] = {a_tag[TW*e+:TW], a_last[e], a_first[e], a_v[8*e+:8], a_vld[e]};
        end
        for (e = 0; e < C; e = e + 1) begin : g_north
            assign dbg_north[9*e+:9] = {w_v[8*e+:8], w_vld[e]};
        end
    endgenerate

    wire [NM-1:0] m_vld;
    wire [CW*NM-1:0] m_c;
    wire [ACC_W*NM-1:0] m_acc;
    wire [TW*NM-1:0] m_tag;
    wire [NM-1:0] m_err;
    pe_array #(
        .NR(NR),
        .NC(NC),
        .BR(BR),
        .BC(BC),
        .ACC_W(ACC_W),
        .TW(TW),
        .CW(CW)
    ) u_array (
        .clk(clk),
        .rst(rst),
        .in_a_vld(a_vld),
        .in_a_v(a_v),
        .in_a_first(a_first),
        .in_a_last(a_last),
        .in_a_tag(a_tag),
        .in_w_vld(w_vld),
        .in_w_v(w_v),
        .mux_vld(m_vld),
        .mux_c(m_c),
        .mux_acc(m_acc),
        .mux_tag(m_tag),
        .mux_err(m_err),
        .dbg(dbg_pe)
    );
    assign mux_emit = m_vld;
    assign mux_err = |m_err;
    assign dbg_mux_vld = m_vld;
    assign dbg_mux_c = m_c;
    assign dbg_mux_acc = m_acc;
    assign dbg_mux_tag = m_tag;

    wire [NM-1:0] s_vld;
    wire [8*NM-1:0] s_q;
    wire [CGW*NM-1:0] s_c;
    wire [TW*NM-1:0] s_tag;
    genvar m;
    generate
        for (m = 0; m < NM; m = m + 1) begin : g_rq
            // the MUX's column within its bank, made an array column
            localparam integer C0I = (m % BC) * NC;
            localparam [CGW-1:0] C0 = C0I[CGW-1:0];
            wire [CGW-1:0] c_glob = C0 + {{(CGW - CW) {1'b0}}, m_c[CW*m+:CW]};
            requant #(
                .ACC_W(ACC_W),
                .TW(TW),
                .CGW(CGW),
                .MB(MB),
                .IW(IW),
                .OW(OW),
                .RQ(RQ)
            ) u_rq (
                .clk(clk),
                .rst(rst),
                .in_vld(m_vld[m]),
                .in_c(c_glob),
                .in_acc(m_acc[ACC_W*m+:ACC_W]),
                .in_tag(m_tag[TW*m+:TW]),
                .cfg_tag(rq_cfg_tag[TW*m+:TW]),
                .cfg_instr(rq_cfg_instr[IW*m+:IW]),
                .cfg_og0(rq_cfg_og0[OW*m+:OW]),
                .cfg_zp(rq_cfg_zp[8*m+:8]),
                .cfg_lo(rq_cfg_lo[8*m+:8]),
                .cfg_hi(rq_cfg_hi[8*m+:8]),
                .prm_instr(prm_instr[IW*m+:IW]),
                .prm_ch(prm_ch[OW*m+:OW]),
                .prm_bias(prm_bias[32*m+:32]),
                .prm_m(prm_m[MB*m+:MB]),
                .prm_s(prm_s[6*m+:6]),
                .out_vld(s_vld[m]),
                .out_q(s_q[8*m+:8]),
                .out_c(s_c[CGW*m+:CGW]),
                .out_tag(s_tag[TW*m+:TW]),
                .dbg(dbg_rq[RQS*SW*m+:RQS*SW])
            );
        end
    endgenerate

    sync_shape #(
        .R(R),
        .BC(BC),
        .NC(NC),
        .TW(TW),
        .CGW(CGW),
        .AW(AW),
        .WB(WB),
        .LBW(LBW)
    ) u_shape (
        .clk(clk),
        .in_vld(s_vld),
        .in_q(s_q),
        .in_c(s_c),
        .in_tag(s_tag),
        .cfg_tag(sh_cfg_tag),
        .cfg_lane0(sh_cfg_lane0),
        .cfg_addr0(sh_cfg_addr0),
        .cfg_wpp(sh_cfg_wpp),
        .cfg_cols(sh_cfg_cols),
        .wr_en(wr_en),
        .wr_addr(wr_addr),
        .wr_be(wr_be),
        .wr_data(wr_data)
    );

    // ActRdy: cycles until the MUXes are through with the last unit issued
    // (its K steps, then min(columns, NC) results per MUX), counted from
    // the cycle after its issue
    localparam integer NCI = NC;
    localparam [CGW-1:0] NCG = NCI[CGW-1:0];
    reg [KW:0] mux_left;
    wire [CGW-1:0] mcols = iss_cols < NCG ? iss_cols : NCG;
    always @(posedge clk) begin
        if (rst) mux_left <= {(KW + 1) {1'b0}};
        else if (iss_vld) mux_left <= {1'b0, iss_k} + {{(KW + 1 - CGW) {1'b0}}, mcols} - 1'b1;
        else if (mux_left != {(KW + 1) {1'b0}}) mux_left <= mux_left - 1'b1;
    end
    assign act_rdy = {1'b0, req_k} >= mux_left;
endmodule
